"""The panel on gpiozero's own MockFactory: pins, presses, LEDs."""

from __future__ import annotations

import time

import pytest
from gpiozero.pins.mock import MockFactory

from companion.config import PanelConfig
from firmware.errors import FirmwareError
from firmware.panel import BUTTONS, COMMANDS, LEDS, Panel, make_panel, validate_pins

PINS = PanelConfig().pins


@pytest.fixture
def panel():
    factory = MockFactory()
    with Panel(PINS, long_press=0.2, pin_factory=factory) as panel:
        panel.events = []
        panel.commands = []
        panel.when_button = lambda name, long: panel.events.append((name, long))
        panel.when_command = panel.commands.append
        yield panel


def test_default_pins_are_valid():
    assert validate_pins(PINS) == PINS


@pytest.mark.parametrize(
    "pins, message",
    [
        ({**PINS, "button_arm": 5}, "BCM 5 is given to led_ready and button_arm"),
        ({**PINS, "led_held": 28}, "led_held: BCM 28 is not a GPIO on the 40-pin header"),
        ({**PINS, "led_held": 1}, "led_held: BCM 1 is not a GPIO"),
        ({**PINS, "led_blue": 4}, "unknown role 'led_blue'"),
        ({**PINS, "button_next": "23"}, "button_next: '23' is not a BCM pin number"),
    ],
)
def test_bad_pins_are_named(pins, message):
    with pytest.raises(FirmwareError, match=message):
        validate_pins(pins)
    with pytest.raises(FirmwareError, match=message):
        make_panel("mock", pins)


def test_all_problems_in_one_line():
    with pytest.raises(FirmwareError) as error:
        validate_pins({**PINS, "led_held": 40, "button_arm": 6, "button_next": 6})
    text = str(error.value)
    assert "\n" not in text
    assert (
        "BCM 40" in text and "BCM 6 is given to led_counting and button_arm and button_next" in text
    )


def test_real_pin_drives_a_short_press_to_the_callback(panel):
    pin = panel.factory.pin(PINS["button_confirm"])
    pin.drive_low()
    pin.drive_high()
    assert panel.events == [("confirm", False)]
    assert panel.commands == ["confirm"]


def wait_for(condition, seconds=3.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_holding_gives_the_long_press_once(panel):
    pin = panel.factory.pin(PINS["button_recount"])
    start = time.monotonic()
    pin.drive_low()
    wait_for(lambda: panel.events)
    assert time.monotonic() - start >= 0.2  # not before the hold time
    assert panel.events == [("recount", True)]  # fired while still held, before release
    pin.drive_high()
    assert panel.events == [("recount", True)]  # releasing adds no short press
    assert panel.commands == ["undo"]


@pytest.mark.parametrize("name", BUTTONS)
def test_each_button_emits_its_commands(panel, name):
    panel.press(name)
    panel.press(name, long=True)
    assert panel.events == [(name, False), (name, True)]
    assert panel.commands == [COMMANDS[name, False], COMMANDS[name, True]]


def test_press_unknown_button(panel):
    with pytest.raises(FirmwareError, match="no button 'start'"):
        panel.press("start")


def test_a_failing_callback_does_not_break_the_panel(panel, caplog):
    panel.when_button = lambda name, long: 1 / 0
    panel.press("next")
    assert "callback failed" in caplog.text
    assert panel.commands == ["next"]


def test_leds_follow_the_phase_and_outcome(panel):
    leds = {name: panel.factory.pin(PINS[f"led_{name}"]) for name in LEDS}
    panel.show_phase("idle")
    assert panel.leds() == {
        "ready": True,
        "counting": False,
        "attention": False,
        "attacker_won": False,
        "held": False,
        "devastated": False,
    }
    assert leds["ready"].state is True
    panel.show_phase("result")
    panel.show_outcome("held")
    assert {n for n, lit in panel.leds().items() if lit} == {"counting", "held"}
    assert leds["held"].state and not leds["devastated"].state
    panel.show_outcome("devastated")
    assert {n for n, lit in panel.leds().items() if lit} == {"counting", "devastated"}
    panel.show_outcome(None)
    panel.show_phase("off")
    assert not any(panel.leds().values())
    with pytest.raises(ValueError, match="unknown panel phase 'dancing'"):
        panel.show_phase("dancing")


def intervals(pin, changes):
    """Seconds between the pin's next `changes` state changes (a MockPin stamps each state
    with the time since the previous one; the first is partial and skipped)."""
    pin.clear_states()
    wait_for(lambda: len(pin.states) > changes)
    return [state.timestamp for state in pin.states[2 : changes + 1]]


def test_blink_patterns_toggle_the_pin(panel):
    attention = panel.factory.pin(PINS["led_attention"])
    panel.show_phase("camera_lost")
    assert panel.led_modes()["attention"] == "fast"
    fast = intervals(attention, 4)
    assert all(0.05 <= t < 0.3 for t in fast)  # 0.1 s on, 0.1 s off
    panel.show_phase("attention")
    assert panel.led_modes()["attention"] == "blink"
    slow = intervals(attention, 3)
    assert all(0.4 <= t < 0.9 for t in slow)  # 0.5 s on, 0.5 s off
    panel.show_phase("idle")
    assert panel.led_modes() == {
        "ready": "on",
        "counting": "off",
        "attention": "off",
        "attacker_won": "off",
        "held": "off",
        "devastated": "off",
    }
    assert attention.state is False


def test_auto_falls_back_to_the_mock_factory_here():
    with make_panel("auto", PINS, long_press=0.2) as panel:
        assert panel.mock and panel.mode == "mock"
        seen = []
        panel.when_command = seen.append
        panel.press("arm", long=True)
        assert seen == ["cancel"]
    with pytest.raises(FirmwareError, match="panel mode gpio: this machine has no usable GPIO"):
        make_panel("gpio", PINS)


def test_unwired_roles_are_allowed():
    pins = {role: pin for role, pin in PINS.items() if role != "led_devastated"}
    with Panel(pins, pin_factory=MockFactory()) as panel:
        panel.show_outcome("devastated")
        assert panel.leds()["devastated"] is False
        assert panel.led_modes()["devastated"] == "on"
