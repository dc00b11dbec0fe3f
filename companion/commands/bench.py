"""`companion bench AREA`: measure speed and accuracy on this machine."""

from __future__ import annotations

import argparse
import importlib

AREAS = ("vision", "automaton", "odds", "service")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="measure speed and accuracy on this machine",
        description="Benchmarks that print figures: vision (count accuracy per scene "
        "kind, ms per frame, settle delay), automaton (decision time, "
        "self-play games), service (start-up time, memory).",
    )
    areas = p.add_subparsers(dest="area", metavar="AREA", required=True)
    for name in AREAS:
        module = importlib.import_module(f"companion.benchmarks.{name}")
        q = areas.add_parser(name, help=module.__doc__.strip().splitlines()[0])
        q.add_argument("--json", action="store_true", help="one JSON object per figure")
        module.add_arguments(q)
        q.set_defaults(func=module.run)
