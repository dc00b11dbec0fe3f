"""Armies on the move: who can leave where, who may enter where, and the move action.

Shared by Expand, Split Expand, Position and Maneuver.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from companion.rules import leave_behind
from companion.rules.actions import Action, move_text
from companion.rules.state import GameState
from companion.rules.threshold import may_attack
from companion.rules.units import SIEGE_ENGINE, total

# Interpretation (docs/rules.md 2 "Moves", seed 001): ending a move in an empty territory is
# a tower battle against one farmer; passing through one is not.
EMPTY_TERRITORY_BATTLE = True
# Interpretation (card, Maneuver): "cannot move out of a disputed territory" holds for every
# move: an army in a disputed territory is fighting and stays until the battle is resolved.
DISPUTED_ARMIES_STAY = True


@dataclass(frozen=True)
class Army:
    """The units that would depart `territory`, and those that must stay (leave-behind)."""

    territory: str
    moves: Mapping[str, int]
    stays: Mapping[str, int]

    @property
    def size(self) -> int:
        return total(self.moves)


def armies(state: GameState, colour: str) -> list[Army]:
    """Every army `colour` could move: from its own territories (disputed ones only if
    DISPUTED_ARMIES_STAY is off), leaving the leave-behind units; map order."""
    out = []
    for name, t in state.territories.items():
        units = t.units.get(colour)
        if not units or (DISPUTED_ARMIES_STAY and len(t.units) > 1):
            continue
        stays, moves = leave_behind.split(state.board, name, units)
        if moves:
            out.append(Army(name, moves, stays))
    order = {name: i for i, name in enumerate(state.board.territories)}
    out.sort(key=lambda a: order[a.territory])
    return out


def entry(state: GameState, colour: str, target: str, units: Mapping[str, int]) -> int | None:
    """Enemy units an army would face entering `target`, or None when it may not enter:
    the attack threshold, the castle rule, or a territory already disputed by two others."""
    t = state.territory(target)
    others = [c for c in t.units if c != colour]
    if len(others) > 1:
        return None
    defenders = state.enemies(target, colour)
    castle = t.castle and colour not in t.units
    if not may_attack(total(units), defenders, castle, units.get(SIEGE_ENGINE, 0)):
        return None
    return defenders


def passable(state: GameState, colour: str, territory: str) -> bool:
    """Split Expand may pass through own or empty territories, never an enemy's."""
    return all(c == colour for c in state.territory(territory).units)


def own(state: GameState, colour: str, territory: str) -> bool:
    """Owned by `colour` alone."""
    return state.owner(territory) == colour


def move(
    state: GameState,
    kind: str,
    colour: str,
    army: Army,
    path: list[str],
    verb: str,
    why: str = "",
    **extra,
) -> Action:
    """The action moving `army` along `path`; says whether a battle follows."""
    target = path[-1]
    t = state.territory(target)
    enemies = [c for c in t.units if c != colour]
    # A maneuver only goes to own or disputed territories: a disputed one's battle is pending.
    defender = enemies[0] if enemies and kind != "maneuver" else None
    defenders = state.enemies(target, colour)
    battle = defender is not None or (EMPTY_TERRITORY_BATTLE and not t.units)
    details = {
        "from": path[0],
        "to": target,
        "path": path,
        "units": dict(army.moves),
        "left_behind": dict(army.stays),
        "attack": defender is not None,
        "defender": defender,
        "battle": battle,
        **extra,
    }
    text = move_text(
        state.board, verb, colour, path, army.moves, army.stays, defender, defenders, battle, why
    )
    return Action(kind, colour, details, text)
