"""What an automaton buys (card: purchase table, substitutions, kept coins, Crown Card override)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from companion.rules.units import (
    ARCHER,
    CASTLE,
    CAVALRY,
    CROWN_CARD,
    FOOTMAN,
    PRICES,
    SIEGE_ENGINE,
    clean,
    name,
    price,
)

F, A, C, S, K = FOOTMAN, ARCHER, CAVALRY, SIEGE_ENGINE, CASTLE
# The card's table, row by coin count.
PURCHASE_TABLE: Mapping[int, Mapping[str, int]] = {
    5: {F: 2, C: 1},
    6: {F: 1, A: 1, C: 1},
    7: {F: 2, A: 1, C: 1},
    8: {F: 2, C: 2},
    9: {F: 2, A: 2, C: 1},
    10: {S: 1},
    11: {F: 1, S: 1},
    12: {K: 1},
    13: {C: 1, S: 1},
    14: {F: 2, K: 1},
    15: {F: 2, C: 1, S: 1},
    16: {F: 2, A: 1, K: 1},
    17: {F: 2, A: 1, C: 1, S: 1},
    18: {F: 2, C: 1, K: 1},
    19: {F: 2, A: 2, C: 1, S: 1},
    20: {F: 3, A: 1, C: 1, K: 1},
}
MIN_SPEND = min(PURCHASE_TABLE)
# "Missing a figure type -> substitute 2 Footmen <-> 1 Archer."
FOOTMEN_PER_ARCHER = 2
# Crown Card override: at exactly this many crowns, with the card's price in hand, buy it: it wins.
CROWN_CARD_AT_CROWNS = 6
WINNING_CROWNS = 7


@dataclass(frozen=True)
class Purchase:
    row: int  # the table row used (0: the Crown Card override)
    buys: Mapping[str, int]
    spent: int  # price of what is actually bought (docs/rules.md 2 Interpretation)
    coins_left: int
    notes: tuple[str, ...] = ()  # substitutions and shortages, for the log and the text


def table_row(coins: int) -> int | None:
    """The row of the exact coin count, or the highest row not above it; None below 5."""
    rows = [row for row in PURCHASE_TABLE if row <= coins]
    return max(rows) if rows else None


def choose(
    coins: int, crowns: int, supply: Mapping[str, int], castles_left: int
) -> Purchase | None:
    """What to buy with `coins`. `supply`: figures left per unit type; `castles_left`: castles
    that can be bought and placed. None when nothing can be bought."""
    if crowns == CROWN_CARD_AT_CROWNS and coins >= PRICES[CROWN_CARD]:
        # Crown Cards are always available: no supply check.
        return Purchase(0, {CROWN_CARD: 1}, PRICES[CROWN_CARD], coins - PRICES[CROWN_CARD])
    row = table_row(coins)
    if row is None:
        return None
    want = dict(PURCHASE_TABLE[row])
    stock = dict(supply) | {K: castles_left}
    buys: dict[str, int] = {}
    notes: list[str] = []
    for kind in (C, S, K):  # no substitute for these: the coins are kept
        got = min(want.get(kind, 0), stock.get(kind, 0))
        buys[kind] = got
        if got < want.get(kind, 0):
            notes.append(f"no {name(kind)} left: {want[kind] - got} not bought, coins kept")
    archers = min(want.get(A, 0), stock.get(A, 0))
    footmen_wanted = want.get(F, 0)
    if archers < want.get(A, 0):
        extra = FOOTMEN_PER_ARCHER * (want[A] - archers)
        footmen_wanted += extra
        notes.append(f"no archer left: {extra} footmen instead of {want[A] - archers} archer(s)")
    footmen = min(footmen_wanted, stock.get(F, 0))
    missing = footmen_wanted - footmen
    if missing:
        # Pairs of missing footmen become an archer; a single one too if the coins allow.
        spare_archers = stock.get(A, 0) - archers
        instead = min(spare_archers, missing // FOOTMEN_PER_ARCHER)
        budget = coins - price(
            {F: footmen, A: archers + instead, **{k: buys[k] for k in (C, S, K)}}
        )
        if missing % FOOTMEN_PER_ARCHER and spare_archers > instead and budget >= PRICES[A]:
            instead += 1
        archers += instead
        if instead:
            notes.append(f"no footman left: {instead} archer(s) instead of {missing} footmen")
        if missing > instead * FOOTMEN_PER_ARCHER:
            notes.append(
                f"no footman left: {missing - instead * FOOTMEN_PER_ARCHER} not bought, coins kept"
            )
    buys[F], buys[A] = footmen, archers
    buys = clean(buys)
    if not buys:
        return None
    spent = price(buys)
    return Purchase(row, buys, spent, coins - spent, tuple(notes))
