"""The LED/button panel: gpiozero LEDs and Buttons on BCM pins, or the same on a MockFactory.

Where there is no GPIO (a laptop, a Pi without the panel in "mock" mode) the panel runs on
gpiozero's MockFactory, so the web page can mirror the LEDs and press the buttons.

Buttons: a short press gives the primary command, holding for `long_press` seconds the
secondary one (fired when the hold time is reached, so the table feels it happen):

    button   short press  long press
    arm      arm          cancel     say again what to throw for the declared battle / cancel it
    confirm  confirm      repeat     confirm the count and outcome / say the last announcement again
    recount  recount      undo       count the tray again / undo the last confirmed step
    next     next         skip       next automaton step / end the automaton's turn

LEDs: ready, counting, attention (status) and attacker_won, held, devastated (outcome).
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable, Mapping

from firmware.errors import FirmwareError

log = logging.getLogger(__name__)

LEDS = ("ready", "counting", "attention", "attacker_won", "held", "devastated")
BUTTONS = ("arm", "confirm", "recount", "next")
ROLES = tuple(f"led_{name}" for name in LEDS) + tuple(f"button_{name}" for name in BUTTONS)
# (button, long press) -> command the service acts on.
COMMANDS = {
    ("arm", False): "arm",
    ("arm", True): "cancel",
    ("confirm", False): "confirm",
    ("confirm", True): "repeat",
    ("recount", False): "recount",
    ("recount", True): "undo",
    ("next", False): "next",
    ("next", True): "skip",
}
# BCM numbers of the GPIOs on the Pi's 40-pin header (0 and 1 are the HAT EEPROM's I2C).
USABLE_PINS = range(2, 28)
OUTCOMES = ("attacker_won", "held", "devastated")

# What the status LEDs do in each phase of the table service: "on", "off", "blink" (slow,
# waiting for the table) or "fast" (something is wrong).
PHASES: dict[str, dict[str, str]] = {
    "idle": {"ready": "on", "counting": "off", "attention": "off"},
    "armed": {"ready": "blink", "counting": "off", "attention": "off"},
    "counting": {"ready": "off", "counting": "blink", "attention": "off"},
    "result": {"ready": "off", "counting": "on", "attention": "off"},
    "attention": {"ready": "off", "counting": "off", "attention": "blink"},
    "camera_lost": {"ready": "off", "counting": "off", "attention": "fast"},
    "off": {"ready": "off", "counting": "off", "attention": "off"},
}
BLINK = {"blink": (0.5, 0.5), "fast": (0.1, 0.1)}

ButtonCallback = Callable[[str, bool], None]
CommandCallback = Callable[[str], None]


def validate_pins(pins: Mapping[str, object]) -> dict[str, int]:
    """Check a role -> BCM pin map; raise FirmwareError naming every wrong role and pin.

    Roles may be left out (not wired); unknown roles, non-numbers, pins that are not a GPIO
    on the 40-pin header, and pins used twice are errors.
    """
    problems = []
    unknown = sorted(set(pins) - set(ROLES))
    if unknown:
        problems.append(f"unknown role {', '.join(map(repr, unknown))} (known: {', '.join(ROLES)})")
    by_pin: dict[int, list[str]] = {}
    for role, pin in pins.items():
        if role in unknown:
            continue
        if isinstance(pin, bool) or not isinstance(pin, int):
            problems.append(f"{role}: {pin!r} is not a BCM pin number")
        elif pin not in USABLE_PINS:
            problems.append(f"{role}: BCM {pin} is not a GPIO on the 40-pin header (use 2 to 27)")
        else:
            by_pin.setdefault(pin, []).append(role)
    for pin, roles in sorted(by_pin.items()):
        if len(roles) > 1:
            problems.append(f"BCM {pin} is given to {' and '.join(roles)}")
    if problems:
        raise FirmwareError("panel pins: " + "; ".join(problems))
    return {role: int(pin) for role, pin in pins.items()}


def gpio_factory():
    """gpiozero's default pin factory for this machine, or None where there is no GPIO."""
    from gpiozero import Device
    from gpiozero.exc import BadPinFactory

    try:
        with warnings.catch_warnings():
            # gpiozero warns once per factory it could not load; the result says it all.
            warnings.simplefilter("ignore")
            Device.ensure_pin_factory()
    except BadPinFactory:
        return None
    return Device.pin_factory


def make_panel(mode: str, pins: Mapping[str, int], long_press: float = 1.0) -> Panel:
    """The panel for a configuration's [panel] mode.

    "gpio": real pins (error where there are none); "mock": gpiozero's MockFactory;
    "auto": real pins when present, else the mock; "off": a mock panel marked off (nothing
    touches GPIO; the page need not show it).
    """
    from gpiozero.pins.mock import MockFactory

    if mode not in ("auto", "gpio", "mock", "off"):
        raise FirmwareError(f"panel mode {mode!r}: expected auto, gpio, mock or off")
    factory = gpio_factory() if mode in ("auto", "gpio") else None
    if factory is None:
        if mode == "gpio":
            raise FirmwareError(
                "panel mode gpio: this machine has no usable GPIO (on a Pi: install "
                "python3-lgpio and add the user to the gpio group)"
            )
        if mode == "auto":
            log.info("panel: no GPIO on this machine; running on gpiozero's MockFactory")
        return Panel(pins, long_press, MockFactory(), mode="off" if mode == "off" else "mock")
    return Panel(pins, long_press, factory, mode="gpio")


class Panel:
    def __init__(
        self, pins: Mapping[str, int], long_press: float = 1.0, pin_factory=None, mode: str = "mock"
    ) -> None:
        from gpiozero import LED, Button
        from gpiozero.pins.mock import MockFactory

        self.pins = validate_pins(pins)
        self.long_press = long_press
        self.factory = pin_factory if pin_factory is not None else MockFactory()
        self.mock = isinstance(self.factory, MockFactory)
        self.mode = mode
        self.when_button: ButtonCallback | None = None
        self.when_command: CommandCallback | None = None
        self.phase = "off"
        self.outcome: str | None = None
        self._modes = {name: "off" for name in LEDS}
        self._held: set[str] = set()
        self._hold_seen = {name: threading.Event() for name in BUTTONS}
        self._leds = {}
        self._buttons = {}
        try:
            for name in LEDS:
                if f"led_{name}" in self.pins:
                    self._leds[name] = LED(self.pins[f"led_{name}"], pin_factory=self.factory)
            for name in BUTTONS:
                if f"button_{name}" in self.pins:
                    button = Button(
                        self.pins[f"button_{name}"],
                        pull_up=True,
                        bounce_time=None,
                        hold_time=long_press,
                        pin_factory=self.factory,
                    )
                    button.when_held = lambda name=name: self._on_held(name)
                    button.when_released = lambda name=name: self._on_released(name)
                    self._buttons[name] = button
        except Exception as e:  # a pin in use by another program, no permission...
            self.close()
            raise FirmwareError(f"panel: cannot set up the pins: {e}") from None

    # --- buttons -------------------------------------------------------------

    def _on_held(self, name: str) -> None:
        self._held.add(name)
        self._hold_seen[name].set()
        self._emit(name, True)

    def _on_released(self, name: str) -> None:
        if name in self._held:  # the long press already fired at the hold time
            self._held.discard(name)
            return
        self._emit(name, False)

    def _emit(self, name: str, long: bool) -> None:
        log.info("panel: %s %s press", name, "long" if long else "short")
        # Runs on gpiozero's event thread: an error in a callback must not kill the panel.
        for callback, args in (
            (self.when_button, (name, long)),
            (self.when_command, (COMMANDS[name, long],)),
        ):
            if callback is None:
                continue
            try:
                callback(*args)
            except Exception:
                log.exception("panel: the %s button's callback failed", name)

    def press(self, name: str, long: bool = False) -> None:
        """Press a button from software (the page's virtual panel, tests).

        On the mock panel this drives the button's pin low and high again, so it goes
        through gpiozero exactly like a finger (a long press holds for `long_press` s);
        on real GPIO the input pin cannot be driven, so the press is emitted directly.
        """
        if name not in BUTTONS:
            raise FirmwareError(f"panel: no button {name!r} (buttons: {', '.join(BUTTONS)})")
        if name not in self._buttons:
            raise FirmwareError(f"panel: button {name!r} has no pin configured")
        if not self.mock:
            self._emit(name, long)
            return
        pin = self._buttons[name].pin
        self._hold_seen[name].clear()
        pin.drive_low()
        if long and not self._hold_seen[name].wait(self.long_press + 2.0):
            log.warning("panel: the hold of %s was not seen", name)
        pin.drive_high()

    # --- LEDs ----------------------------------------------------------------

    def set_led(self, name: str, mode: str) -> None:
        """Set one LED to "on", "off", "blink" or "fast" (show_phase/show_outcome do this by
        role)."""
        if name not in LEDS:
            raise FirmwareError(f"panel: no LED {name!r} (LEDs: {', '.join(LEDS)})")
        if mode not in ("on", "off", *BLINK):
            raise ValueError(f"LED mode {mode!r}: expected on, off, blink or fast")
        self._modes[name] = mode
        led = self._leds.get(name)
        if led is None:
            return
        if mode == "on":
            led.on()
        elif mode == "off":
            led.off()
        else:
            on_time, off_time = BLINK[mode]
            led.blink(on_time=on_time, off_time=off_time)

    def show_phase(self, phase: str) -> None:
        """Light the status LEDs for a phase of the service (see PHASES)."""
        if phase not in PHASES:
            raise ValueError(f"unknown panel phase {phase!r} (known: {', '.join(PHASES)})")
        self.phase = phase
        for name, mode in PHASES[phase].items():
            if self._modes[name] != mode:
                self.set_led(name, mode)

    def show_outcome(self, outcome: str | None) -> None:
        """Light the one outcome LED of a battle result; None clears them."""
        if outcome is not None and outcome not in OUTCOMES:
            raise ValueError(f"unknown battle outcome {outcome!r} (known: {', '.join(OUTCOMES)})")
        self.outcome = outcome
        for name in OUTCOMES:
            self.set_led(name, "on" if name == outcome else "off")

    def leds(self) -> dict[str, bool]:
        """Which LEDs are lit right now (a blinking one alternates)."""
        return {
            name: bool(self._leds[name].is_lit) if name in self._leds else False for name in LEDS
        }

    def led_modes(self) -> dict[str, str]:
        """What each LED is doing: "on", "off", "blink" or "fast" (for the page to animate)."""
        return dict(self._modes)

    def close(self) -> None:
        for device in [*self._leds.values(), *self._buttons.values()]:
            device.close()
        self._leds.clear()
        self._buttons.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
