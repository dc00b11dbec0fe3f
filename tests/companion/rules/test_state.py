import json

import pytest

from companion.rules.state import StateError, from_dict, load_state

ISSUE_EXAMPLE = {
    "map": "risk-europe",
    "players": {"blue": {"automaton": True, "coins": 7, "crowns": 2}},
    "territories": {
        "Franconia": {"units": {"blue": {"footman": 2, "cavalry": 4}}},
        "Saxony": {"castle": True, "units": {"red": {"footman": 2}}},
    },
}


def test_the_issue_example_loads(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps(ISSUE_EXAMPLE))
    state = load_state(path)
    assert state.player("blue").coins == 7 and state.player("blue").automaton
    # red has units but no entry: a human opponent with nothing in hand
    assert not state.player("red").automaton and state.player("red").coins == 0
    assert state.owner("Saxony") == "red" and state.territory("Saxony").castle
    assert state.owner("Bavaria") is None and not state.disputed("Franconia")
    assert state.supply("blue") == {"footman": 33, "archer": 12, "cavalry": 8, "siege_engine": 4}
    assert state.castles_left() == 7


def test_round_trip_keeps_everything(make_state):
    state = make_state(
        {"Poland": {"blue": {"footman": 3}, "red": {"archer": 1}}},
        players={
            "blue": {
                "coins": 3,
                "crowns": 4,
                "deck": ["tax-or-spend"],
                "hand": ["split-expand-or-maneuver"],
            }
        },
        round=4,
        first_player="red",
    )
    state = from_dict(
        {
            **state.to_dict(),
            "territories": {
                "Poland": {
                    "units": {"blue": {"footman": 3}, "red": {"archer": 1}},
                    "attacker": "red",
                    "revolt_markers": 1,
                }
            },
        },
        board=state.board,
    )
    again = from_dict(json.loads(json.dumps(state.to_dict())), board=state.board)
    assert again.to_dict() == state.to_dict()
    assert again.disputed("Poland") and again.territory("Poland").attacker == "red"
    assert again.round == 4 and again.turn_order() == ["red", "blue"]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"territories": {"Saxny": {"units": {}}}}, "territories.Saxny: unknown territory"),
        (
            {"territories": {"Saxony": {"units": {"red": {"knight": 1}}}}},
            "territories.Saxony.units.red.knight: unknown unit type",
        ),
        (
            {"territories": {"Saxony": {"units": {"red": {"footman": -2}}}}},
            "territories.Saxony.units.red.footman: -2 is negative",
        ),
        (
            {"territories": {"Saxony": {"units": {"red": {"footman": 1.5}}}}},
            "territories.Saxony.units.red.footman: expected a whole number",
        ),
        (
            {"territories": {"Saxony": {"units": {"red": {"footman": 36}}}}},
            "units.red.footman: 36 footmen on the board, but the box holds 35",
        ),
        ({"territories": {"Saxony": {"castel": True}}}, "territories.Saxony.castel: unknown key"),
        ({"players": {"blue": {"coins": -1}}}, "players.blue.coins: -1 is negative"),
        ({"players": {"blue": {"deck": ["joker"]}}}, "players.blue.deck: expected a list of cards"),
        ({"first_player": "green"}, "first_player: unknown player 'green'"),
        ({"colour": "x"}, "colour: unknown key"),
    ],
)
def test_bad_state_files_name_the_entry(tmp_path, change, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**ISSUE_EXAMPLE, **change}))
    with pytest.raises(StateError, match=message) as info:
        load_state(path)
    assert str(path) in str(info.value)


def test_unknown_player_and_unreadable_files(tmp_path, make_state):
    with pytest.raises(StateError, match="unknown player 'green'"):
        make_state({"Saxony": {"red": {"footman": 1}}}).player("green")
    with pytest.raises(StateError, match="no such state file"):
        load_state(tmp_path / "nope.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(StateError, match="not valid JSON"):
        load_state(tmp_path / "broken.json")
