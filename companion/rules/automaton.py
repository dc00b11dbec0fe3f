"""The automaton: `decide` what an order makes it do, `apply_action` to the game state.

Orders and their fall-backs (card):
- expand -> position when no city can be entered;
- split-expand -> maneuver when no city can be reached;
- tax-or-spend: tax with 4 coins or fewer, else spend;
- card halves "expand or maneuver": expand, else maneuver, else position (Interpretation: the
  army still advances when there is nothing to reinforce);
- "split expand or maneuver" is split-expand with its fall-back.
An order that can do nothing gives no action (the game then draws another card).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from companion.rules import deck as orders
from companion.rules.actions import MOVES, Action, colour_name
from companion.rules.dice import Dice
from companion.rules.economy import fortify, spend, tax_or_spend
from companion.rules.expand import expand, position, split_expand
from companion.rules.maneuver import maneuver
from companion.rules.purchase import WINNING_CROWNS
from companion.rules.siege import siege_assault
from companion.rules.state import GameState, StateError
from companion.rules.units import CASTLE, minus, plus

Behaviour = Callable[[GameState, str, Dice], "Action | None"]


def king_me(state: GameState, colour: str, dice: Dice) -> Action | None:
    """KING ME: take the first-player token from the next round."""
    return Action(
        "king-me",
        colour,
        {},
        f"{colour_name(colour)} takes the first-player token for the next round.",
    )


# Each order: the behaviours tried in turn (the first that acts is done).
CHAINS: dict[str, tuple[tuple[str, Behaviour], ...]] = {
    orders.EXPAND: ((orders.EXPAND, expand), (orders.POSITION, position)),
    orders.SPLIT_EXPAND: ((orders.SPLIT_EXPAND, split_expand), (orders.MANEUVER, maneuver)),
    orders.POSITION: ((orders.POSITION, position),),
    orders.MANEUVER: ((orders.MANEUVER, maneuver),),
    orders.SPEND: ((orders.SPEND, spend),),
    orders.TAX_OR_SPEND: ((orders.TAX_OR_SPEND, tax_or_spend),),
    orders.FORTIFY: ((orders.FORTIFY, fortify),),
    orders.SIEGE_ASSAULT: ((orders.SIEGE_ASSAULT, siege_assault),),
    orders.KING_ME: ((orders.KING_ME, king_me),),
    orders.EXPAND_OR_MANEUVER: (
        (orders.EXPAND, expand),
        (orders.MANEUVER, maneuver),
        (orders.POSITION, position),
    ),
    orders.SPLIT_EXPAND_OR_MANEUVER: (
        (orders.SPLIT_EXPAND, split_expand),
        (orders.MANEUVER, maneuver),
    ),
}


def decide(state: GameState, player: str, order: str, rng: Dice) -> list[Action]:
    """The actions `player` performs for `order` (empty when it can do nothing). Every die
    rolled for it is in the action's `rolls` (and in `rng.log`)."""
    state.player(player)  # unknown player: StateError
    if order not in CHAINS:
        raise StateError(f"unknown order {order!r} (orders: {', '.join(CHAINS)})")
    mark = len(rng.log)
    for name, behaviour in CHAINS[order]:
        action = behaviour(state, player, rng)
        if action is not None:
            if name != CHAINS[order][0][0]:
                action = replace(action, details={**action.details, "instead_of": order})
            return [replace(action, rolls=rng.rolls_since(mark))]
    return []


def apply_action(state: GameState, action: Action) -> GameState:
    """The state after `action` (pure). Raises StateError if the action does not fit the state
    (units no longer there), so a stale decision is never applied half-way."""
    colour, d = action.player, action.details
    player = state.player(colour)
    kind = action.action
    if kind in MOVES:
        state = _remove(state, d["from"], colour, d["units"])
        target = d["to"]
        state = state.with_units(target, colour, plus(state.units(target, colour), d["units"]))
        if d.get("battle"):
            state = state.with_territory(target, replace(state.territory(target), attacker=colour))
    elif kind == "siege-assault":
        if d["losses"]:
            state = _remove(state, d["to"], d["defender"], d["losses"])
    elif kind == "tax":
        state = state.with_player(
            replace(player, coins=player.coins + d["coins"], crowns=player.crowns + d["crowns"])
        )
    elif kind == "purchase":
        if d["spent"] > player.coins:
            raise StateError(f"{colour} cannot spend {d['spent']} coins: has {player.coins}")
        state = state.with_player(
            replace(player, coins=player.coins - d["spent"], crowns=player.crowns + d["crowns"])
        )
        for site, units in d["placements"].items():
            state = state.with_units(site, colour, plus(state.units(site, colour), units))
        if d.get("castle_at"):
            t = state.territory(d["castle_at"])
            if t.castle or state.castles_left() < d["buys"].get(CASTLE, 0):
                raise StateError(f"{d['castle_at']}: no castle can be placed there")
            state = state.with_territory(d["castle_at"], replace(t, castle=True))
    elif kind == "fortify":
        site = d["territory"]
        state = state.with_units(site, colour, plus(state.units(site, colour), d["units"]))
    elif kind == "king-me":
        state = replace(state, next_first_player=colour)
    else:
        raise StateError(f"unknown action {kind!r}")
    state = state.logged(action.to_dict())
    winner = state.players[colour]
    if state.winner is None and winner.crowns >= WINNING_CROWNS:
        state = replace(state, winner=colour)
    return state


def _remove(state: GameState, territory: str, colour: str, units) -> GameState:
    try:
        left = minus(state.units(territory, colour), units)
    except ValueError as e:
        raise StateError(f"{territory}: {colour} has {e}") from None
    return state.with_units(territory, colour, left)
