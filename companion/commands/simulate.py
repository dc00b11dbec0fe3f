"""`companion simulate`: play automatons against each other on the Risk Europe map."""

from __future__ import annotations

import argparse
from collections import Counter

from companion.errors import CompanionError
from companion.output import print_json
from companion.rules.board import DEFAULT_MAP, load_map
from companion.rules.game import CAPITALS_PER_PLAYER
from companion.rules.selfplay import COLOURS, play_game


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate",
        help="play automatons against each other",
        description="Self-play: N automatons play R rounds (or until one reaches 7 "
        "crowns), battles resolved by the battle engine with a simulated "
        "tower; conservation invariants are checked after every turn.",
    )
    p.add_argument("--automata", type=int, required=True, metavar="N", help="number of automatons")
    p.add_argument("--rounds", type=int, required=True, metavar="R", help="most rounds per game")
    p.add_argument("--seed", type=int, required=True, metavar="S", help="seed of the first game")
    p.add_argument(
        "--games",
        type=int,
        default=1,
        metavar="G",
        help="games to play, seeds S, S+1, ... (default 1)",
    )
    p.add_argument("--map", metavar="FILE", default=DEFAULT_MAP, help="map (default: risk-europe)")
    p.add_argument("--json", action="store_true", help="one JSON object per game, then a summary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    board = load_map(args.map)
    most = min(len(COLOURS), len(board.start) // CAPITALS_PER_PLAYER)
    if not 2 <= args.automata <= most:
        raise CompanionError(
            f"--automata: expected 2 to {most} on {board.name}, got {args.automata}"
        )
    if args.rounds < 1 or args.games < 1:
        raise CompanionError("--rounds and --games: expected at least 1")
    wins: Counter = Counter()
    rounds = []
    for i in range(args.games):
        result = play_game(board, args.automata, args.rounds, args.seed + i)
        wins[result.winner or "none"] += 1
        rounds.append(result.rounds)
        if args.json:
            print_json({"game": i + 1, **result.to_dict()})
        else:
            crowns = ", ".join(f"{c} {n}" for c, n in result.crowns.items())
            what = (
                f"{result.winner} won in round {result.rounds}"
                if result.winner
                else f"nobody won in {result.rounds} rounds"
            )
            print(
                f"Game {i + 1} (seed {result.seed}): {what}; crowns: {crowns}; "
                f"{result.battles} battles."
            )
    summary = {
        "games": args.games,
        "wins": dict(wins),
        "mean_rounds": round(sum(rounds) / len(rounds), 2),
    }
    if args.json:
        print_json({"summary": summary})
    elif args.games > 1:
        print(f"{args.games} games: wins {dict(wins)}; mean rounds {summary['mean_rounds']}.")
    return 0
