import json
import re

import pytest

from companion.rules.board import MapError, board_from_dict, load_map


def test_risk_europe_ships_with_the_package(board):
    assert len(board.territories) == 49
    assert len(board.tax) == 15
    assert board.label("Saxony") == "Saxony (Berlin)"
    assert board.tax_of("Saxony") == 4 and board.tax_of("Bavaria") == 0
    assert board.across_sea("England", "Normandy") and board.across_sea("Normandy", "England")
    assert not board.across_sea("France", "Normandy")
    assert "Normandy" in board.adjacent["England"]  # a sea link is still a link
    assert board.distance["Portugal"]["Rusland"] > 5
    assert len(board.gold_crown_cities) == 8


def _tiny(**changes):
    territories = [
        {"name": "A", "city": "Acity", "tax": 2, "adjacent": ["B"]},
        {"name": "B", "adjacent": ["A", "C"]},
        {"name": "C", "adjacent": ["B"]},
    ]
    for i, entry in changes.items():
        territories[int(i[1:])] = entry
    return {"name": "tiny", "territories": territories}


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"t1": {"name": "B", "adjacent": ["A", "C", "Atlantis"]}},
            "'B' lists unknown neighbour 'Atlantis'",
        ),
        (
            {"t2": {"name": "C", "adjacent": []}},
            "'B' lists 'C' as adjacent but 'C' does not list 'B'",
        ),
        (
            {"t0": {"name": "A", "city": "Acity", "adjacent": ["B"]}},
            "'A': city 'Acity' needs a tax value",
        ),
        ({"t2": {"name": "C", "tax": 3, "adjacent": ["B"]}}, "'C' has a tax value but no city"),
        ({"t2": {"name": "A", "adjacent": ["B"]}}, "'A' is listed twice"),
    ],
)
def test_bad_maps_name_the_territory(change, message):
    with pytest.raises(MapError, match=message.replace("(", r"\(")):
        board_from_dict(_tiny(**change), "tiny.json")


def test_sea_link_must_be_a_link():
    data = _tiny()
    data["sea"] = [["A", "C"]]
    with pytest.raises(MapError, match="sea link 'A'-'C' is not a link"):
        board_from_dict(data)


def test_a_users_map_file_loads_by_path(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(_tiny()))
    mine = load_map(str(path))
    assert mine.territories == ("A", "B", "C") and mine.tax == {"A": 2}
    with pytest.raises(MapError, match="no such map file"):
        load_map(str(tmp_path / "missing.json"))
    path.write_text("{not json")
    with pytest.raises(MapError, match="not valid JSON"):
        load_map(str(path))


def test_every_risk_europe_territory_has_its_place(board):
    assert set(board.at) == set(board.territories)
    assert board.at["England"] == (-1.5, 52.6)
    # West to east and north to south as on the board.
    assert board.at["Portugal"][0] < board.at["France"][0] < board.at["Poland"][0]
    assert board.at["Sweden"][1] > board.at["Saxony"][1] > board.at["Rome"][1]


def _placed(**at):
    data = _tiny()
    for entry in data["territories"]:
        if entry["name"] in at:
            entry["at"] = at[entry["name"]]
    return data


def test_a_map_without_places_loads_and_one_with_all_of_them_too():
    assert board_from_dict(_tiny()).at == {}
    assert board_from_dict(_placed(A=[1, 50], B=[2.5, 51], C=[-3, 49.5])).at == {
        "A": (1.0, 50.0),
        "B": (2.5, 51.0),
        "C": (-3.0, 49.5),
    }


@pytest.mark.parametrize(
    "at, message",
    [
        (
            {"A": [1, 50], "B": [2, 51]},
            "'at' is given for 2 territories but not for C "
            "(give it for every territory or for none)",
        ),
        (
            {"A": [1, 50], "B": [2, 51], "C": [200, 50]},
            "territory 'C': 'at' must be [longitude, latitude]",
        ),
        ({"A": [1, 50], "B": [2, 51], "C": ["1", 50]}, "territory 'C': 'at' must be"),
        ({"A": [1, 50], "B": [2, 51], "C": [1, 2, 3]}, "territory 'C': 'at' must be"),
        ({"A": [1, 50], "B": [2, 51], "C": [True, 50]}, "territory 'C': 'at' must be"),
    ],
)
def test_a_bad_place_is_named(at, message):
    with pytest.raises(MapError, match=re.escape(f"tiny.json: {message}")):
        board_from_dict(_placed(**at), "tiny.json")
