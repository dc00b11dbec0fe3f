import pytest

from companion.rules.purchase import choose, table_row

FULL = {"footman": 35, "archer": 12, "cavalry": 12, "siege_engine": 4}

# coins -> what the card's row buys, and what that costs at the prices actually paid
ROWS = {
    5: ({"footman": 2, "cavalry": 1}, 5),
    6: ({"footman": 1, "archer": 1, "cavalry": 1}, 6),
    7: ({"footman": 2, "archer": 1, "cavalry": 1}, 7),
    8: ({"footman": 2, "cavalry": 2}, 8),
    9: ({"footman": 2, "archer": 2, "cavalry": 1}, 9),
    10: ({"siege_engine": 1}, 10),
    11: ({"footman": 1, "siege_engine": 1}, 11),
    12: ({"castle": 1}, 12),
    13: ({"cavalry": 1, "siege_engine": 1}, 13),
    14: ({"footman": 2, "castle": 1}, 14),
    15: ({"footman": 2, "cavalry": 1, "siege_engine": 1}, 15),
    16: ({"footman": 2, "archer": 1, "castle": 1}, 16),
    17: ({"footman": 2, "archer": 1, "cavalry": 1, "siege_engine": 1}, 17),
    18: ({"footman": 2, "cavalry": 1, "castle": 1}, 17),  # keeps 1
    19: ({"footman": 2, "archer": 2, "cavalry": 1, "siege_engine": 1}, 19),
    20: ({"footman": 3, "archer": 1, "cavalry": 1, "castle": 1}, 20),
}


@pytest.mark.parametrize("coins", sorted(ROWS))
def test_every_row_of_the_table(coins):
    buys, spent = ROWS[coins]
    p = choose(coins, 2, FULL, castles_left=1)
    assert p.row == coins and dict(p.buys) == buys
    assert p.spent == spent and p.coins_left == coins - spent and not p.notes


def test_above_20_uses_row_20_and_keeps_the_rest():
    p = choose(27, 2, FULL, 1)
    assert p.row == 20 and dict(p.buys) == ROWS[20][0] and p.coins_left == 7


def test_below_5_buys_nothing():
    assert table_row(4) is None
    assert choose(4, 2, FULL, 1) is None and choose(0, 6, FULL, 1) is None


def test_no_archer_left_buys_two_footmen_instead():
    p = choose(9, 2, {**FULL, "archer": 1}, 1)
    assert dict(p.buys) == {"footman": 4, "archer": 1, "cavalry": 1}
    assert p.spent == 9 and "2 footmen instead of 1 archer" in p.notes[0]


def test_no_footmen_left_buys_an_archer_instead_of_two():
    p = choose(8, 2, {**FULL, "footman": 0}, 1)
    assert dict(p.buys) == {"archer": 1, "cavalry": 2} and p.spent == 8
    p = choose(20, 2, {**FULL, "footman": 1}, 1)  # 2 of 3 footmen missing -> 1 archer more
    assert dict(p.buys) == {"footman": 1, "archer": 2, "cavalry": 1, "castle": 1}


def test_no_substitute_for_cavalry_coins_are_kept():
    p = choose(8, 2, {**FULL, "cavalry": 1}, 1)
    assert dict(p.buys) == {"footman": 2, "cavalry": 1} and p.coins_left == 3


def test_no_castle_to_be_had_keeps_its_price():
    p = choose(12, 2, FULL, castles_left=0)
    assert p is None
    p = choose(14, 2, FULL, castles_left=0)
    assert dict(p.buys) == {"footman": 2} and p.coins_left == 12


@pytest.mark.parametrize(
    "crowns, coins, crown_card",
    [
        (6, 10, True),
        (6, 15, True),
        (6, 9, False),
        (5, 10, False),
        (7, 10, False),
        (5, 20, False),
    ],
)
def test_crown_card_override_only_at_6_crowns_and_10_coins(crowns, coins, crown_card):
    p = choose(coins, crowns, FULL, 1)
    if crown_card:
        assert dict(p.buys) == {"crown_card": 1} and p.spent == 10 and p.coins_left == coins - 10
    else:
        assert "crown_card" not in p.buys and p.row == table_row(coins)


def test_crown_card_needs_no_supply():
    p = choose(10, 6, {k: 0 for k in FULL}, 0)
    assert dict(p.buys) == {"crown_card": 1}
