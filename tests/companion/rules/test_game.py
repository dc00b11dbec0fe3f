"""Game flow: solo setup, rounds and cards, battles onto the board, people's moves and purchases."""

from dataclasses import replace

import pytest

from companion.rules.battle import Battle, resolve
from companion.rules.deck import DECK
from companion.rules.dice import Dice
from companion.rules.game import (
    apply_battle,
    battle_sides,
    draw_card,
    end_round,
    move,
    new_game,
    pending_battles,
    purchase,
    start_round,
    take_turn,
)
from companion.rules.state import StateError

F, A, C, S = "footman", "archer", "cavalry", "siege_engine"


def test_solo_setup(board):
    state = new_game(board, ["red", "blue", "yellow"], Dice(3))
    capitals = {e.territory for e in board.start}
    for colour in ("red", "blue", "yellow"):
        p = state.player(colour)
        assert (p.coins, p.crowns, p.automaton) == (5, 2, True)
        assert sorted(p.deck) == sorted(DECK) and p.capital in capitals
        assert state.on_board(colour)[F] == 10
        assert state.territory(p.capital).castle and state.owner(p.capital) == colour
    assert state.castles_left() == board.castles - 3
    assert not any(state.disputed(t) for t in board.territories)
    assert state.log[0]["setup"] and state.log[0]["rolls"]
    assert new_game(board, ["red", "blue", "yellow"], Dice(3)).to_dict() == state.to_dict()
    with pytest.raises(StateError, match="expected 1 to 4 different colours"):
        new_game(board, ["a", "b", "c", "d", "e"], Dice(0))


def test_rounds_draw_two_cards_and_king_me_passes_the_token(board):
    dice = Dice(5)
    state = start_round(new_game(board, ["red", "blue"], dice), dice)
    assert all(len(p.hand) == 2 and len(p.deck) == 6 for p in state.players.values())
    state = state.with_player(
        replace(state.player("blue"), hand=("king-me/tax-or-spend", "tax-or-spend"))
    )
    state, actions = take_turn(state, "blue", 0, dice)
    assert actions[0].action == "king-me" and state.next_first_player == "blue"
    state = start_round(end_round(state), dice)
    assert state.first_player == "blue" and state.turn_order() == ["blue", "red"]
    assert state.round == 2


def test_a_card_that_can_do_nothing_draws_another(board, make_state):
    # two footmen in Warsaw (tax 2) cannot leave: nothing to split-expand or maneuver
    state = make_state(
        {"Poland": {"blue": {F: 2}}},
        players={
            "blue": {"coins": 0, "hand": ["split-expand-or-maneuver"], "deck": ["tax-or-spend"]}
        },
    )
    state, actions = take_turn(state, "blue", 0, Dice(0))
    assert [a.action for a in actions] == ["tax"] and state.player("blue").coins == 2
    assert state.log[0] == {"player": "blue", "draws_again": "tax-or-spend"}
    assert state.player("blue").discard == ("split-expand-or-maneuver", "tax-or-spend")


def test_an_empty_deck_is_reshuffled_and_logged(make_state):
    state = make_state(
        {"Poland": {"blue": {F: 2}}},
        players={"blue": {"discard": ["tax-or-spend", "split-expand-or-maneuver"]}},
    )
    state, card = draw_card(state, "blue", Dice(source=lambda sides, why: sides))
    assert card == "split-expand-or-maneuver" and state.player("blue").deck == ("tax-or-spend",)
    assert state.log[-1]["reshuffle"] == ["split-expand-or-maneuver", "tax-or-spend"]
    assert state.log[-1]["rolls"] == [{"die": 2, "value": 2, "reason": "reshuffle blue's deck"}]


def _attacked(state, territory, attacker):
    return state.with_territory(territory, replace(state.territory(territory), attacker=attacker))


def _fight(state, territory, emerged, cup=None):
    attacker, defender, thrown = battle_sides(state, territory)
    battle = Battle(
        attacker,
        defender,
        thrown,
        emerged=emerged,
        cup=cup or {},
        revolt_markers=state.territory(territory).revolt_markers,
    )
    return apply_battle(state, territory, attacker, resolve(battle))


def test_battle_held_losses_cheapest_first(make_state):
    state = make_state({"Saxony": {"red": {F: 2, C: 2}, "blue": {C: 4}}})
    state = _attacked(state, "Saxony", "blue")
    assert pending_battles(state, "red") == ["Saxony"]
    after = _fight(state, "Saxony", {"blue": 2, "red": 4})  # red 4 > blue 2: holds, loses 2
    assert after.units("Saxony", "red") == {C: 2} and after.units("Saxony", "blue") == {}
    assert after.territory("Saxony").attacker is None and after.log[-1]["result"] == "held"


def test_battle_conquered_and_devastated(make_state, board):
    base = {"Saxony": {"red": {F: 2}, "blue": {F: 1, S: 1, C: 3}}}
    state = make_state(base, castles=["Saxony"])
    state = _attacked(state, "Saxony", "blue")
    won = _fight(state, "Saxony", {"blue": 5, "red": 2})  # blue keeps 3: loses footman, siege
    assert won.units("Saxony", "blue") == {C: 3} and won.owner("Saxony") == "blue"
    assert won.territory("Saxony").castle  # a conquered castle stands
    razed = _fight(state, "Saxony", {"blue": 2, "red": 2})
    assert razed.territory("Saxony").empty


def test_battle_for_an_empty_territory_adds_a_revolt_marker(make_state):
    state = make_state({"Franconia": {"blue": {F: 2, C: 4}}})
    state = move(state, "blue", ["Franconia", "Swabia"], {C: 4})
    attacker, defender, thrown = battle_sides(state, "Swabia")
    assert (attacker, defender, thrown) == ("blue", None, {"blue": 4})
    after = _fight(state, "Swabia", {"blue": 3, "green": 1})
    assert after.units("Swabia", "blue") == {C: 2} and after.territory("Swabia").revolt_markers == 1


def test_cubes_released_beyond_those_thrown_come_from_the_supply(make_state):
    state = make_state({"Saxony": {"red": {C: 2}, "blue": {F: 1}}})
    state = _attacked(state, "Saxony", "blue")
    after = _fight(state, "Saxony", {"blue": 1, "red": 4})  # 4 red out, 2 thrown; red keeps 3
    assert after.units("Saxony", "red") == {F: 1, C: 2}


def test_a_persons_move_is_checked(make_state):
    state = make_state(
        {
            "Franconia": {"blue": {F: 2, C: 4}},
            "Saxony": {"red": {F: 2}},
            "Bohemia": {"red": {F: 1}},
            "Poland": {"blue": {F: 1}, "red": {F: 1}},
        }
    )
    after = move(state, "blue", ["Franconia", "Saxony"], {C: 4, F: 1})
    assert after.territory("Saxony").attacker == "blue" and after.units("Franconia", "blue") == {
        F: 1
    }
    for path, units, message in [
        (["Franconia", "Rome"], {C: 1}, "not adjacent"),
        (["Franconia", "Saxony"], {C: 5}, "has not enough cavalry"),
        (["Franconia", "Saxony"], {C: 4, F: 2}, "must keep 1 unit"),
        (["Franconia", "Bohemia", "Poland"], {C: 1}, "cannot pass through Bohemia"),
        (["Poland", "Galicia"], {F: 1}, "Poland is disputed"),
        (["Franconia", "Saxony"], {"knight": 1}, "unknown unit type 'knight'"),
        (["Franconia"], {C: 1}, "a path of one or two steps"),
    ]:
        with pytest.raises(StateError, match=message):
            move(state, "blue", path, units)


def test_a_persons_purchase_is_checked(make_state):
    state = make_state(
        {"Saxony": {"blue": {F: 4}}, "Bavaria": {"blue": {F: 1}}, "Rome": {"red": {F: 3}}},
        players={"blue": {"coins": 15, "automaton": False}},
    )
    after = purchase(state, "blue", {C: 1, "castle": 1}, {"Bavaria": {C: 1}}, castle_at="Saxony")
    assert after.player("blue").coins == 0 and after.territory("Saxony").castle
    assert after.units("Bavaria", "blue") == {F: 1, C: 1}
    for buys, placements, castle_at, message in [
        ({C: 6}, {"Saxony": {C: 6}}, None, "costs 18 coins, blue has 15"),
        ({C: 1}, {"Rome": {C: 1}}, None, "Rome is not blue's undisputed territory"),
        ({C: 1}, {"Saxony": {F: 1}}, None, "must match the units bought"),
        ({"castle": 1}, {}, "Bavaria", "Bavaria is not blue's city"),
        ({"dragon": 1}, {}, None, "unknown item 'dragon'"),
    ]:
        with pytest.raises(StateError, match=message):
            purchase(state, "blue", buys, placements, castle_at)
