"""The tower model: thrown cubes lodge or fall through, lodged ones are knocked loose later."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from companion.rules.tower import TowerModel


def test_every_cube_is_inside_or_out_after_each_throw():
    tower = TowerModel(random.Random(5))
    thrown_in, came_out = Counter(), Counter()
    for cubes in ({"blue": 6, "green": 2}, {"red": 4}, {"blue": 3, "red": 3}, {}):
        out = tower.throw(cubes)
        assert all(n > 0 for n in out.values())
        thrown_in.update(cubes)
        came_out.update(out)
        assert Counter(tower.inside()) + came_out == thrown_in


def test_the_same_seed_gives_the_same_throws():
    one, two = TowerModel(random.Random(9)), TowerModel(random.Random(9))
    assert [one.throw({"blue": 8}) for _ in range(5)] == [two.throw({"blue": 8}) for _ in range(5)]
    assert one.inside() == two.inside()


def test_a_tower_that_keeps_everything_releases_nothing_new():
    tower = TowerModel(random.Random(1), keep=1.0, release=0.0)
    assert tower.throw({"red": 3}) == {}
    assert tower.inside() == {"red": 3}
    loose = TowerModel(random.Random(1), keep=0.0, release=1.0)
    loose.contents.update({"red": 2})
    assert loose.throw({"blue": 1}) == {"blue": 1, "red": 2}
    assert loose.inside() == {}


def test_a_negative_count_is_refused():
    with pytest.raises(ValueError, match="cannot throw -1 red cubes"):
        TowerModel(random.Random(1)).throw({"red": -1})
