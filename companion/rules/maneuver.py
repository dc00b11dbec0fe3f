"""Maneuver (card): relocate units between own territories, at most two steps, through own land.

Priority: reinforce the threatened territory with the highest Tax -> reinforce the frontline
near an enemy city -> reposition. Interpretations (docs/rules.md 2 and ours):
- threatened = own territory that is disputed, else own territory next to an enemy army;
- frontline = own territory next to an enemy-owned city (highest city Tax, then fewest own units);
- reposition = bring an army closer to the nearest city it does not hold;
- the army that moves is the largest one able to get there, preferring one that is not itself
  threatened (or on the frontline); it leaves its leave-behind units.
"""

from __future__ import annotations

from companion.rules.actions import Action
from companion.rules.army import Army, armies, move, own
from companion.rules.dice import Dice, best
from companion.rules.state import GameState


def reach(state: GameState, colour: str, source: str) -> dict[str, list[str]]:
    """Where units from `source` may go: own or disputed (with own units) territories at most
    two steps away, passing only through own territories (a disputed one stops them)."""
    adjacent = state.board.adjacent

    def destination(t: str) -> bool:
        return colour in state.territory(t).units

    paths: dict[str, list[str]] = {}
    for first in adjacent[source]:
        if destination(first):
            paths.setdefault(first, [source, first])
    for first in adjacent[source]:
        if not own(state, colour, first):
            continue
        for second in adjacent[first]:
            if second != source and destination(second):
                paths.setdefault(second, [source, first, second])
    return paths


def threatened(state: GameState, colour: str) -> set[str]:
    disputed = {
        name for name, t in state.territories.items() if colour in t.units and len(t.units) > 1
    }
    if disputed:
        return disputed
    return {
        name
        for name, t in state.territories.items()
        if own(state, colour, name)
        and any(state.enemies(n, colour) for n in state.board.adjacent[name])
    }


def frontline(state: GameState, colour: str) -> dict[str, int]:
    """Own territory -> highest Tax of an adjacent enemy-owned city."""
    board = state.board
    out = {}
    for name in state.territories:
        if not own(state, colour, name):
            continue
        taxes = [
            board.tax_of(n)
            for n in board.adjacent[name]
            if board.is_city(n) and state.owner(n) not in (None, colour)
        ]
        if taxes:
            out[name] = max(taxes)
    return out


def maneuver(state: GameState, colour: str, dice: Dice) -> Action | None:
    """MANEUVER, or None when no units can be relocated."""
    moves = [
        (army, dst, path)
        for army in armies(state, colour)
        for dst, path in reach(state, colour, army.territory).items()
    ]
    tax = state.board.tax_of

    # 1. reinforce threatened territory (highest Tax)
    threat = threatened(state, colour)
    chosen = best(
        [m for m in moves if m[1] in threat],
        lambda m: (
            tax(m[1]),  # highest Tax
            -state.count(m[1], colour),  # the weakest of those
            m[0].territory not in threat,  # taking units from where they are not needed
            m[0].size,  # the largest army
        ),
        dice,
        "maneuver: tie between threatened territories",
    )
    if chosen is not None:
        return _action(state, colour, chosen, "threatened")

    # 2. reinforce frontline near enemy city
    front = frontline(state, colour)
    chosen = best(
        [m for m in moves if m[1] in front],
        lambda m: (
            front[m[1]],  # highest enemy city Tax next to it
            -state.count(m[1], colour),  # then fewest own units
            m[0].territory not in front,
            m[0].size,
        ),
        dice,
        "maneuver: tie between frontline territories",
    )
    if chosen is not None:
        return _action(state, colour, chosen, "frontline")

    # 3. reposition
    near = _nearest_open_city(state, colour)
    closer = [m for m in moves if near.get(m[1], 99) < near.get(m[0].territory, 99)]
    chosen = best(
        closer,
        lambda m: (
            m[0].size,  # the largest army
            near[m[0].territory] - near[m[1]],  # gaining the most ground
        ),
        dice,
        "maneuver: tie between repositions",
    )
    if chosen is not None:
        return _action(state, colour, chosen, "reposition")
    return None


def _nearest_open_city(state: GameState, colour: str) -> dict[str, int]:
    """Per territory, steps to the nearest city `colour` does not hold."""
    cities = [c for c in state.board.tax if state.owner(c) != colour]
    distance = state.board.distance
    return {
        t: min((distance[t].get(c, 99) for c in cities), default=99)
        for t in state.board.territories
    }


_WHY = {
    "threatened": " to reinforce a threatened territory",
    "frontline": " to reinforce the frontline",
    "reposition": " to reposition",
}


def _action(
    state: GameState, colour: str, chosen: tuple[Army, str, list[str]], purpose: str
) -> Action:
    army, _, path = chosen
    return move(
        state, "maneuver", colour, army, path, "maneuvers", why=_WHY[purpose], purpose=purpose
    )
