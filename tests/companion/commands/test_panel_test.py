"""`companion panel-test`: each LED lit in turn, each button press reported."""

from __future__ import annotations

import json

import pytest

from companion.cli import main
from companion.config import PanelConfig

PINS = PanelConfig().pins


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[panel]\nlong_press = 0.2\n")
    return str(path)


def events(capsys):
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_mock_run_lights_every_led_and_reports_every_press(capsys, config):
    rc = main(
        ["panel-test", "--mock", "--json", "--config", config, "--step", "0.01", "--seconds", "20"]
    )
    out = events(capsys)
    assert rc == 0
    assert out[0] == {"panel": "mock", "long_press": 0.2}
    leds = [e for e in out if "led" in e]
    assert leds == [
        {"led": name, "pin": PINS[f"led_{name}"], "lit": True}
        for name in ("ready", "counting", "attention", "attacker_won", "held", "devastated")
    ]
    presses = [(e["button"], e["long"], e["command"]) for e in out if "button" in e]
    assert sorted(presses) == sorted(
        [
            ("arm", False, "arm"),
            ("arm", True, "cancel"),
            ("confirm", False, "confirm"),
            ("confirm", True, "repeat"),
            ("recount", False, "recount"),
            ("recount", True, "undo"),
            ("next", False, "next"),
            ("next", True, "skip"),
        ]
    )
    assert all(e["pin"] == PINS[f"button_{e['button']}"] for e in out if "button" in e)
    assert out[-1] == {
        "done": True,
        "pressed": ["arm", "confirm", "next", "recount"],
        "not_pressed": [],
    }


def test_nobody_pressing_fails_and_names_the_buttons(capsys, config):
    rc = main(["panel-test", "--json", "--config", config, "--step", "0", "--seconds", "0.1"])
    out = events(capsys)
    assert rc == 1
    assert out[0]["panel"] == "mock"  # no GPIO here: auto mode falls back to the mock
    assert out[-1] == {
        "done": True,
        "pressed": [],
        "not_pressed": ["arm", "confirm", "recount", "next"],
    }


def test_text_output_and_bad_pins(capsys, tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[panel]\nlong_press = 0.2\n[panel.pins]\nled_held = 99\n")
    assert main(["panel-test", "--mock", "--config", str(path)]) == 2
    assert (
        "panel pins: led_held: BCM 99 is not a GPIO on the 40-pin header" in capsys.readouterr().err
    )
    path.write_text("[panel]\nlong_press = 0.2\n")
    main(["panel-test", "--mock", "--config", str(path), "--step", "0", "--seconds", "20"])
    out = capsys.readouterr().out
    assert "LED held (BCM 26): lit" in out
    assert "button recount (BCM 22): long press -> undo" in out
    assert out.rstrip().endswith("all buttons pressed")
