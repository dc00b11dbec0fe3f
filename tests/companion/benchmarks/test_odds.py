"""The odds benchmark's figures (companion bench odds) and the self-play throws it learns from."""

import argparse
import json
import random

from companion.benchmarks import odds as bench
from companion.rules.board import load_map
from companion.rules.selfplay import play_game
from companion.rules.tower import TowerModel


def test_self_play_shows_every_throw_with_what_the_tower_held():
    seen = []
    tower = TowerModel(random.Random(3), keep=0.3, release=0.1)
    result = play_game(
        load_map(),
        2,
        30,
        3,
        tower=tower,
        on_throw=lambda throw, battle: seen.append((throw, battle)),
    )
    assert len(seen) == result.battles + 1 and seen[0][1] is None  # the priming first
    inside: dict = {}
    for throw, battle in seen:
        assert throw.inside == inside
        if battle is not None:
            assert throw.emerged == battle.emerged
        # Cubes are conserved: what the tower holds next is what it held, in minus out.
        inside = {
            c: n
            for c in sorted(set(inside) | set(throw.thrown))
            if (n := inside.get(c, 0) + throw.thrown.get(c, 0) - throw.emerged.get(c, 0))
        }
    assert inside == tower.inside()


def test_the_benchmark_prints_every_figure(capsys):
    args = argparse.Namespace(tables=1, games=2, automata=2, rounds=30, seed=5, after=10, json=True)
    assert bench.run(args) == 0
    lines = capsys.readouterr().out.splitlines()
    figures = {f["figure"]: f["value"] for f in map(json.loads, lines)}
    assert figures["tables_short_of_throws"] == 0
    assert 0 <= figures["keep_error_mean"] == figures["keep_error_max"] <= 1
    # Every battle's three chances land in one bin each.
    assert sum(row["n"] for row in figures["reliability"]) == 3 * figures["battles_forecast"]
    assert 0 < figures["brier"] < 2 and 0 < figures["brier_constant"] < 2
    assert abs(sum(figures["base_rates"].values()) - 1) < 1e-3
    assert figures["odds_ms_median"] > 0
