"""`companion battle`: resolve one tower battle from JSON and print the outcome as one JSON line."""

from __future__ import annotations

import argparse

from companion.commands.common import add_config_option, load, read_json
from companion.output import print_json
from companion.rules.battle import battle_from_dict, resolve


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "battle",
        help="resolve one tower battle from JSON",
        description="Read one battle as JSON (attacker, defender or null for an empty province, "
        "thrown, emerged, cup, revolt_markers, farmer, pending_action) and print its "
        "outcome as one JSON line. The farmer colour defaults to colours.farmer.",
    )
    p.add_argument(
        "--json",
        required=True,
        metavar="FILE",
        dest="source",
        help="the battle as a JSON file, or - for standard input",
    )
    add_config_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config, _ = load(args)
    obj = read_json(args.source)
    print_json(resolve(battle_from_dict(obj, config.colours.farmer)).to_dict())
    return 0
