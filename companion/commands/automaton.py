"""`companion automaton`: let an automaton decide one order on a game state."""

from __future__ import annotations

import argparse

from companion.output import print_json
from companion.rules.actions import colour_name
from companion.rules.automaton import decide
from companion.rules.deck import ORDERS
from companion.rules.dice import Dice
from companion.rules.state import load_state


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "automaton",
        help="let an automaton decide one order on a game state",
        description="Read a game state file, let the automaton of COLOUR carry out "
        "ORDER, and print what it does: the sentence for the table, or "
        "one JSON object per action with --json.",
    )
    p.add_argument("--state", required=True, metavar="FILE", help="game state (JSON)")
    p.add_argument("--player", required=True, metavar="COLOUR", help="the automaton's colour")
    p.add_argument(
        "--order",
        required=True,
        choices=ORDERS,
        metavar="ORDER",
        help="one of: " + ", ".join(ORDERS),
    )
    p.add_argument("--seed", type=int, help="seed for the die rolls (default: unpredictable)")
    p.add_argument("--map", metavar="FILE", help="map file (default: the state's map)")
    p.add_argument("--json", action="store_true", help="one JSON object per action")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    state = load_state(args.state, args.map)
    colour = args.player.strip().lower()
    actions = decide(state, colour, args.order, Dice(args.seed))
    lines = [a.to_dict() for a in actions] or [
        {
            "action": "none",
            "player": colour,
            "order": args.order,
            "text": f"{colour_name(colour)} can do nothing with {args.order}: draw another card.",
        }
    ]
    for line in lines:
        if args.json:
            print_json(line)
        else:
            print(line["text"])
    return 0
