"""odds: the stickiness learned and the odds' calibration over self-play games with known towers.

A table plays `--games` self-play games in a row with one tower of known stickiness (keep
0.10-0.35, release 0.20-0.50, drawn from the table's seed), emptied between games; a game has
about 25 throws, and the companion learns from all the table's throws, as its store keeps them.
Every throw is fed to the estimator as the ledger knows it; the error of keep and release after
`--after` throws is reported over the tables. Every battle is forecast before its throw (the
stickiness from the table's throws before it, the tower's contents as the ledger has them) and
the forecast compared with what the throw gave: a reliability table and the Brier score against
a constant forecast (each result's share over all the forecast battles). The time of the odds
per battle is measured on the same battles.
"""

from __future__ import annotations

import random
import statistics
import time

import numpy as np

from companion.output import print_json
from companion.rules.battle import resolve
from companion.rules.board import load_map
from companion.rules.odds import RESULTS, battle_odds
from companion.rules.selfplay import play_game
from companion.rules.stickiness import estimate
from companion.rules.tower import TowerModel

KEEP_RANGE = (0.10, 0.35)
RELEASE_RANGE = (0.20, 0.50)
WITHIN = 0.05
BINS = 10


def add_arguments(parser) -> None:
    parser.add_argument(
        "--tables", type=int, default=20, help="tables, each its own tower (default 20)"
    )
    parser.add_argument(
        "--games", type=int, default=3, help="self-play games per table (default 3)"
    )
    parser.add_argument("--automata", type=int, default=3, help="automatons per game (default 3)")
    parser.add_argument("--rounds", type=int, default=30, help="most rounds per game (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game (default 0)")
    parser.add_argument(
        "--after",
        type=int,
        default=30,
        help="throws after which the stickiness is judged (default 30)",
    )


def run(args) -> int:
    board = load_map()
    errors, short = [], 0
    forecasts, observed, odds_ms, total_ms = [], [], [], []
    for table in range(args.tables):
        pick = random.Random(args.seed + table)
        keep, release = pick.uniform(*KEEP_RANGE), pick.uniform(*RELEASE_RANGE)
        seen = []
        for game in range(args.games):
            seed = args.seed + table * args.games + game
            play_game(
                board,
                args.automata,
                args.rounds,
                seed,
                tower=TowerModel(random.Random(seed), keep=keep, release=release),
                on_throw=lambda throw, battle, seen=seen: seen.append((throw, battle)),
            )
        if len(seen) < args.after:
            short += 1
        else:
            found = estimate([t for t, _ in seen[: args.after]])
            errors.append((abs(found.keep - keep), abs(found.release - release)))
        for n, (throw, battle) in enumerate(seen):
            if battle is None:
                continue
            start = time.perf_counter()
            sticky = estimate([t for t, _ in seen[:n]])
            middle = time.perf_counter()
            odds = battle_odds(battle, throw.inside, sticky, seed=n)
            end = time.perf_counter()
            odds_ms.append((end - middle) * 1000)
            total_ms.append((end - start) * 1000)
            forecasts.append([odds.chances[r] for r in RESULTS])
            observed.append([resolve(battle).result == r for r in RESULTS])
    p, o = np.array(forecasts), np.array(observed, dtype=float)
    base = o.mean(axis=0)
    figures = {
        "tables": args.tables,
        "games_per_table": args.games,
        "tables_short_of_throws": short,
        "keep_error_mean": _r(statistics.fmean(e[0] for e in errors)) if errors else None,
        "keep_error_max": _r(max(e[0] for e in errors)) if errors else None,
        "release_error_mean": _r(statistics.fmean(e[1] for e in errors)) if errors else None,
        "release_error_max": _r(max(e[1] for e in errors)) if errors else None,
        "share_within_0.05": _r(statistics.fmean(max(e) <= WITHIN for e in errors))
        if errors
        else None,
        "battles_forecast": len(forecasts),
        "base_rates": dict(zip(RESULTS, (_r(b) for b in base), strict=True)),
        "brier": _r(((p - o) ** 2).sum(axis=1).mean()),
        "brier_constant": _r(((base - o) ** 2).sum(axis=1).mean()),
        "reliability": _reliability(p.ravel(), o.ravel()),
        "odds_ms_median": _r(statistics.median(odds_ms)),
        "odds_ms_p95": _r(statistics.quantiles(odds_ms, n=20)[-1]),
        "odds_ms_max": _r(max(odds_ms)),
        "estimate_and_odds_ms_median": _r(statistics.median(total_ms)),
        "estimate_and_odds_ms_p95": _r(statistics.quantiles(total_ms, n=20)[-1]),
    }
    if args.json:
        for name, value in figures.items():
            print_json({"figure": name, "value": value})
        return 0
    f = figures
    print(
        f"stickiness after {args.after} throws, {len(errors)} tables of {args.games} games with "
        f"known towers (keep {KEEP_RANGE[0]}-{KEEP_RANGE[1]}, release {RELEASE_RANGE[0]}-"
        f"{RELEASE_RANGE[1]}{f'; {short} tables had fewer throws' if short else ''}):"
    )
    if errors:
        print(
            f"  keep error mean {f['keep_error_mean']}, max {f['keep_error_max']}; release error "
            f"mean {f['release_error_mean']}, max {f['release_error_max']}; both within {WITHIN} "
            f"at {f['share_within_0.05']:.0%} of the tables"
        )
    print(
        f"odds of {len(forecasts)} battles before their throw: Brier score {f['brier']} against "
        f"{f['brier_constant']} for the constant forecast {f['base_rates']}"
    )
    print("  forecast   battles  mean forecast  happened")
    for row in f["reliability"]:
        print(
            f"  {row['bin']:>9}  {row['n']:>7}  {row['forecast']:>13.3f}  {row['observed']:>8.3f}"
        )
    print(
        f"time per battle: odds median {f['odds_ms_median']} ms, 95th percentile "
        f"{f['odds_ms_p95']} ms, max {f['odds_ms_max']} ms; with the stickiness estimated from "
        f"the table's throws so far: median {f['estimate_and_odds_ms_median']} ms, "
        f"95th percentile {f['estimate_and_odds_ms_p95']} ms (target: under 50 ms)"
    )
    return 0


def _reliability(p: np.ndarray, o: np.ndarray) -> list[dict]:
    """Every forecast chance (of each result) by bin of 0.1: how often it happened."""
    rows = []
    which = np.minimum((p * BINS).astype(int), BINS - 1)
    for b in range(BINS):
        inside = which == b
        if inside.any():
            rows.append(
                {
                    "bin": f"{b / BINS:.1f}-{(b + 1) / BINS:.1f}",
                    "n": int(inside.sum()),
                    "forecast": _r(p[inside].mean()),
                    "observed": _r(o[inside].mean()),
                }
            )
    return rows


def _r(x: float) -> float:
    return round(float(x), 4)
