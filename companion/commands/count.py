"""`companion count`: count the cubes in images by colour. PLACEHOLDER until its issue lands."""
from __future__ import annotations

import argparse

from companion.errors import CompanionError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("count", help="count the cubes in images by colour")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise CompanionError("not built yet")
