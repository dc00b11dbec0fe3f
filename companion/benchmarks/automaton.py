"""automaton: decision time on the Risk Europe map and 1,000 self-play games."""

from __future__ import annotations

import statistics
import time
from collections import Counter

from companion.output import print_json
from companion.rules.automaton import decide
from companion.rules.board import load_map
from companion.rules.deck import ORDERS
from companion.rules.dice import Dice
from companion.rules.selfplay import play_game


def add_arguments(parser) -> None:
    parser.add_argument("--games", type=int, default=1000, help="self-play games (default 1000)")
    parser.add_argument("--automata", type=int, default=3, help="automatons per game (default 3)")
    parser.add_argument("--rounds", type=int, default=30, help="most rounds per game (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game (default 0)")


def run(args) -> int:
    board = load_map()
    median, p95 = _decision_ms(board, args.automata, args.seed)
    figures = {"decision_median_ms": median, "decision_p95_ms": p95}
    wins: Counter = Counter()
    rounds, failures, first_failure = [], 0, None
    start = time.perf_counter()
    for i in range(args.games):
        try:
            result = play_game(board, args.automata, args.rounds, args.seed + i)
        except Exception as e:  # a failure is a figure here, reported with its seed
            failures += 1
            first_failure = first_failure or f"seed {args.seed + i}: {type(e).__name__}: {e}"
            continue
        wins[result.winner or "none"] += 1
        rounds.append(result.rounds)
    figures.update(
        {
            "games": args.games,
            "wins": dict(sorted(wins.items())),
            "mean_rounds": round(statistics.fmean(rounds), 2) if rounds else None,
            "failures": failures,
            "seconds": round(time.perf_counter() - start, 1),
        }
    )
    if first_failure:
        figures["first_failure"] = first_failure
    if args.json:
        for name, value in figures.items():
            print_json({"figure": name, "value": value})
    else:
        print(
            f"decision: median {median:.3f} ms, 95th percentile {p95:.3f} ms "
            "(target: median < 5 ms)"
        )
        print(
            f"self-play: {args.games} games of {args.automata} automatons, "
            f"wins {figures['wins']}, mean rounds {figures['mean_rounds']}, "
            f"failures {failures}, {figures['seconds']} s"
        )
        if first_failure:
            print(f"first failure: {first_failure}")
    return 1 if failures else 0


def _decision_ms(board, automata: int, seed: int) -> tuple[float, float]:
    """Median and 95th percentile of one `decide`, every order on every turn's state of a
    self-play game."""
    states = []
    play_game(
        board, automata, 30, seed, observe=lambda state, colour: states.append((state, colour))
    )
    dice = Dice(seed)
    times = []
    for state, colour in states:
        for order in ORDERS:
            t = time.perf_counter()
            decide(state, colour, order, dice)
            times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 4), round(statistics.quantiles(times, n=20)[-1], 4)
