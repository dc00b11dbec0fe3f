"""Odds before the throw (companion.rules.odds): the same chances as throwing the tower model."""

import random
from collections import Counter
from dataclasses import replace

import pytest

from companion.rules.battle import Battle, into_tower, resolve
from companion.rules.odds import battle_odds
from companion.rules.stickiness import Stickiness, prior
from companion.rules.tower import TowerModel

BATTLE = Battle("blue", "red", {"blue": 5, "red": 3}, cup={"yellow": 1})
INSIDE = {"blue": 3, "red": 2, "green": 4, "yellow": 1}


def test_odds_match_throwing_the_tower_model_itself():
    sticky = Stickiness(0.25, 0.3, 10)
    odds = battle_odds(BATTLE, INSIDE, sticky, samples=20000, seed=4)
    results, out = Counter(), Counter()
    rng = random.Random(9)
    for _ in range(20000):
        tower = TowerModel(rng, keep=0.25, release=0.3, contents=Counter(INSIDE))
        emerged = tower.throw(into_tower(BATTLE))
        results[resolve(replace(BATTLE, emerged=emerged)).result] += 1
        out.update(emerged)
    for result, p in odds.chances.items():
        assert p == pytest.approx(results[result] / 20000, abs=0.015), result
    for colour, n in odds.expected.items():
        assert n == pytest.approx(out[colour] / 20000, abs=0.05), colour
    assert sum(odds.chances.values()) == pytest.approx(1)


def test_the_same_battle_gets_the_same_odds():
    first, again = (battle_odds(BATTLE, INSIDE, prior()) for _ in range(2))
    assert first.to_dict() == again.to_dict()


def test_an_empty_province_counts_the_farmer_and_a_negative_estimate_holds_nothing():
    empty = Battle("blue", None, {"blue": 1}, farmer="green")
    odds = battle_odds(empty, {"green": -3}, Stickiness(0.0, 0.0, 5))
    # Nothing lodges, nothing is loose: one blue against one farmer, always devastated.
    assert odds.chances == {"conquered": 0, "held": 0, "devastated": 1}
    assert odds.expected == {"blue": 1, "green": 1}
    assert odds.inside == {}


def test_a_stickier_tower_makes_a_big_attack_less_sure():
    big = Battle("blue", "red", {"blue": 8, "red": 2})
    loose = battle_odds(big, {"red": 6}, Stickiness(0.05, 0.9, 10))
    sticky = battle_odds(big, {"red": 6}, Stickiness(0.05, 0.1, 10))
    # Released red cubes defend: a tower that releases much makes the attack harder.
    assert loose.chances["conquered"] < sticky.chances["conquered"]
