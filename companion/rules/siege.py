"""Siege Assault (docs/rules.md section 3, Tier 2 from the Risk Europe solo rules).

Interpretation (Risk Europe's Siege Assault order): the siege engines of one own, undisputed
territory fire at an adjacent, undisputed enemy territory, never across a sea line: two dice per
siege engine, each die of HIT_FROM or more removes one enemy unit (cheapest first), no return fire.
Target: the adjacent territory with the most enemy units (ties: the colour with most units on
the board, then a die); the territory with the most siege engines next to it fires.
"""

from __future__ import annotations

from companion.rules.actions import Action, colour_name
from companion.rules.army import own
from companion.rules.dice import Dice, best
from companion.rules.state import GameState
from companion.rules.units import SIEGE_ENGINE, describe, take_cheapest

DICE_PER_SIEGE_ENGINE = 2
HIT_FROM = 4  # "for each die > 3"


def siege_assault(state: GameState, colour: str, dice: Dice) -> Action | None:
    board = state.board
    batteries = {
        t: state.units(t, colour).get(SIEGE_ENGINE, 0)
        for t in state.territories
        if own(state, colour, t)
    }
    batteries = {t: n for t, n in batteries.items() if n}
    targets = sorted(
        {
            n
            for t in batteries
            for n in board.adjacent[t]
            if not board.across_sea(t, n) and state.owner(n) not in (None, colour)
        },
        key=board.territories.index,
    )
    target = best(
        targets,
        lambda t: (
            state.enemies(t, colour),  # most enemy units
            sum(state.on_board(state.owner(t)).values()),  # ties: the colour with most units
        ),
        dice,
        "siege assault: tie between targets",
    )  # then random
    if target is None:
        return None
    sources = [
        t for t in batteries if target in board.adjacent[t] and not board.across_sea(t, target)
    ]
    source = best(sources, lambda t: (batteries[t],), dice, "siege assault: tie between batteries")
    engines = batteries[source]
    values = [
        dice.roll(f"siege assault from {source} on {target}")
        for _ in range(DICE_PER_SIEGE_ENGINE * engines)
    ]
    enemy = state.owner(target)
    hits = sum(v >= HIT_FROM for v in values)
    losses = take_cheapest(state.units(target, enemy), hits)
    text = (
        f"{colour_name(colour)} siege-assaults {board.label(target)} from {board.label(source)} "
        f"with {engines} siege engine{'s' if engines > 1 else ''}: rolled "
        f"{', '.join(map(str, values))}, {hits} hit{'s' if hits != 1 else ''}"
    )
    text += f"; {colour_name(enemy)} loses {describe(losses)}." if losses else "."
    return Action(
        "siege-assault",
        colour,
        {
            "from": source,
            "to": target,
            "siege_engines": engines,
            "dice": values,
            "hits": hits,
            "defender": enemy,
            "losses": losses,
        },
        text,
    )
