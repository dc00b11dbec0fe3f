import pytest

from companion.rules.threshold import may_attack


@pytest.mark.parametrize(
    "arriving, defenders, allowed",
    [
        (1, 1, True),
        (1, 2, False),  # 1-5: must be >= defenders
        (5, 5, True),
        (5, 6, False),
        (6, 9, True),
        (6, 10, False),  # 6-10: up to 3 fewer
        (10, 13, True),
        (10, 14, False),
        (11, 15, True),
        (11, 16, False),  # 11-15: up to 4 fewer
        (15, 19, True),
        (15, 20, False),
        (16, 21, True),
        (16, 22, False),  # 16-20: up to 5 fewer
        (20, 25, True),
        (20, 26, False),
        (21, 100, True),  # 21+: no restriction
        (0, 0, False),
    ],
)
def test_every_band_on_both_sides_of_its_boundary(arriving, defenders, allowed):
    assert may_attack(arriving, defenders) is allowed


def test_castle_needs_a_siege_engine_whatever_the_sizes():
    assert not may_attack(30, 1, castle=True, siege_engines=0)
    assert may_attack(30, 1, castle=True, siege_engines=1)
    assert may_attack(3, 3, castle=True, siege_engines=1)
    assert not may_attack(3, 4, castle=True, siege_engines=1)  # the threshold still holds
