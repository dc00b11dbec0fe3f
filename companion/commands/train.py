"""`companion train`: grow the counter's forest again on generated scenes."""
from __future__ import annotations

import argparse
import os

from companion.errors import CompanionError
from companion.training import TRAIN_SEED, train
from vision.split import COUNT_FOREST


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="grow the counter's forest on generated scenes",
                       description="Grows the forest that decides how many cubes of each colour a blob "
                                   "holds (vision/models/counts.npz) on generated tables, and reports its "
                                   "accuracy against the rules' on further tables.")
    p.add_argument("--setups", type=int, default=400, help="tables to learn from (default 400)")
    p.add_argument("--check", type=int, default=20, help="further tables to check on (default 20)")
    p.add_argument("--seed", type=int, default=TRAIN_SEED, help=f"first table's seed (default {TRAIN_SEED})")
    p.add_argument("--trees", type=int, default=30, help="trees (default 30)")
    p.add_argument("--depth", type=int, default=12, help="largest tree depth (default 12)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes generating scenes")
    p.add_argument("--output", default=str(COUNT_FOREST), help=f"where to save (default {COUNT_FOREST})")
    p.set_defaults(func=run)


def run(args) -> int:
    if min(args.setups, args.trees, args.depth, args.workers) < 1 or args.check < 0:
        raise CompanionError("--setups, --trees, --depth and --workers: expected at least 1; --check: at least 0")
    train(args.setups, args.check, args.seed, args.trees, args.depth, args.workers, args.output)
    return 0
