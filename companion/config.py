"""The configuration: one TOML file over documented defaults.

Every value knows where it came from (default, file, environment or command line),
so `companion config` can say why the service does what it does.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.errors import ConfigError

CONFIG_ENV = "TOWER_COMPANION_CONFIG"
DATA_ENV = "TOWER_COMPANION_DATA"


def default_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tower-companion" / "config.toml"


def default_data_dir() -> str:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return str(Path(base) / "tower-companion")


@dataclass(frozen=True)
class CameraConfig:
    # "auto" (Pi camera, else first USB camera, else simulated tray), "picamera",
    # "usb:N", "sim", or a path to a video file or a folder of images.
    source: str = "auto"
    width: int = 640
    height: int = 480
    fps: int = 15
    # Seconds without a frame before the camera counts as lost.
    timeout: float = 3.0


@dataclass(frozen=True)
class ColourConfig:
    # Colour names are whatever calibration named; these only give them roles.
    players: tuple[str, ...] = ("red", "blue", "yellow", "purple", "black")
    farmer: str = "green"


@dataclass(frozen=True)
class PanelConfig:
    # "auto": real GPIO when present, else gpiozero's MockFactory (mirrored on the page).
    mode: str = "auto"
    # BCM pin numbers, by role.
    pins: dict[str, int] = field(
        default_factory=lambda: {
            "led_ready": 5,
            "led_counting": 6,
            "led_attention": 13,
            "led_attacker_won": 19,
            "led_held": 26,
            "led_devastated": 21,
            "button_arm": 17,
            "button_confirm": 27,
            "button_recount": 22,
            "button_next": 23,
        }
    )
    # Seconds a button is held for its secondary action.
    long_press: float = 1.0


@dataclass(frozen=True)
class WebConfig:
    host: str = "127.0.0.1"
    port: int = 8080


@dataclass(frozen=True)
class SpeechConfig:
    enabled: bool = True
    voice: str = "en"
    words_per_minute: int = 160


@dataclass(frozen=True)
class GameConfig:
    map: str = "risk-europe"
    # Apply a counted battle without waiting for the table's confirmation (a doubtful count
    # still waits: see companion.service.phases.doubtful).
    auto_confirm: bool = False
    # Ask the table for die rolls instead of drawing them.
    physical_dice: bool = False
    # Show a declared battle's odds (page and API); some tables play without. The automaton
    # never uses them: its card decides.
    show_odds: bool = True


@dataclass(frozen=True)
class Config:
    camera: CameraConfig = field(default_factory=CameraConfig)
    colours: ColourConfig = field(default_factory=ColourConfig)
    panel: PanelConfig = field(default_factory=PanelConfig)
    web: WebConfig = field(default_factory=WebConfig)
    speech: SpeechConfig = field(default_factory=SpeechConfig)
    game: GameConfig = field(default_factory=GameConfig)
    data_dir: str = field(default_factory=default_data_dir)

    def to_dict(self) -> dict[str, Any]:
        return _plain(dataclasses.asdict(self))


# What each value may be, beyond its Python type; checked for file and command line alike.
_CHOICES = {
    ("panel", "mode"): ("auto", "gpio", "mock", "off"),
}
_RANGES = {
    ("camera", "width"): (16, 8192),
    ("camera", "height"): (16, 8192),
    ("camera", "fps"): (1, 120),
    ("camera", "timeout"): (0.1, 600),
    ("web", "port"): (1, 65535),
    ("speech", "words_per_minute"): (80, 450),
    ("panel", "long_press"): (0.2, 10),
}


def load_config(
    path: str | os.PathLike | None = None, overrides: dict[str, Any] | None = None
) -> tuple[Config, dict[str, str]]:
    """Return the effective configuration and, per dotted key, where its value came from.

    `path` None means $TOWER_COMPANION_CONFIG, else the user's config file if it exists.
    `overrides` are command-line values by dotted key ("web.port", "data_dir").
    """
    explicit = path is not None or CONFIG_ENV in os.environ
    file_path = Path(
        path if path is not None else os.environ.get(CONFIG_ENV, default_config_path())
    )
    raw: dict[str, Any] = {}
    if file_path.exists():
        raw = _read_toml(file_path)
    elif explicit:
        raise ConfigError(f"{file_path}: no such configuration file")

    sources = {key: "default" for key in _dotted_keys(Config())}
    values: dict[str, Any] = {}
    for key, value in _flatten(raw, file_path).items():
        values[key] = value
        sources[key] = f"file {file_path}"
    if DATA_ENV in os.environ and (overrides or {}).get("data_dir") is None:
        values["data_dir"] = os.environ[DATA_ENV]
        sources["data_dir"] = f"environment {DATA_ENV}"
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key not in sources:
            raise ConfigError(f"unknown configuration key {key!r}")
        values[key] = value
        sources[key] = "command line"
    origins = {key: source.removeprefix("file ") for key, source in sources.items()}
    return _build(values, origins, file_path), sources


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None


def _dotted_keys(config: Config) -> list[str]:
    keys = []
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value):
            keys += [f"{f.name}.{g.name}" for g in dataclasses.fields(value)]
        else:
            keys.append(f.name)
    return keys


def _flatten(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    sections = {f.name for f in dataclasses.fields(Config)}
    flat = {}
    for name, value in raw.items():
        if name not in sections:
            raise ConfigError(
                f"{path}: unknown key {name!r} (known: {', '.join(sorted(sections))})"
            )
        if name == "data_dir":
            flat[name] = value
            continue
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: [{name}] must be a table of settings")
        for key, item in value.items():
            flat[f"{name}.{key}"] = item
    return flat


def _build(values: dict[str, Any], origins: dict[str, str], path: Path) -> Config:
    """`origins` names where each value came from (the file, the command line...) for errors."""
    base = Config()
    sections: dict[str, dict[str, Any]] = {}
    for dotted, value in values.items():
        origin = origins.get(dotted, str(path))
        if dotted == "data_dir":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{origin}: data_dir: expected a folder path, got {value!r}")
            continue
        section, key = dotted.split(".", 1)
        default_section = getattr(base, section)
        known = {f.name: f for f in dataclasses.fields(default_section)}
        if key not in known:
            raise ConfigError(
                f"{path}: [{section}] unknown key {key!r} (known: {', '.join(sorted(known))})"
            )
        sections.setdefault(section, {})[key] = _check(
            section, key, value, getattr(default_section, key), origin
        )
    kwargs: dict[str, Any] = {
        name: dataclasses.replace(getattr(base, name), **items) for name, items in sections.items()
    }
    if "data_dir" in values:
        kwargs["data_dir"] = str(Path(values["data_dir"]).expanduser())
    config = dataclasses.replace(base, **kwargs)
    _check_colours(config.colours, path)
    return config


def _check(section: str, key: str, value: Any, default: Any, origin: str) -> Any:
    where = f"{origin}: [{section}] {key}"
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
    elif isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected a whole number, got {value!r}")
    elif isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        value = float(value)
    elif isinstance(default, str):
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}: expected a non-empty text, got {value!r}")
    elif isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{where}: expected a list of names, got {value!r}")
        value = tuple(v.strip().lower() for v in value)
    elif isinstance(default, dict):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a table of role = pin, got {value!r}")
        unknown = sorted(set(value) - set(default))
        if unknown:
            raise ConfigError(
                f"{where}: unknown role {unknown[0]!r} (known: {', '.join(sorted(default))})"
            )
        for role, pin in value.items():
            if isinstance(pin, bool) or not isinstance(pin, int):
                raise ConfigError(f"{where}.{role}: expected a BCM pin number, got {pin!r}")
        value = {**default, **value}
    if (section, key) in _CHOICES and value not in _CHOICES[section, key]:
        raise ConfigError(
            f"{where}: expected one of {', '.join(_CHOICES[section, key])}, got {value!r}"
        )
    if (section, key) in _RANGES:
        low, high = _RANGES[section, key]
        if not low <= value <= high:
            raise ConfigError(f"{where}: expected {low} to {high}, got {value!r}")
    if isinstance(value, str) and section == "colours":
        value = value.strip().lower()
    return value


def _check_colours(colours: ColourConfig, path: Path) -> None:
    if len(set(colours.players)) != len(colours.players):
        raise ConfigError(
            f"{path}: [colours] players: a colour is named twice: {list(colours.players)}"
        )
    if colours.farmer in colours.players:
        raise ConfigError(f"{path}: [colours] farmer: {colours.farmer!r} is also a player colour")
    if len(colours.players) < 2:
        raise ConfigError(f"{path}: [colours] players: at least two player colours are needed")


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
