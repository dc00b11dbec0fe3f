"""`companion automaton`: let an automaton decide one order on a game state. PLACEHOLDER until its issue lands."""
from __future__ import annotations

import argparse

from companion.errors import CompanionError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("automaton", help="let an automaton decide one order on a game state")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise CompanionError("not built yet")
