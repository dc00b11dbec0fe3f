"""`companion export`: the whole game of a data directory as one JSON file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from companion.errors import CompanionError
from companion.record import export_game
from companion.store import FILE_NAME, Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="write the whole game as one JSON file",
        description="Write the game of a data directory (set-up, every step, every "
        "battle with its counted picture, the automaton's decisions and "
        "die rolls, the announcements) as one versioned JSON file, for "
        "`companion import` on another companion.",
    )
    p.add_argument("--data", metavar="DIR", required=True, help="the companion's data directory")
    p.add_argument("--out", metavar="FILE", help="the file to write (default: standard output)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_existing(args.data)
    try:
        text = json.dumps(export_game(store), ensure_ascii=False)
    finally:
        store.close()
    if args.out is None:
        sys.stdout.write(text + "\n")
        return 0
    try:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    except OSError as e:
        raise CompanionError(f"{args.out}: cannot write: {e.strerror}") from None
    return 0


def open_existing(data_dir: str) -> Store:
    """The store of a data directory that has one (never a new, empty one)."""
    path = Path(data_dir) / FILE_NAME
    if not path.is_file():
        raise CompanionError(f"{data_dir}: no companion database here ({FILE_NAME})")
    return Store(path)
