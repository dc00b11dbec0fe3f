"""`companion bench`: measure speed and accuracy on this machine. PLACEHOLDER until its issue lands."""
from __future__ import annotations

import argparse

from companion.errors import CompanionError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="measure speed and accuracy on this machine")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise CompanionError("not built yet")
