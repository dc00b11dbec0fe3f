"""The tower's stickiness learned from its throws (companion.rules.stickiness)."""

import random

import pytest

from companion.rules.stickiness import Stickiness, Throw, estimate, prior
from companion.rules.tower import TowerModel


def throws_of(tower: TowerModel, n: int, seed: int) -> list[Throw]:
    rng = random.Random(seed)
    throws = []
    for _ in range(n):
        into = {"red": rng.randint(1, 6), "blue": rng.randint(0, 6), "green": rng.randint(0, 1)}
        inside = tower.inside()
        throws.append(Throw(into, inside, tower.throw(into)))
    return throws


def test_without_throws_the_estimate_is_the_prior():
    guess = estimate([])
    assert guess.throws == 0 and prior().throws == 0
    assert guess.keep == pytest.approx(0.2, abs=0.01)
    assert guess.release == pytest.approx(0.35, abs=0.01)
    assert guess.text().startswith("no throws yet: assuming a tower that keeps about 1 in 5")


@pytest.mark.parametrize("keep, release", [(0.2, 0.35), (0.35, 0.15), (0.1, 0.5)])
def test_a_tower_unlike_the_prior_is_learned_from_sixty_throws(keep, release):
    tower = TowerModel(random.Random(keep * 100 + release), keep=keep, release=release)
    found = estimate(throws_of(tower, 60, seed=3))
    assert found.throws == 60
    assert found.keep == pytest.approx(keep, abs=0.05)
    assert found.release == pytest.approx(release, abs=0.05)


def test_the_text_says_the_shares_and_the_throws():
    assert Stickiness(0.2, 0.33, 23).text() == (
        "this tower keeps about 1 in 5 cubes and releases "
        "about 1 in 3 of what it holds, from 23 throws"
    )
    assert Stickiness(0.2, 0.33, 1).text().endswith("from 1 throw")


def test_a_miscount_claiming_more_out_than_could_be_does_not_break_the_estimate():
    wrong = [Throw({"red": 3}, {"red": -2}, {"red": 9})] * 5
    found = estimate(wrong)
    assert 0 <= found.keep <= 1 and 0 <= found.release <= 1
    # All three came out every time: the tower keeps little.
    assert found.keep < 0.2
