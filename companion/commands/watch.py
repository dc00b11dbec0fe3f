"""`companion watch`: print one line per settled tray state of a video, folder or camera. PLACEHOLDER until its issue lands."""
from __future__ import annotations

import argparse

from companion.errors import CompanionError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("watch", help="print one line per settled tray state of a video, folder or camera")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise CompanionError("not built yet")
