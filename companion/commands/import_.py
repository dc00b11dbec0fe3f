"""`companion import`: continue a game exported by `companion export` in a data directory."""

from __future__ import annotations

import argparse

from companion.commands.common import read_json
from companion.record import check, import_game
from companion.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import",
        help="continue a game from an exported JSON file",
        description="Replace the game of a data directory with an exported one "
        "(every step, battle, announcement and open turn), to continue "
        "it where it stood. Stop the service of that data directory "
        "first, or import on the Game page.",
    )
    p.add_argument("file", metavar="FILE", help="the exported game (- for standard input)")
    p.add_argument("--data", metavar="DIR", required=True, help="the companion's data directory")
    p.add_argument(
        "--force", action="store_true", help="replace a game in progress there (otherwise refused)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Checked before the data directory is opened: a wrong file changes nothing there.
    rows = check(read_json(args.file))
    store = Store.in_dir(args.data)
    try:
        import_game(store, rows, force=args.force)
    finally:
        store.close()
    print(
        f"Imported {len(rows['steps'])} steps and {len(rows['battles'])} battles into {args.data}."
    )
    return 0
