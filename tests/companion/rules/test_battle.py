"""The tower battle engine against docs/rules.md section 1 and seed 001."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from companion.errors import CompanionError
from companion.rules.battle import Battle, BattleError, battle_from_dict, into_tower, resolve

PLAYERS = ("red", "blue", "yellow", "purple", "black")
ALL = PLAYERS + ("green",)


def outcome(**kw):
    return resolve(Battle(**kw)).to_dict()


# --- The seed's worked examples ---------------------------------------------------------------


def test_seed_example_1_farmers_support_the_defender():
    # 4 blue attack 3 red; out come 3 blue, 4 red (one from the tower), 1 green.
    battle = Battle(
        "blue", "red", thrown={"blue": 4, "red": 3}, emerged={"blue": 3, "red": 4, "green": 1}
    )
    assert into_tower(battle) == {"blue": 4, "red": 3}
    assert resolve(battle).to_dict() == {
        "result": "held",
        "attacker_strength": 3,
        "defender_strength": 5,
        "to_supply": {"blue": 3, "green": 1, "red": 2},
        "to_province": {"red": 2},
        "province_owner": "red",
        "cup_after": {},
        "revolt_marker_added": False,
        "cancel_pending_action": False,
        # one blue stayed in the tower; one red and the green came out of it
        "tower_delta": {"blue": 1, "red": -1, "green": -1},
        "warnings": [],
    }


def test_seed_example_2_held_then_devastated_with_two_blue_fewer():
    held = outcome(
        attacker="red", defender="blue", thrown={"red": 4, "blue": 6}, emerged={"red": 4, "blue": 6}
    )
    assert (held["result"], held["attacker_strength"], held["defender_strength"]) == ("held", 4, 6)
    assert held["to_province"] == {"blue": 2}  # blue puts two back
    assert held["to_supply"] == {"red": 4, "blue": 4}
    assert held["province_owner"] == "blue"

    devastated = outcome(
        attacker="red", defender="blue", thrown={"red": 4, "blue": 6}, emerged={"red": 4, "blue": 4}
    )
    assert devastated["result"] == "devastated"
    assert devastated["to_supply"] == {"red": 4, "blue": 4}
    assert devastated["to_province"] == {}
    assert devastated["province_owner"] is None  # interpretation: neutral
    assert devastated["tower_delta"] == {"blue": 2}


# --- Farmers and revolt markers ---------------------------------------------------------------


@pytest.mark.parametrize("markers", [0, 1])
def test_farmers_join_the_defender_with_at_most_one_revolt_marker(markers):
    o = outcome(
        attacker="blue",
        defender="red",
        thrown={"blue": 4, "red": 2},
        revolt_markers=markers,
        emerged={"blue": 4, "red": 2, "green": 3},
    )
    assert (o["result"], o["defender_strength"]) == ("held", 5)
    # losses 4: the 3 farmers first, then 1 red; 1 red returns
    assert o["to_supply"] == {"blue": 4, "green": 3, "red": 1}
    assert o["to_province"] == {"red": 1}


@pytest.mark.parametrize("markers", [2, 3])
def test_two_or_more_revolt_markers_farmers_count_for_nobody_and_stay_in_the_cup(markers):
    o = outcome(
        attacker="blue",
        defender="red",
        thrown={"blue": 4, "red": 2},
        revolt_markers=markers,
        emerged={"blue": 4, "red": 2, "green": 3},
    )
    assert (o["result"], o["attacker_strength"], o["defender_strength"]) == ("conquered", 4, 2)
    assert o["cup_after"] == {"green": 3}
    assert o["to_supply"] == {"blue": 2, "red": 2}
    assert o["to_province"] == {"blue": 2}


def test_surviving_farmers_go_to_the_supply_not_the_province():
    o = outcome(
        attacker="blue",
        defender="red",
        thrown={"blue": 1, "red": 2},
        emerged={"blue": 1, "red": 2, "green": 3},
    )
    assert o["result"] == "held"
    assert o["to_supply"] == {"blue": 1, "green": 3}  # 1 farmer lost, 2 survived: all to supply
    assert o["to_province"] == {"red": 2}


# --- Empty province ---------------------------------------------------------------------------


def test_empty_province_one_farmer_goes_in_and_conquest_adds_a_revolt_marker():
    battle = Battle(
        "yellow", None, thrown={"yellow": 3}, emerged={"yellow": 3, "green": 1}, pending_action=True
    )
    assert into_tower(battle) == {"yellow": 3, "green": 1}
    o = resolve(battle).to_dict()
    assert (o["result"], o["attacker_strength"], o["defender_strength"]) == ("conquered", 3, 1)
    assert o["to_supply"] == {"yellow": 1, "green": 1}
    assert o["to_province"] == {"yellow": 2}
    assert o["province_owner"] == "yellow"
    assert o["revolt_marker_added"] is True
    assert o["cancel_pending_action"] is True


def test_empty_province_farmers_defend_whatever_the_revolt_markers():
    o = outcome(
        attacker="yellow",
        defender=None,
        thrown={"yellow": 2},
        revolt_markers=3,
        emerged={"yellow": 1, "green": 2, "red": 1},
    )
    assert (o["result"], o["defender_strength"], o["province_owner"]) == ("held", 2, None)
    assert o["to_supply"] == {"yellow": 1, "green": 2}
    assert o["to_province"] == {}
    assert o["cup_after"] == {"red": 1}  # not involved
    assert o["revolt_marker_added"] is False


def test_empty_province_devastated_stays_neutral():
    o = outcome(
        attacker="yellow", defender=None, thrown={"yellow": 2}, emerged={"yellow": 1, "green": 1}
    )
    assert (o["result"], o["province_owner"], o["revolt_marker_added"]) == (
        "devastated",
        None,
        False,
    )
    assert o["to_supply"] == {"yellow": 1, "green": 1}


# --- Conquest, cup, pending action, warnings -------------------------------------------------


def test_conquest_with_losses_and_cup():
    battle = Battle(
        "blue",
        "red",
        thrown={"blue": 6, "red": 2},
        cup={"red": 1, "black": 2, "green": 1},
        emerged={"blue": 5, "red": 2, "green": 1, "black": 1, "purple": 1},
        pending_action=True,
    )
    assert into_tower(battle) == {"blue": 6, "red": 3, "black": 2, "green": 1}
    o = resolve(battle).to_dict()
    assert (o["result"], o["attacker_strength"], o["defender_strength"]) == ("conquered", 5, 3)
    assert o["to_supply"] == {
        "blue": 3,
        "red": 2,
        "green": 1,
    }  # blue loses as many as the defence had
    assert o["to_province"] == {"blue": 2}
    assert o["cup_after"] == {"black": 1, "purple": 1}  # uninvolved colours stay in the cup
    assert o["tower_delta"] == {"blue": 1, "red": 1, "black": 1, "purple": -1}
    assert o["cancel_pending_action"] is True
    assert o["revolt_marker_added"] is False


def test_pending_action_is_kept_when_the_defender_holds():
    o = outcome(
        attacker="blue",
        defender="red",
        thrown={"blue": 1, "red": 2},
        pending_action=True,
        emerged={"blue": 1, "red": 2},
    )
    assert (o["result"], o["cancel_pending_action"]) == ("held", False)


def test_warns_when_no_cube_of_either_side_emerged_and_only_then():
    o = outcome(attacker="blue", defender="red", thrown={"blue": 3, "red": 1}, emerged={"black": 2})
    assert o["result"] == "devastated"
    assert len(o["warnings"]) == 1 and "blue" in o["warnings"][0] and "red" in o["warnings"][0]
    assert (
        outcome(attacker="blue", defender="red", thrown={"blue": 3}, emerged={"blue": 1})[
            "warnings"
        ]
        == []
    )


def test_farmer_colour_is_configurable():
    o = outcome(
        attacker="blue",
        defender="red",
        farmer="white",
        thrown={"blue": 2, "red": 1},
        emerged={"blue": 2, "red": 1, "white": 2, "green": 1},
    )
    assert o["defender_strength"] == 3
    assert o["cup_after"] == {"green": 1}  # green is an ordinary uninvolved colour here


# --- Input validation -------------------------------------------------------------------------

GOOD = {
    "attacker": "blue",
    "defender": "red",
    "revolt_markers": 0,
    "farmer": "green",
    "thrown": {"blue": 4, "red": 3},
    "cup": {},
    "emerged": {"blue": 3, "red": 4, "green": 1},
}


def test_battle_from_dict_reads_the_issue_example_and_defaults():
    assert battle_from_dict(GOOD) == Battle(
        "blue", "red", {"blue": 4, "red": 3}, {"blue": 3, "red": 4, "green": 1}
    )
    minimal = {k: GOOD[k] for k in ("attacker", "defender", "thrown", "emerged")}
    assert battle_from_dict(minimal, "white").farmer == "white"
    assert battle_from_dict({**GOOD, "attacker": " Blue ", "thrown": {"BLUE": 4}}).thrown == {
        "blue": 4
    }


@pytest.mark.parametrize(
    "change, words",
    [
        ({"thrown": {"blue": -1}}, ["thrown.blue", "negative"]),
        ({"thrown": {"blue": 2.5}}, ["thrown.blue", "whole number"]),
        ({"thrown": {"blue": "4"}}, ["thrown.blue", "whole number"]),
        ({"emerged": {"red": True}}, ["emerged.red", "whole number"]),
        ({"cup": {"black": -2}}, ["cup.black", "negative"]),
        ({"cup": [1, 2]}, ["cup", "colour -> count"]),
        ({"defender": "blue"}, ["defender", "attacker"]),
        ({"attacker": 3}, ["attacker", "colour name"]),
        ({"defender": ""}, ["defender", "colour name"]),
        ({"farmer": "red"}, ["farmer", "red"]),
        ({"thrown": {"blue": 4, "yellow": 1}}, ["thrown.yellow"]),
        ({"thrown": {"red": 3}}, ["thrown.blue", "at least one"]),
        ({"thrown": {"blue": 2, "Blue": 1}}, ["thrown.blue", "twice"]),
        ({"revolt_markers": -1}, ["revolt_markers", "negative"]),
        ({"revolt_markers": 1.0}, ["revolt_markers", "whole number"]),
        ({"pending_action": "yes"}, ["pending_action"]),
        ({"colour": "blue"}, ["unknown key 'colour'"]),
    ],
)
def test_bad_input_names_the_key(change, words):
    with pytest.raises(BattleError) as e:
        battle_from_dict({**GOOD, **change})
    assert isinstance(e.value, CompanionError)
    for word in words:
        assert word in str(e.value)


def test_non_string_colour_keys_are_rejected_in_python_too():
    with pytest.raises(BattleError, match="emerged: colour"):
        Battle("blue", "red", thrown={"blue": 1}, emerged={1: 2})


@pytest.mark.parametrize("key", ["attacker", "defender", "thrown", "emerged"])
def test_missing_required_key(key):
    with pytest.raises(BattleError, match=f"missing key '{key}'"):
        battle_from_dict({k: v for k, v in GOOD.items() if k != key})


def test_not_an_object():
    with pytest.raises(BattleError, match="JSON object"):
        battle_from_dict([GOOD])


def test_empty_province_thrown_only_by_the_attacker():
    with pytest.raises(BattleError, match="thrown.red"):
        battle_from_dict({**GOOD, "defender": None})


# --- Properties over random battles -----------------------------------------------------------


def counts_of(colours, high):
    return st.dictionaries(st.sampled_from(colours), st.integers(0, high))


@st.composite
def battles(draw):
    attacker = draw(st.sampled_from(PLAYERS))
    defender = draw(st.one_of(st.none(), st.sampled_from([p for p in PLAYERS if p != attacker])))
    thrown = {attacker: draw(st.integers(1, 12))}
    if defender is not None:
        thrown[defender] = draw(st.integers(0, 12))
    return Battle(
        attacker,
        defender,
        thrown=thrown,
        emerged=draw(counts_of(ALL, 12)),
        cup=draw(counts_of(ALL, 4)),
        revolt_markers=draw(st.integers(0, 4)),
        pending_action=draw(st.booleans()),
    )


PROPERTY = settings(max_examples=300, derandomize=True, deadline=None)


@PROPERTY
@given(battles())
def test_every_cube_is_accounted_for(battle):
    o = resolve(battle)
    # every emerged cube goes to exactly one place...
    placed = Counter(o.to_supply) + Counter(o.to_province) + Counter(o.cup_after)
    assert placed == Counter(battle.emerged)
    # ...and what went in = what stays in the tower + what came out
    for colour in set(into_tower(battle)) | set(battle.emerged) | set(o.tower_delta):
        assert into_tower(battle).get(colour, 0) == o.tower_delta.get(
            colour, 0
        ) + battle.emerged.get(colour, 0)
    assert all(
        o.to_dict()[key].get(c) != 0
        for key in ("to_supply", "to_province", "cup_after", "tower_delta")
        for c in o.to_dict()[key]
    )  # zeros omitted


@PROPERTY
@given(battles())
def test_strengths_decide_the_winner_and_owner(battle):
    o = resolve(battle)
    a, d = o.attacker_strength, o.defender_strength
    assert a >= 0 and d >= 0
    assert a == battle.emerged.get(battle.attacker, 0)
    assert o.result == ("held" if d > a else "devastated" if d == a else "conquered")
    owner = {"held": battle.defender, "devastated": None, "conquered": battle.attacker}[o.result]
    assert o.province_owner == owner
    assert set(o.to_province) <= {owner} - {None}
    assert battle.farmer not in o.to_province  # farmers never occupy
    assert o.revolt_marker_added == (o.result == "conquered" and battle.defender is None)
    assert o.cancel_pending_action == (o.result == "conquered" and battle.pending_action)
    if o.result == "conquered":  # the attacker loses exactly the defence's strength
        assert o.to_province[battle.attacker] == a - d
    if o.result == "held" and battle.defender is not None:
        # the defence loses a cubes, farmers first; surviving farmers leave, the rest stay
        farmers = battle.emerged.get("green", 0) if battle.revolt_markers < 2 else 0
        assert o.to_province.get(battle.defender, 0) == d - a - max(0, farmers - a)


@PROPERTY
@given(battles(), st.sampled_from(PLAYERS), st.integers(1, 5))
def test_uninvolved_cubes_change_nothing_but_the_cup(battle, colour, extra):
    assume(colour not in (battle.attacker, battle.defender))
    more = dict(battle.emerged)
    more[colour] = more.get(colour, 0) + extra
    a, b = resolve(battle), resolve(Battle(**{**battle.__dict__, "emerged": more}))
    assert (a.result, a.to_supply, a.to_province) == (b.result, b.to_supply, b.to_province)
    assert b.cup_after[colour] == a.cup_after.get(colour, 0) + extra
