"""Tax or Spend, placing purchases, Fortify (docs/rules.md section 3, Tier 2 from the Risk Europe
solo rules; the purchase itself is the card's table, `purchase.py`)."""

from __future__ import annotations

from companion.rules import purchase as table
from companion.rules.actions import Action, colour_name
from companion.rules.army import own
from companion.rules.dice import Dice, best
from companion.rules.state import GameState
from companion.rules.units import (
    ARCHER,
    CASTLE,
    CAVALRY,
    CROWN_CARD,
    FOOTMAN,
    SIEGE_ENGINE,
    describe,
)

TAX_AT_MOST = 4  # "with 4 coins or fewer it taxes ... with 5 or more it spends"
# Interpretation (Tier 2): taxing a gold-crown city (a capital in the map's `start`, the city
# "with a bonus") also earns this many crowns, the crown track that lets a game be won.
CROWNS_FOR_GOLD_CROWN_CITY = 1
FORTIFY_FOOTMEN = 3  # to a city...
FORTIFY_FOOTMEN_CASTLE = 4  # ...or to a castle territory
# Units placed one at a time, best first (siege engines are placed on their own, see below).
PLACE_ORDER = (CAVALRY, ARCHER, FOOTMAN)


def own_cities(state: GameState, colour: str) -> list[str]:
    return [c for c in state.board.tax if own(state, colour, c)]


def tax_or_spend(state: GameState, colour: str, dice: Dice) -> Action | None:
    """TAX OR SPEND: 4 coins or fewer: tax; 5 or more: spend by the table."""
    if state.player(colour).coins <= TAX_AT_MOST:
        return tax(state, colour, dice)
    return spend(state, colour, dice)


def tax(state: GameState, colour: str, dice: Dice) -> Action | None:
    """Tax the own city that yields most (ties: a gold-crown city, then a die)."""
    gold = set(state.board.gold_crown_cities)
    city = best(
        own_cities(state, colour),
        lambda c: (
            state.board.tax_of(c),  # yields most
            c in gold,  # ties: city with a bonus
        ),
        dice,
        "tax: tie between cities",
    )  # then die
    if city is None:
        return None
    coins = state.board.tax_of(city)
    crowns = CROWNS_FOR_GOLD_CROWN_CITY if city in gold else 0
    text = f"{colour_name(colour)} taxes {state.board.label(city)}: +{coins} coins"
    text += f" and +{crowns} crown." if crowns else "."
    return Action("tax", colour, {"city": city, "coins": coins, "crowns": crowns}, text)


def spend(state: GameState, colour: str, dice: Dice) -> Action | None:
    """SPEND by the purchase table (Crown Card override first), then place what was bought.
    None when nothing can be bought or placed (below 5 coins, nowhere to put units)."""
    player = state.player(colour)
    territories = [t for t in state.territories if own(state, colour, t)]
    cities = own_cities(state, colour)
    castle_sites = [c for c in cities if not state.territory(c).castle]
    castles = min(1, state.castles_left()) if castle_sites else 0
    choice = table.choose(player.coins, player.crowns, state.supply(colour), castles)
    if choice is None:
        return None
    units = {k: n for k, n in choice.buys.items() if k not in (CASTLE, CROWN_CARD)}
    if units and not territories:
        return None  # nowhere to put them: nothing is bought
    placements: dict[str, dict[str, int]] = {}
    castle_at = None
    if choice.buys.get(CASTLE):
        castle_at = best(
            castle_sites,
            lambda c: (state.board.tax_of(c), -_units(state, c)),
            dice,
            "castle: tie between cities",
        )
    if units.get(SIEGE_ENGINE):
        site = _siege_site(state, colour, territories, cities, dice)
        placements.setdefault(site, {})[SIEGE_ENGINE] = units[SIEGE_ENGINE]
    # Units one at a time, best first, spread over its highest-Tax cities (round robin).
    order = sorted(cities, key=lambda c: (-state.board.tax_of(c), _units(state, c)))
    if not order and territories:  # no city: its strongest territory
        order = [max(territories, key=lambda t: _units(state, t))]
    i = 0
    for kind in PLACE_ORDER:
        for _ in range(units.get(kind, 0)):
            site = order[i % len(order)]
            placements.setdefault(site, {})[kind] = placements.get(site, {}).get(kind, 0) + 1
            i += 1
    crowns = choice.buys.get(CROWN_CARD, 0)
    details = {
        "buys": dict(choice.buys),
        "spent": choice.spent,
        "coins_left": choice.coins_left,
        "row": choice.row,
        "placements": placements,
        "castle_at": castle_at,
        "crowns": crowns,
    }
    if choice.notes:
        details["notes"] = list(choice.notes)
    name = colour_name(colour)
    if crowns:
        text = (
            f"{name} buys a Crown Card for {choice.spent} coins: {player.crowns + crowns} crowns."
        )
    else:
        text = (
            f"{name} spends {choice.spent} on {describe(choice.buys)}; "
            f"{choice.coins_left} coins left."
        )
        for site, placed in placements.items():
            text += f" {describe(placed)} to {state.board.label(site)}."
        if castle_at:
            text += f" The castle goes to {state.board.label(castle_at)}."
    return Action("purchase", colour, details, text)


def _units(state: GameState, territory: str) -> int:
    return sum(sum(u.values()) for u in state.territory(territory).units.values())


def _siege_site(state: GameState, colour: str, territories, cities, dice: Dice) -> str:
    """Its territory nearest an enemy castle; without one in sight, its highest-Tax city."""
    distance = state.board.distance
    enemy_castles = [
        t for t, v in state.territories.items() if v.castle and colour not in v.units and v.units
    ]
    if enemy_castles:
        return best(
            territories,
            lambda t: (-min(distance[t].get(c, 99) for c in enemy_castles),),
            dice,
            "siege engine: tie between territories",
        )
    if cities:
        return best(
            cities,
            lambda c: (state.board.tax_of(c), _units(state, c)),
            dice,
            "siege engine: tie between cities",
        )
    return max(territories, key=lambda t: _units(state, t))


def fortify(state: GameState, colour: str, dice: Dice) -> Action | None:
    """FORTIFY: 3 footmen to a city or 4 to a castle territory, the one with the fewest units
    (ties: highest Tax, capital, die). Fewer when the supply runs short; None when empty."""
    supply = state.supply(colour)[FOOTMAN]
    capital = state.player(colour).capital
    city = best(
        own_cities(state, colour),
        lambda c: (
            -state.count(c, colour),  # fewest units
            state.board.tax_of(c),  # ties: highest Tax
            c == capital,  # capital
        ),
        dice,
        "fortify: tie between cities",
    )  # die
    if city is None or supply == 0:
        return None
    wanted = FORTIFY_FOOTMEN_CASTLE if state.territory(city).castle else FORTIFY_FOOTMEN
    n = min(wanted, supply)
    text = f"{colour_name(colour)} fortifies {state.board.label(city)} with {n} footmen."
    return Action("fortify", colour, {"territory": city, "units": {FOOTMAN: n}}, text)
