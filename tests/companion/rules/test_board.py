import json

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


@pytest.mark.parametrize("change, message", [
    ({"t1": {"name": "B", "adjacent": ["A", "C", "Atlantis"]}}, "'B' lists unknown neighbour 'Atlantis'"),
    ({"t2": {"name": "C", "adjacent": []}}, "'B' lists 'C' as adjacent but 'C' does not list 'B'"),
    ({"t0": {"name": "A", "city": "Acity", "adjacent": ["B"]}}, "'A': city 'Acity' needs a tax value"),
    ({"t2": {"name": "C", "tax": 3, "adjacent": ["B"]}}, "'C' has a tax value but no city"),
    ({"t2": {"name": "A", "adjacent": ["B"]}}, "'A' is listed twice"),
])
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
