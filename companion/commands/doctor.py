"""`companion doctor`: check camera, panel, calibration and configuration. PLACEHOLDER until its issue lands."""
from __future__ import annotations

import argparse

from companion.errors import CompanionError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check camera, panel, calibration and configuration")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise CompanionError("not built yet")
