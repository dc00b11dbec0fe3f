"""`companion serve`: run the table service (camera, counting, rules, web page, panel, speech). PLACEHOLDER until its issue lands."""
from __future__ import annotations

import argparse

from companion.errors import CompanionError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the table service (camera, counting, rules, web page, panel, speech)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise CompanionError("not built yet")
