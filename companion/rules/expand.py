"""Expand, Split Expand and Position (card). Each priority chain reads top to bottom as on the
card."""

from __future__ import annotations

from companion.rules.actions import Action
from companion.rules.army import armies, entry, move, passable
from companion.rules.dice import Dice, best
from companion.rules.state import GameState


def _enterable_cities(state: GameState, colour: str, source: str):
    """Adjacent cities `colour` does not hold (it has no units there)."""
    board = state.board
    return [
        t
        for t in board.adjacent[source]
        if board.is_city(t) and colour not in state.territory(t).units
    ]


def expand(state: GameState, colour: str, dice: Dice) -> Action | None:
    """EXPAND: move an army from any territory into an adjacent city (non-owned).
    None when no city can be entered (the order then falls back to Position)."""
    tax = state.board.tax_of
    options = []
    for army in armies(state, colour):
        for city in _enterable_cities(state, colour, army.territory):
            defenders = entry(state, colour, city, army.moves)
            if defenders is not None:
                options.append((army, city, defenders))
    chosen = best(
        options,
        lambda o: (
            tax(o[1]),  # highest Tax city
            o[0].size,  # & largest army
            -o[2],  # if tied: fewest defenders
        ),
        dice,
        "expand: tie between targets",
    )  # roll die
    if chosen is None:
        return None
    army, city, _ = chosen
    return move(state, "expand", colour, army, [army.territory, city], "expands")


def split_expand(state: GameState, colour: str, dice: Dice) -> Action | None:
    """SPLIT EXPAND: move one army up to 2 territories toward a city to enter it, never through
    an enemy territory. None when no city can be reached (the order falls back to Maneuver)."""
    board = state.board
    routes: dict[tuple[str, str], tuple] = {}
    for army in armies(state, colour):
        src = army.territory
        for city in _enterable_cities(state, colour, src):
            routes[src, city] = (army, [src, city])
        for mid in board.adjacent[src]:
            if not passable(state, colour, mid):
                continue  # an enemy territory: the army would have to stop there and fight
            for city in _enterable_cities(state, colour, mid):
                if city != src:
                    routes.setdefault((src, city), (army, [src, mid, city]))
    options = []
    for army, path in routes.values():
        defenders = entry(state, colour, path[-1], army.moves)
        if defenders is not None:
            options.append((army, path, defenders))
    chosen = best(
        options,
        lambda o: (
            board.tax_of(o[1][-1]),  # highest Tax
            -len(o[1]),  # -> 1 step preferred over 2
            -o[2],  # -> fewest defenders
            o[0].size,  # -> (Tier 2) most units on arrival
        ),
        dice,
        "split expand: tie between targets",
    )  # -> roll die
    if chosen is None:
        return None
    army, path, _ = chosen
    return move(state, "split-expand", colour, army, path, "split-expands")


def position(state: GameState, colour: str, dice: Dice) -> Action | None:
    """POSITION: move the largest army one step toward the highest-Tax non-owned city.
    Interpretation: an army whose step toward its best city is barred (threshold, castle) is
    skipped and the next largest moves; the step prefers own, then empty, then enemy land."""
    board = state.board
    distance = board.distance
    targets = [c for c in board.tax if state.owner(c) != colour]
    options = []
    for army in armies(state, colour):
        src = army.territory
        for city in targets:
            d = distance[src].get(city)
            if d is None or d == 0:
                continue
            for step in board.adjacent[src]:
                if distance[step].get(city) != d - 1:
                    continue
                defenders = entry(state, colour, step, army.moves)
                if defenders is None:
                    continue
                here = state.territory(step).units
                kind = 2 if colour in here else (1 if not here else 0)
                options.append((army, step, city, d, kind))
    chosen = best(
        options,
        lambda o: (
            o[0].size,  # the largest army
            board.tax_of(o[2]),  # toward the highest-Tax non-owned city
            -o[3],  # (the nearest of those)
            o[4],  # stepping on own, then empty, then enemy land
        ),
        dice,
        "position: tie between moves",
    )
    if chosen is None:
        return None
    army, step, city, _, _ = chosen
    return move(
        state,
        "position",
        colour,
        army,
        [army.territory, step],
        "positions",
        why=f" toward {board.label(city)}",
        toward=city,
    )
