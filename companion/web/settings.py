"""The Settings page (`/settings`): camera, colours and roles, panel pins, speech, odds, the PIN,
and a virtual panel (the LEDs mirrored, the buttons pressable) when there is no hardware.

Settings are written to the configuration file the service reads (its `--config` file, else
the user's default one) after `load_config` has accepted them, so the page can never save a
file the service would refuse. They apply at the next start; muting speech applies at once.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from flask import Blueprint, current_app, jsonify, render_template, request

from companion.config import CONFIG_ENV, Config, default_config_path, load_config
from companion.errors import CompanionError, ConfigError
from companion.web import service
from companion.web.pages_api import app_config
from companion.web.security import PinError, client_address, security
from firmware.errors import FirmwareError
from firmware.panel import BUTTONS, COMMANDS, validate_pins

bp = Blueprint("settings", __name__, url_prefix="/settings")

CONFIG_PATH_KEY = "COMPANION_CONFIG_PATH"  # set by create_app's caller when --config was given


class SettingsError(CompanionError):
    """A setting from the form is not acceptable; the message names the field."""


def config_path() -> Path:
    """The file the service read its settings from: `--config`, else as load_config finds it."""
    return Path(
        current_app.config.get(CONFIG_PATH_KEY)
        or os.environ.get(CONFIG_ENV)
        or default_config_path()
    )


def _values(config: Config) -> dict[str, Any]:
    """The form's values, as text, from a configuration."""
    return {
        "camera.source": config.camera.source,
        "camera.width": config.camera.width,
        "camera.height": config.camera.height,
        "camera.fps": config.camera.fps,
        "colours.players": ", ".join(config.colours.players),
        "colours.farmer": config.colours.farmer,
        "panel.mode": config.panel.mode,
        "panel.long_press": config.panel.long_press,
        **{f"panel.pins.{role}": pin for role, pin in config.panel.pins.items()},
        "speech.enabled": config.speech.enabled,
        "speech.voice": config.speech.voice,
        "speech.words_per_minute": config.speech.words_per_minute,
        "game.show_odds": config.game.show_odds,
    }


def _render(
    values: dict[str, Any],
    message: str | None = None,
    error: str | None = None,
    pin_message: str | None = None,
    pin_error: str | None = None,
    status: int = 200,
):
    svc = service()
    panel = getattr(svc, "panel", None)
    config = app_config()
    # The virtual panel stands in for a mock panel; on real GPIO the physical buttons are the panel.
    virtual = panel is not None and panel.mock and panel.mode != "off"
    return render_template(
        "settings.html",
        v=values,
        roles=list(config.panel.pins),
        message=message,
        error=error,
        pin_message=pin_message,
        pin_error=pin_error,
        path=str(config_path()),
        panel_modes=("auto", "gpio", "mock", "off"),
        virtual=virtual,
        buttons=[(b, COMMANDS[b, False], COMMANDS[b, True]) for b in BUTTONS],
        speech=svc.speech_state() if svc is not None else None,
    ), status


@bp.get("")
def index():
    return _render(_values(app_config()))


def _whole(form, key: str, label: str) -> int:
    raw = form.get(key, "").strip()
    try:
        return int(raw)
    except ValueError:
        raise SettingsError(f"{label}: expected a whole number, got {raw!r}") from None


def _number(form, key: str, label: str) -> float:
    raw = form.get(key, "").strip()
    try:
        return float(raw)
    except ValueError:
        raise SettingsError(f"{label}: expected a number, got {raw!r}") from None


def _sections(form, config: Config) -> dict[str, dict[str, Any]]:
    """The form as configuration sections (types checked here, ranges by load_config)."""
    players = [c.strip().lower() for c in form.get("colours.players", "").split(",") if c.strip()]
    pins = {
        role: _whole(form, f"panel.pins.{role}", f"pin for {role.replace('_', ' ')}")
        for role in config.panel.pins
    }
    return {
        "camera": {
            "source": form.get("camera.source", "").strip(),
            "width": _whole(form, "camera.width", "camera width"),
            "height": _whole(form, "camera.height", "camera height"),
            "fps": _whole(form, "camera.fps", "frames per second"),
        },
        "colours": {"players": players, "farmer": form.get("colours.farmer", "").strip().lower()},
        "panel": {
            "mode": form.get("panel.mode", ""),
            "long_press": _number(form, "panel.long_press", "long press"),
            "pins": pins,
        },
        "speech": {
            "enabled": form.get("speech.enabled") == "on",
            "voice": form.get("speech.voice", "").strip(),
            "words_per_minute": _whole(form, "speech.words_per_minute", "words per minute"),
        },
        "game": {"show_odds": form.get("game.show_odds") == "on"},
    }


@bp.post("")
def save():
    form = request.form
    config = app_config()
    try:
        sections = _sections(form, config)
        validate_pins(sections["panel"]["pins"])
        path = config_path()
        raw = _read(path)
        for name, values in sections.items():
            raw[name] = {**raw.get(name, {}), **values}
        _write_checked(path, raw)
    except (SettingsError, ConfigError, FirmwareError) as e:
        # Keep what was typed: nothing the table entered is lost on an error.
        typed = {
            **_values(config),
            **{k: form.get(k, "") for k in form if k != "csrf_token"},
            "speech.enabled": form.get("speech.enabled") == "on",
            "game.show_odds": form.get("game.show_odds") == "on",
        }
        return _render(typed, error=str(e).replace(str(config_path()) + ": ", ""), status=400)
    return _render(
        _values(load_config(path)[0]),
        message=f"Saved to {path}. Restart the companion to use the new settings.",
    )


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SettingsError(
            f"{path}: cannot read the configuration file ({e}); fix or remove it first"
        ) from None


def _write_checked(path: Path, raw: dict[str, Any]) -> None:
    """Write `raw` as TOML next to `path`, let load_config judge it, then put it in place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".new")
    tmp.write_text(to_toml(raw), encoding="utf-8")
    try:
        load_config(tmp)
    except ConfigError as e:
        tmp.unlink()
        raise ConfigError(str(e).replace(str(tmp), str(path))) from None
    os.replace(tmp, path)


def to_toml(raw: dict[str, Any]) -> str:
    """TOML for the configuration's shapes: top-level values, sections, one level of sub-tables."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in raw.items() if not isinstance(v, dict)]
    for name, section in raw.items():
        if not isinstance(section, dict):
            continue
        lines += ["", f"[{name}]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in section.items() if not isinstance(v, dict)]
        for sub, table in section.items():
            if isinstance(table, dict):
                lines += ["", f"[{name}.{sub}]"] + [
                    f"{k} = {_toml_value(v)}" for k, v in table.items()
                ]
    return "\n".join(lines).lstrip("\n") + "\n"


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise SettingsError(f"cannot write {v!r} to the configuration file")


@bp.post("/pin")
def change_pin():
    form = request.form
    try:
        security().change_pin(
            form.get("current", ""), form.get("new", ""), form.get("repeat", ""), client_address()
        )
    except PinError as e:
        return _render(_values(app_config()), pin_error=str(e), status=400)
    return _render(
        _values(app_config()), pin_message="PIN changed. Other phones must unlock again."
    )


@bp.get("/panel")
def panel_state():
    panel = getattr(service(), "panel", None)
    if panel is None:
        raise SettingsError("no panel: the panel is switched off in the settings")
    return jsonify(leds=panel.leds(), modes=panel.led_modes(), buttons=list(BUTTONS))


@bp.post("/panel/press")
def panel_press():
    panel = getattr(service(), "panel", None)
    if panel is None:
        raise SettingsError("no panel: the panel is switched off in the settings")
    data = request.get_json(silent=True)
    if not isinstance(data, dict) or data.get("name") not in BUTTONS:
        raise SettingsError(f"name: expected one of {', '.join(BUTTONS)}")
    long = data.get("long", False)
    if not isinstance(long, bool):
        raise SettingsError(f"long: expected true or false, got {long!r}")
    panel.press(data["name"], long=long)
    return jsonify(leds=panel.leds(), modes=panel.led_modes())
