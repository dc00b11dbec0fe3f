"""`companion panel-test`: light each LED in turn, then report each button press.

A self-test for the person who just soldered the panel: every LED should light when named,
and every button should be reported when pressed (short, and long for its second action).
"""

from __future__ import annotations

import argparse
import queue
import threading
import time

from companion.commands.common import add_config_option, load
from companion.errors import CompanionError
from companion.output import print_json
from firmware.panel import BUTTONS, COMMANDS, LEDS, Panel, make_panel


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "panel-test",
        help="light each LED in turn and report button presses",
        description="Light each LED of the panel in turn, then report every button "
        "press until each button was pressed short and long, or the time "
        "is up. Exits 1 if a button was never pressed.",
    )
    add_config_option(p)
    p.add_argument(
        "--mock",
        action="store_true",
        help="use gpiozero's MockFactory and press every button by script (no hardware)",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        metavar="N",
        help="how long to wait for button presses (default 60)",
    )
    p.add_argument(
        "--step",
        type=float,
        default=0.7,
        metavar="S",
        help="how long each LED stays lit (default 0.7)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per event")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.seconds < 0 or args.step < 0:
        raise CompanionError("--seconds and --step must not be negative")
    config, _ = load(args)
    pins, long_press = config.panel.pins, config.panel.long_press
    panel = (
        Panel(pins, long_press, mode="mock")
        if args.mock
        else make_panel(config.panel.mode, pins, long_press)
    )
    say = print_json if args.json else (lambda event: print(_text(event), flush=True))
    try:
        say({"panel": panel.mode, "long_press": long_press})
        light_each(panel, args.step, say)
        seen = watch_buttons(panel, args.seconds, say, script=args.mock)
    finally:
        panel.close()
    missing = [name for name in BUTTONS if f"button_{name}" in panel.pins and name not in seen]
    say({"done": True, "pressed": sorted(seen), "not_pressed": missing})
    return 1 if missing else 0


def light_each(panel: Panel, step: float, say) -> None:
    for name in LEDS:
        if f"led_{name}" not in panel.pins:
            continue
        panel.set_led(name, "on")
        say({"led": name, "pin": panel.pins[f"led_{name}"], "lit": panel.leds()[name]})
        time.sleep(step)
        panel.set_led(name, "off")


def watch_buttons(panel: Panel, seconds: float, say, script: bool) -> dict[str, set[bool]]:
    """Report presses until every button was pressed short and long, or `seconds` pass."""
    presses: queue.Queue = queue.Queue()
    panel.when_button = lambda name, long: presses.put((name, long))
    wanted = {name for name in BUTTONS if f"button_{name}" in panel.pins}
    say({"waiting": seconds, "buttons": sorted(wanted)})
    if script:
        # Through the mock pins, as fingers would: each button short, then long.
        threading.Thread(target=_press_all, args=(panel, sorted(wanted)), daemon=True).start()
    seen: dict[str, set[bool]] = {}
    deadline = time.monotonic() + seconds
    while any(seen.get(name) != {False, True} for name in wanted):
        try:
            name, long = presses.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        seen.setdefault(name, set()).add(long)
        say(
            {
                "button": name,
                "pin": panel.pins[f"button_{name}"],
                "long": long,
                "command": COMMANDS[name, long],
            }
        )
    return seen


def _press_all(panel: Panel, names: list[str]) -> None:
    for name in names:
        panel.press(name)
        panel.press(name, long=True)


def _text(event: dict) -> str:
    if "panel" in event:
        return f"panel on {event['panel']}; long press = {event['long_press']:g} s"
    if "led" in event:
        return f"LED {event['led']} (BCM {event['pin']}): {'lit' if event['lit'] else 'NOT LIT'}"
    if "waiting" in event:
        return (
            f"press each button ({', '.join(event['buttons'])}), short and long; "
            f"waiting up to {event['waiting']:g} s"
        )
    if "button" in event:
        return (
            f"button {event['button']} (BCM {event['pin']}): "
            f"{'long' if event['long'] else 'short'} press -> {event['command']}"
        )
    if event["not_pressed"]:
        return f"not pressed: {', '.join(event['not_pressed'])}"
    return "all buttons pressed"
