"""Each behaviour of the card and of Tier 2, on the Risk Europe board."""

import pytest

from companion.rules.automaton import apply_action, decide
from companion.rules.dice import Dice
from companion.rules.maneuver import reach
from companion.rules.state import StateError

F, A, C, S = "footman", "archer", "cavalry", "siege_engine"


def one(state, order, colour="blue", dice=None):
    actions = decide(state, colour, order, dice or Dice(0))
    assert len(actions) == 1
    return actions[0]


# --- Expand ----------------------------------------------------------------------------------


def test_expand_the_issue_sentence(make_state):
    state = make_state({"Franconia": {"blue": {F: 2, C: 4}}, "Saxony": {"red": {F: 2}}})
    a = one(state, "expand")
    assert a.text == (
        "Blue expands from Franconia into Saxony (Berlin) with 5: 4 cavalry, 1 footman; "
        "1 footman stays. Red defends with 2: battle."
    )
    d = a.to_dict()
    assert (d["action"], d["from"], d["to"], d["path"]) == (
        "expand",
        "Franconia",
        "Saxony",
        ["Franconia", "Saxony"],
    )
    assert d["units"] == {F: 1, C: 4} and d["left_behind"] == {F: 1} and d["attack"] is True
    after = apply_action(state, a)
    assert after.disputed("Saxony") and after.territory("Saxony").attacker == "blue"
    assert after.units("Franconia", "blue") == {F: 1} and after.log[-1]["to"] == "Saxony"


def test_expand_highest_tax_then_castle_needs_a_siege_engine(make_state):
    units = {"Franconia": {"blue": {F: 2, C: 4}}, "Saxony": {"red": {F: 2}}}
    assert one(make_state(units, castles=["Saxony"]), "expand").details["to"] == "Swabia"
    units["Franconia"]["blue"][S] = 1
    assert one(make_state(units, castles=["Saxony"]), "expand").details["to"] == "Saxony"


def test_expand_respects_the_threshold(make_state):
    state = make_state({"Franconia": {"blue": {F: 2, C: 4}}, "Saxony": {"red": {F: 6}}})
    assert one(state, "expand").details["to"] == "Swabia"  # 5 may not attack 6


def test_expand_largest_army_then_fewest_defenders_then_die(make_state):
    state = make_state({"Franconia": {"blue": {F: 6}}, "Bohemia": {"blue": {F: 4}}})
    assert one(state, "expand").details["from"] == "Franconia"
    state = make_state(
        {
            "Galicia": {"blue": {F: 6}},
            "Hungary": {"blue": {F: 1}},
            "Poland": {"red": {F: 3}},
            "Rusland": {"red": {F: 1}},
        }
    )
    assert one(state, "expand").details["to"] == "Rusland"
    state = make_state({"Galicia": {"blue": {F: 6}}, "Hungary": {"blue": {F: 1}}})
    picked = {
        one(state, "expand", dice=Dice(source=lambda sides, why, v=v: v)).details["to"]
        for v in (1, 2)
    }
    assert picked == {"Poland", "Rusland"}
    a = one(state, "expand", dice=Dice(source=lambda sides, why: 2))
    assert a.to_dict()["rolls"] == [{"die": 2, "value": 2, "reason": "expand: tie between targets"}]


def test_expand_falls_back_to_position(make_state):
    state = make_state({"Lithuania": {"blue": {F: 4}}})
    a = one(state, "expand")
    assert a.action == "position" and a.details["instead_of"] == "expand"
    assert a.details["toward"] == "Rep. Novgorod" and a.details["to"] in ("Estonia", "Smolensk")
    assert a.details["units"] == {F: 3}


# --- Split Expand ----------------------------------------------------------------------------


def test_split_expand_never_passes_an_enemy_territory(make_state):
    open_ = make_state({"Lithuania": {"blue": {C: 4}}, "Poland": {"red": {F: 1}}})
    a = one(open_, "split-expand")
    assert a.details["to"] == "Rep. Novgorod" and len(a.details["path"]) == 3
    blocked = make_state(
        {
            "Lithuania": {"blue": {C: 4}},
            "Poland": {"red": {F: 1}},
            "Estonia": {"red": {F: 1}},
            "Smolensk": {"red": {F: 1}},
        }
    )
    a = one(blocked, "split-expand")
    assert a.details["to"] == "Rusland" and a.details["path"] == ["Lithuania", "Polotsk", "Rusland"]


def test_split_expand_prefers_one_step_then_fewest_defenders(make_state):
    state = make_state({"Prussia": {"blue": {C: 4}}, "Poland": {"red": {F: 2}}})
    a = one(state, "split-expand")
    assert a.details["path"] == ["Prussia", "Poland"] and a.details["attack"]


def test_split_expand_falls_back_to_maneuver(make_state):
    red = {"red": {F: 5}}  # 4 arriving may not attack 5
    state = make_state(
        {
            "Lithuania": {"blue": {F: 5}},
            "Polotsk": {"blue": {F: 1}},
            "Estonia": red,
            "Smolensk": red,
            "Poland": red,
            "Rusland": red,
            "Pomerania": red,
            "Prussia": red,
        }
    )
    a = one(state, "split-expand")
    assert a.action == "maneuver" and a.details["instead_of"] == "split-expand"


# --- Maneuver --------------------------------------------------------------------------------


def test_maneuver_reinforces_a_disputed_territory_first(make_state):
    state = make_state(
        {
            "Bohemia": {"blue": {F: 2}, "red": {F: 2}},
            "Franconia": {"blue": {F: 5}},
            "Poland": {"blue": {F: 9}},
        }
    )
    a = one(state, "maneuver")
    assert a.details["purpose"] == "threatened" and a.details["to"] == "Bohemia"
    assert a.details["from"] == "Poland" and not a.details["battle"]  # the largest army
    assert all(x.details["from"] != "Bohemia" for x in decide(state, "blue", "maneuver", Dice(1)))


def test_maneuver_reinforces_the_highest_tax_threatened_territory(make_state):
    state = make_state(
        {
            "Saxony": {"blue": {F: 4}},
            "Swabia": {"blue": {F: 2}},
            "Franconia": {"blue": {F: 6}},
            "Friesland": {"red": {F: 1}},
            "Bavaria": {"red": {F: 1}},
        }
    )
    a = one(state, "maneuver")
    assert (a.details["purpose"], a.details["from"], a.details["to"]) == (
        "threatened",
        "Franconia",
        "Saxony",
    )
    assert a.details["units"] == {F: 5} and a.details["left_behind"] == {F: 1}


def test_maneuver_reinforces_the_frontline_when_no_threat_is_reachable(make_state):
    state = make_state(
        {
            "Poland": {"blue": {F: 2}, "red": {F: 2}},
            "Bavaria": {"blue": {C: 6}},
            "Franconia": {"blue": {F: 1}},
            "Saxony": {"red": {F: 3}},
        }
    )
    a = one(state, "maneuver")
    assert (a.details["purpose"], a.details["from"], a.details["to"]) == (
        "frontline",
        "Bavaria",
        "Franconia",
    )


def test_maneuver_repositions_toward_an_open_city(make_state):
    state = make_state({"Lithuania": {"blue": {F: 5}}, "Polotsk": {"blue": {F: 1}}})
    a = one(state, "maneuver")
    assert (a.details["purpose"], a.details["from"], a.details["to"]) == (
        "reposition",
        "Lithuania",
        "Polotsk",
    )


def test_maneuver_travels_only_through_own_territory(make_state):
    # Franconia -> Bavaria (empty) -> Hungary (own): not through empty land
    state = make_state({"Franconia": {"blue": {F: 5}}, "Hungary": {"blue": {F: 1}}})
    assert reach(state, "blue", "Franconia") == {}
    assert decide(state, "blue", "maneuver", Dice(0)) == []
    state = make_state(
        {"Franconia": {"blue": {F: 5}}, "Bavaria": {"blue": {F: 1}}, "Hungary": {"blue": {F: 1}}}
    )
    assert reach(state, "blue", "Franconia") == {
        "Bavaria": ["Franconia", "Bavaria"],
        "Hungary": ["Franconia", "Bavaria", "Hungary"],
    }
    state = make_state(
        {
            "Franconia": {"blue": {F: 5}},
            "Bavaria": {"blue": {F: 1}, "red": {F: 1}},
            "Hungary": {"blue": {F: 1}},
        }
    )
    # a disputed territory stops the units: Hungary is out of reach through it
    assert reach(state, "blue", "Franconia") == {"Bavaria": ["Franconia", "Bavaria"]}


# --- Tier 2 ----------------------------------------------------------------------------------


def test_tax_or_spend_taxes_at_4_coins_the_best_city(make_state):
    units = {
        "Saxony": {"blue": {F: 4}},
        "Rep. Novgorod": {"blue": {F: 4}},
        "Poland": {"blue": {F: 2}},
    }
    state = make_state(units, players={"blue": {"coins": 4, "crowns": 2}})
    a = one(state, "tax-or-spend")
    assert a.action == "tax" and a.details == {"city": "Saxony", "coins": 4, "crowns": 1}
    after = apply_action(state, a)
    assert after.player("blue").coins == 8 and after.player("blue").crowns == 3


def test_tax_or_spend_spends_at_5_and_places_purchases(make_state):
    units = {"Saxony": {"blue": {F: 4}}, "Swabia": {"blue": {F: 2}}, "Lorraine": {"blue": {F: 1}}}
    state = make_state(units, players={"blue": {"coins": 18, "crowns": 2}})
    a = one(state, "tax-or-spend")
    d = a.details
    assert a.action == "purchase" and d["buys"] == {F: 2, C: 1, "castle": 1}
    assert d["spent"] == 17 and d["coins_left"] == 1 and d["castle_at"] == "Saxony"
    assert d["placements"] == {"Saxony": {C: 1, F: 1}, "Swabia": {F: 1}}
    after = apply_action(state, a)
    assert after.territory("Saxony").castle and after.player("blue").coins == 1
    assert after.units("Saxony", "blue") == {F: 5, C: 1}


def test_spend_wins_with_a_crown_card(make_state):
    state = make_state({"Saxony": {"blue": {F: 4}}}, players={"blue": {"coins": 10, "crowns": 6}})
    a = one(state, "spend")
    assert a.to_dict()["buys"] == {"crown_card": 1}
    after = apply_action(state, a)
    assert after.player("blue").crowns == 7 and after.winner == "blue"


def test_spend_below_5_does_nothing(make_state):
    state = make_state({"Saxony": {"blue": {F: 4}}}, players={"blue": {"coins": 4}})
    assert decide(state, "blue", "spend", Dice(0)) == []


def test_siege_engines_go_next_to_an_enemy_castle(make_state):
    units = {"Rome": {"blue": {F: 4}}, "Bavaria": {"blue": {F: 1}}, "Saxony": {"red": {F: 3}}}
    state = make_state(units, players={"blue": {"coins": 10}}, castles=["Saxony"])
    assert one(state, "spend").details["placements"] == {"Bavaria": {S: 1}}


def test_fortify_the_weakest_city_four_with_a_castle(make_state):
    state = make_state({"Saxony": {"blue": {F: 4}}, "Swabia": {"blue": {F: 5}}}, castles=["Saxony"])
    a = one(state, "fortify")
    assert a.details == {"territory": "Saxony", "units": {F: 4}}
    state = make_state({"Saxony": {"blue": {F: 5}}, "Swabia": {"blue": {F: 5}}})
    assert one(state, "fortify").details == {"territory": "Saxony", "units": {F: 3}}
    state = make_state(
        {"Saxony": {"blue": {F: 5}}, "Swabia": {"blue": {F: 5}}},
        players={"blue": {"capital": "Swabia"}},
    )
    assert one(state, "fortify").details["territory"] == "Saxony"  # tax before capital


def test_siege_assault_hits_the_biggest_neighbour_not_across_the_sea(make_state):
    state = make_state(
        {
            "Franconia": {"blue": {S: 2, F: 1}},
            "Saxony": {"red": {F: 2, C: 3}},
            "Bavaria": {"red": {F: 2}},
        }
    )
    a = one(state, "siege-assault", dice=Dice(source=lambda sides, why: 4 if sides == 6 else 1))
    assert a.details["to"] == "Saxony" and a.details["dice"] == [4, 4, 4, 4]
    assert a.details["hits"] == 4 and a.details["losses"] == {F: 2, C: 2}
    assert apply_action(state, a).units("Saxony", "red") == {C: 1}
    sea = make_state({"England": {"blue": {S: 1, F: 3}}, "Normandy": {"red": {F: 2}}})
    assert decide(sea, "blue", "siege-assault", Dice(0)) == []


def test_king_me_takes_the_token_next_round(make_state):
    state = make_state({"Saxony": {"blue": {F: 4}}, "Rome": {"red": {F: 4}}}, first_player="red")
    after = apply_action(state, one(state, "king-me"))
    assert after.next_first_player == "blue" and after.first_player == "red"


def test_unknown_order_or_player(make_state):
    state = make_state({"Saxony": {"blue": {F: 4}}})
    with pytest.raises(StateError, match="unknown order 'attack'"):
        decide(state, "blue", "attack", Dice(0))
    with pytest.raises(StateError, match="unknown player 'green'"):
        decide(state, "green", "expand", Dice(0))
