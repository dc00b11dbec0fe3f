"""Unit types, their prices and the orders the card ranks them in (docs/rules.md section 2)."""

from __future__ import annotations

from collections.abc import Mapping

FOOTMAN, ARCHER, CAVALRY, SIEGE_ENGINE = "footman", "archer", "cavalry", "siege_engine"
CASTLE, CROWN_CARD = "castle", "crown_card"

UNIT_TYPES = (FOOTMAN, ARCHER, CAVALRY, SIEGE_ENGINE)
# Card "LEAVE-BEHIND": A. footmen -> B. archers -> C. siege engines -> D. cavalry. The same order
# is used for losses (docs/rules.md 3: "An automaton takes its own losses cheapest first").
CHEAPEST_FIRST = (FOOTMAN, ARCHER, SIEGE_ENGINE, CAVALRY)
# docs/rules.md 3 "Placing purchases": units are placed best first.
BEST_FIRST = (CAVALRY, SIEGE_ENGINE, ARCHER, FOOTMAN)
# Interpretation (docs/rules.md 2): what the automaton pays for what it actually buys.
PRICES = {FOOTMAN: 1, ARCHER: 2, CAVALRY: 3, SIEGE_ENGINE: 10, CASTLE: 12, CROWN_CARD: 10}

_SINGULAR = {
    FOOTMAN: "footman",
    ARCHER: "archer",
    CAVALRY: "cavalry",
    SIEGE_ENGINE: "siege engine",
    CASTLE: "castle",
    CROWN_CARD: "Crown Card",
}
_PLURAL = {
    FOOTMAN: "footmen",
    ARCHER: "archers",
    CAVALRY: "cavalry",
    SIEGE_ENGINE: "siege engines",
    CASTLE: "castles",
    CROWN_CARD: "Crown Cards",
}

Units = Mapping[str, int]


def total(units: Units) -> int:
    return sum(units.values())


def plus(a: Units, b: Units) -> dict[str, int]:
    """Sum of two unit maps, zeros dropped, in UNIT_TYPES order."""
    return clean({t: a.get(t, 0) + b.get(t, 0) for t in set(a) | set(b)})


def minus(a: Units, b: Units) -> dict[str, int]:
    """`a` without `b`; raises ValueError when `b` takes more of a type than `a` has."""
    out = {t: a.get(t, 0) - b.get(t, 0) for t in set(a) | set(b)}
    short = [t for t, n in out.items() if n < 0]
    if short:
        raise ValueError(f"not enough {', '.join(plural(t) for t in short)}")
    return clean(out)


def clean(units: Units) -> dict[str, int]:
    """Positive counts only, in a fixed order (stable JSON and text)."""
    order = {t: i for i, t in enumerate(UNIT_TYPES + (CASTLE, CROWN_CARD))}
    return {t: units[t] for t in sorted(units, key=lambda t: order.get(t, 99)) if units[t] > 0}


def take_cheapest(units: Units, n: int) -> dict[str, int]:
    """The `n` cheapest units of `units` (card order), as a unit map."""
    taken: dict[str, int] = {}
    for t in CHEAPEST_FIRST:
        if n <= 0:
            break
        k = min(n, units.get(t, 0))
        if k:
            taken[t] = k
            n -= k
    return clean(taken)


def price(buys: Units) -> int:
    return sum(PRICES[t] * n for t, n in buys.items())


def name(kind: str, n: int = 1) -> str:
    return _SINGULAR[kind] if n == 1 else _PLURAL[kind]


def plural(kind: str) -> str:
    return _PLURAL[kind]


def describe(units: Units) -> str:
    """'4 cavalry, 1 footman': best first, as a person reads it off the board."""
    order = BEST_FIRST + (CASTLE, CROWN_CARD)
    parts = [f"{units[t]} {name(t, units[t])}" for t in order if units.get(t, 0) > 0]
    return ", ".join(parts) if parts else "nothing"
