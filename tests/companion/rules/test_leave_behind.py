import pytest

from companion.rules import leave_behind
from companion.rules.board import board_from_dict

MIXED = {"footman": 1, "archer": 1, "siege_engine": 1, "cavalry": 3}


@pytest.fixture(scope="module")
def taxes():
    """A board with a city of each tax value 1 to 5 around a plain territory."""
    cities = [
        {"name": f"T{t}", "city": f"City{t}", "tax": t, "adjacent": ["Plain"]} for t in range(1, 6)
    ]
    plain = {"name": "Plain", "adjacent": [c["name"] for c in cities]}
    return board_from_dict({"territories": cities + [plain]})


@pytest.mark.parametrize(
    "tax, stays",
    [
        (1, {"footman": 1}),
        (2, {"footman": 1, "archer": 1}),
        (3, {"footman": 1, "archer": 1, "siege_engine": 1}),
        (4, {"footman": 1, "archer": 1, "siege_engine": 1, "cavalry": 1}),
        (5, {"footman": 1, "archer": 1, "siege_engine": 1, "cavalry": 2}),
    ],
)
def test_a_city_leaves_its_tax_cheapest_first(taxes, tax, stays):
    left, moves = leave_behind.split(taxes, f"T{tax}", MIXED)
    assert left == stays
    assert sum(left.values()) == tax and sum(moves.values()) == 6 - tax


def test_the_risk_europe_tax_values(board):
    for territory, tax in board.tax.items():
        assert leave_behind.required(board, territory) == tax
    assert leave_behind.split(board, "Saxony", {"cavalry": 2, "archer": 3, "footman": 1}) == (
        {"footman": 1, "archer": 3},
        {"cavalry": 2},
    )


def test_a_plain_territory_leaves_one(taxes):
    assert leave_behind.split(taxes, "Plain", {"cavalry": 2, "archer": 1}) == (
        {"archer": 1},
        {"cavalry": 2},
    )
    assert leave_behind.split(taxes, "Plain", {"cavalry": 1}) == ({"cavalry": 1}, {})
