"""An automaton's deck (docs/rules.md section 3, Tier 2 from the Risk Europe solo rules).

Each card is one or two orders, done in the order listed: Siege Assault and Fortify come before
the card's other half, King Me before its Tax or Spend.
"""

from __future__ import annotations

from collections.abc import Mapping

# Orders the automaton understands (`decide`). The two card-only orders chain fall-backs.
EXPAND, SPLIT_EXPAND, POSITION, MANEUVER = "expand", "split-expand", "position", "maneuver"
SPEND, TAX_OR_SPEND, FORTIFY = "spend", "tax-or-spend", "fortify"
SIEGE_ASSAULT, KING_ME = "siege-assault", "king-me"
EXPAND_OR_MANEUVER = "expand-or-maneuver"
SPLIT_EXPAND_OR_MANEUVER = "split-expand-or-maneuver"
# What `companion automaton --order` accepts (the list).
ORDERS = (
    EXPAND,
    SPLIT_EXPAND,
    POSITION,
    MANEUVER,
    SPEND,
    TAX_OR_SPEND,
    FORTIFY,
    SIEGE_ASSAULT,
    KING_ME,
)

CARDS: Mapping[str, tuple[str, ...]] = {
    "tax-or-spend": (TAX_OR_SPEND,),
    "king-me/tax-or-spend": (KING_ME, TAX_OR_SPEND),
    "siege-assault/expand-or-maneuver": (SIEGE_ASSAULT, EXPAND_OR_MANEUVER),
    "fortify/expand-or-maneuver": (FORTIFY, EXPAND_OR_MANEUVER),
    "split-expand-or-maneuver": (SPLIT_EXPAND_OR_MANEUVER,),
}
# The 8 cards of each automaton's deck.
DECK = (
    "tax-or-spend",
    "tax-or-spend",
    "king-me/tax-or-spend",
    "siege-assault/expand-or-maneuver",
    "fortify/expand-or-maneuver",
    "fortify/expand-or-maneuver",
    "split-expand-or-maneuver",
    "split-expand-or-maneuver",
)
CARDS_PER_ROUND = 2
