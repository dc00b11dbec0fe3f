"""A whole game: solo setup, rounds and cards, people's moves and purchases, tower battles.

The table service drives a game with these functions; `companion simulate` drives it with
automatons only. All are pure (a new GameState out); randomness comes from the `Dice` passed in.

    new_game(board, players, dice, automata=None, map_name="risk-europe") -> GameState
    start_round(state, dice) -> GameState            # first player, two cards per automaton
    draw_card(state, colour, dice) -> (GameState, card)
    play_card(state, colour, card, dice) -> (GameState, [Action])
    take_turn(state, colour, phase, dice) -> (GameState, [Action])  # the hand's card `phase`
    end_round(state) -> GameState
    pending_battles(state, active) -> [territory]    # in the order they are fought
    battle_sides(state, territory) -> (attacker, defender | None, thrown per colour)
    apply_battle(state, territory, attacker, outcome) -> GameState
    move(state, colour, path, units) -> GameState    # a person's move, checked
    purchase(state, colour, buys, placements, castle_at=None) -> GameState
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from itertools import pairwise

from companion.rules import leave_behind
from companion.rules.actions import Action, colour_name
from companion.rules.army import EMPTY_TERRITORY_BATTLE, passable
from companion.rules.automaton import apply_action, decide
from companion.rules.battle import DEVASTATED, HELD
from companion.rules.board import DEFAULT_MAP, Board
from companion.rules.deck import CARDS, CARDS_PER_ROUND, DECK
from companion.rules.dice import Dice
from companion.rules.state import GameState, Player, StateError
from companion.rules.units import (
    CASTLE,
    CHEAPEST_FIRST,
    CROWN_CARD,
    FOOTMAN,
    UNIT_TYPES,
    describe,
    minus,
    plus,
    price,
    take_cheapest,
    total,
)

# docs/rules.md 3 "Setup": each player's start.
SETUP_COINS = 5
SETUP_CROWNS = 2
# Interpretation: each player is dealt this many gold-crown capitals of the map's `start`
# (3 + 2 footmen each: the setup's 10 footmen); its castle stands in the first one.
CAPITALS_PER_PLAYER = 2


def new_game(
    board: Board,
    players: Sequence[str],
    dice: Dice,
    automata: Collection[str] | None = None,
    map_name: str = DEFAULT_MAP,
) -> GameState:
    """Solo setup (docs/rules.md 3): seats in `players` order (the first holds the
    first-player token); `automata` = the automaton colours (default: all). Capitals are
    dealt by die rolls."""
    players = [p.strip().lower() for p in players]
    most = len(board.start) // CAPITALS_PER_PLAYER
    if not players or len(set(players)) != len(players) or len(players) > most:
        raise StateError(f"players: expected 1 to {most} different colours, got {players}")
    automata = set(players if automata is None else automata)
    state = GameState(board=board, players={}, map=map_name, first_player=players[0])
    capitals: dict[str, str] = {}
    remaining = list(board.start)
    for _ in range(CAPITALS_PER_PLAYER):
        for colour in players:
            entry = dice.choose(remaining, f"setup: capital for {colour}")
            remaining.remove(entry)
            state = _add(state, entry.territory, colour, {FOOTMAN: entry.footmen})
            if colour not in capitals:
                capitals[colour] = entry.territory
                state = state.with_territory(
                    entry.territory, replace(state.territory(entry.territory), castle=True)
                )
            for partner in entry.partners:
                free = [
                    t for t in partner.options if all(c == colour for c in state.territory(t).units)
                ]
                if free:
                    site = dice.choose(free, f"setup: partner territory for {colour}")
                    state = _add(state, site, colour, {FOOTMAN: partner.footmen})
                    break
            else:
                state = _add(
                    state,
                    entry.territory,
                    colour,
                    {FOOTMAN: sum(p.footmen for p in entry.partners[:1])},
                )
    seats = {}
    for colour in players:
        deck = (
            tuple(dice.shuffle(DECK, f"setup: shuffle {colour}'s deck"))
            if colour in automata
            else ()
        )
        seats[colour] = Player(
            colour, colour in automata, SETUP_COINS, SETUP_CROWNS, capitals[colour], deck=deck
        )
    return replace(state, players=seats).logged(
        {"setup": {c: capitals[c] for c in players}, "rolls": [r.to_dict() for r in dice.log]}
    )


def _add(state: GameState, territory: str, colour: str, units: Mapping[str, int]) -> GameState:
    return state.with_units(territory, colour, plus(state.units(territory, colour), units))


def start_round(state: GameState, dice: Dice) -> GameState:
    """King Me's token passes; every automaton draws CARDS_PER_ROUND cards face down, in order."""
    if state.next_first_player:
        state = replace(state, first_player=state.next_first_player, next_first_player=None)
    for colour in state.turn_order():
        if state.players[colour].automaton:
            for _ in range(CARDS_PER_ROUND):
                state, card = draw_card(state, colour, dice)
                p = state.players[colour]
                state = state.with_player(replace(p, hand=p.hand + (card,)))
    return state.logged({"round": state.round, "first_player": state.first_player})


def draw_card(state: GameState, colour: str, dice: Dice) -> tuple[GameState, str]:
    """The top card of `colour`'s deck; the discards are reshuffled when the deck is empty."""
    p = state.player(colour)
    deck, discard = p.deck, p.discard
    if not deck:
        if not discard:
            raise StateError(f"{colour} has no cards to draw")
        mark = len(dice.log)
        deck, discard = tuple(dice.shuffle(discard, f"reshuffle {colour}'s deck")), ()
        state = state.logged(
            {
                "player": colour,
                "reshuffle": list(deck),
                "rolls": [r.to_dict() for r in dice.rolls_since(mark)],
            }
        )
    state = state.with_player(replace(p, deck=deck[1:], discard=discard))
    return state, deck[0]


def play_card(
    state: GameState, colour: str, card: str, dice: Dice
) -> tuple[GameState, list[Action]]:
    """Every order of `card`, in order, each decided on the state the previous one left."""
    if card not in CARDS:
        raise StateError(f"unknown card {card!r} (cards: {', '.join(CARDS)})")
    done = []
    for order in CARDS[card]:
        for action in decide(state, colour, order, dice):
            state = apply_action(state, action)
            done.append(action)
    return state, done


def take_turn(
    state: GameState, colour: str, phase: int, dice: Dice
) -> tuple[GameState, list[Action]]:
    """Play the hand's card number `phase`. "An automaton always acts; if it can do nothing at
    all with a card it draws another" (at most one deck's worth of draws)."""
    p = state.player(colour)
    if phase >= len(p.hand):
        raise StateError(f"{colour} has no card {phase + 1} this round")
    card = p.hand[phase]
    for _ in range(len(DECK) + 1):
        state, actions = play_card(state, colour, card, dice)
        p = state.players[colour]
        state = state.with_player(replace(p, discard=p.discard + (card,)))
        if actions or state.winner:
            return state, actions
        state, card = draw_card(state, colour, dice)
        state = state.logged({"player": colour, "draws_again": card})
    return state, []


def end_round(state: GameState) -> GameState:
    """Hands are spent (their cards are already discarded); the next round begins."""
    players = {c: replace(p, hand=()) for c, p in state.players.items()}
    return replace(state, players=players, round=state.round + 1)


def pending_battles(state: GameState, active: str) -> list[str]:
    """Territories with a battle to fight: the active side's first, then in turn order."""
    order = state.turn_order()
    rank = {c: (c != active, order.index(c) if c in order else len(order)) for c in state.players}
    found = [
        (rank.get(t.attacker, (True, 99)), state.board.territories.index(name), name)
        for name, t in state.territories.items()
        if t.attacker
    ]
    return [name for *_, name in sorted(found)]


def battle_sides(state: GameState, territory: str) -> tuple[str, str | None, dict[str, int]]:
    """(attacker, defender or None for an empty territory, armies thrown per colour): every
    unit counts as one army; the defender commits all its units (docs/rules.md 1 default)."""
    t = state.territory(territory)
    if not t.attacker:
        raise StateError(f"{territory}: no battle is pending there")
    others = [c for c in t.units if c != t.attacker]
    if len(others) > 1:
        raise StateError(
            f"{territory}: {len(others)} defending colours; fight one battle at a time"
        )
    defender = others[0] if others else None
    thrown = {c: total(u) for c, u in t.units.items()}
    return t.attacker, defender, thrown


def apply_battle(state: GameState, territory: str, attacker: str, outcome) -> GameState:
    """Map a tower battle's `Outcome` (companion.rules.battle) onto the units of `territory`.

    held: the attacker's units are gone, the defender keeps `to_province` of its units;
    devastated: the territory is emptied, castle and revolt markers removed;
    conquered: the defender's units are gone, the attacker keeps `to_province` of its units,
    and a revolt marker is added when the territory was empty.
    Losses are taken cheapest first (footmen, archers, siege engines, cavalry). Interpretation:
    cubes the tower released beyond those thrown come back as figures from the supply,
    cheapest first; with no figure left they stay off the board (logged as `unplaced`).
    """
    t = state.territory(territory)
    if t.attacker != attacker:
        raise StateError(f"{territory}: no battle of {attacker} is pending there")
    defender = next((c for c in t.units if c != attacker), None)
    survivors = {c: n for c, n in outcome.to_province.items() if n}
    unplaced: dict[str, int] = {}
    if outcome.result == DEVASTATED:
        state = state.with_territory(
            territory, replace(t, units={}, castle=False, revolt_markers=0, attacker=None)
        )
    else:
        winner = defender if outcome.result == HELD else attacker
        loser = attacker if outcome.result == HELD else defender
        if loser is not None:
            state = state.with_units(territory, loser, {})
        if winner is not None:
            state, short = _survive(state, territory, winner, survivors.get(winner, 0))
            if short:
                unplaced[winner] = short
        t = state.territory(territory)
        markers = t.revolt_markers + (1 if outcome.revolt_marker_added else 0)
        state = state.with_territory(territory, replace(t, revolt_markers=markers, attacker=None))
    entry = {
        "battle": territory,
        "attacker": attacker,
        "defender": defender,
        "result": outcome.result,
        "to_province": dict(survivors),
    }
    if unplaced:
        entry["unplaced"] = unplaced
    return state.logged(entry)


def _survive(state: GameState, territory: str, colour: str, n: int) -> tuple[GameState, int]:
    """Keep `n` units of `colour` there, losing the cheapest first; more than there: from supply."""
    units = dict(state.units(territory, colour))
    have = total(units)
    if n <= have:
        return state.with_units(territory, colour, minus(units, take_cheapest(units, have - n))), 0
    supply = state.supply(colour)
    extra = take_cheapest({k: supply[k] for k in CHEAPEST_FIRST}, n - have)
    return state.with_units(territory, colour, plus(units, extra)), n - have - total(extra)


def move(state: GameState, colour: str, path: Sequence[str], units: Mapping[str, int]) -> GameState:
    """A person's move along `path` (2 or 3 territories: one or two steps) with `units`.
    Checked by the card's rules of movement: adjacency, units present, not out of a disputed
    territory, not through an enemy territory, the leave-behind. The attack threshold binds
    automatons only. Entering an enemy (or, under the farmer rule, empty) territory leaves a
    battle pending there. Raises StateError with the reason."""
    board = state.board
    state.player(colour)
    path = list(path)
    if not 2 <= len(path) <= 3:
        raise StateError(f"move: a path of one or two steps, got {' -> '.join(path) or 'nothing'}")
    for name in path:
        if name not in board.adjacent:
            raise StateError(f"move: unknown territory {name!r}")
    for a, b in pairwise(path):
        if b not in board.adjacent[a]:
            raise StateError(f"move: {a} and {b} are not adjacent")
    source, target = path[0], path[-1]
    for kind, n in units.items():
        if kind not in UNIT_TYPES:
            raise StateError(f"move: unknown unit type {kind!r} (known: {', '.join(UNIT_TYPES)})")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise StateError(f"move: {kind}: expected a whole number >= 0, got {n!r}")
    units = {k: n for k, n in units.items() if n}
    if not units:
        raise StateError("move: no units given")
    have = state.units(source, colour)
    try:
        stays = minus(have, units)
    except ValueError as e:
        raise StateError(f"move: {colour} in {source} has {e}") from None
    if state.disputed(source):
        raise StateError(f"move: {source} is disputed; its units cannot leave before the battle")
    need = leave_behind.required(board, source)
    if total(stays) < need:
        raise StateError(
            f"move: {source} must keep {need} unit{'s' if need > 1 else ''} "
            f"(leave-behind), only {total(stays)} would stay"
        )
    for mid in path[1:-1]:
        if not passable(state, colour, mid):
            raise StateError(
                f"move: cannot pass through {mid}: enemy territory (stop and fight there)"
            )
    here = state.territory(target).units
    others = [c for c in here if c != colour]
    if len(others) > 1:
        raise StateError(f"move: {target} is already disputed by {' and '.join(others)}")
    battle = bool(others) or (EMPTY_TERRITORY_BATTLE and not here)
    details = {
        "from": source,
        "to": target,
        "path": path,
        "units": dict(units),
        "left_behind": dict(stays),
        "attack": bool(others),
        "defender": others[0] if others else None,
        "battle": battle,
    }
    text = (
        f"{colour_name(colour)} moves {describe(units)} from {board.label(source)} "
        f"to {board.label(target)}."
    )
    return apply_action(state, Action("move", colour, details, text))


def purchase(
    state: GameState,
    colour: str,
    buys: Mapping[str, int],
    placements: Mapping[str, Mapping[str, int]],
    castle_at: str | None = None,
) -> GameState:
    """A person's purchase: `buys` per kind (unit types, "castle", "crown_card"), units placed
    as `placements` (territory -> units) on own territories, the castle on `castle_at` (an own
    city without one). Checked against coins, supply and the box. Raises StateError."""
    p = state.player(colour)
    known = UNIT_TYPES + (CASTLE, CROWN_CARD)
    for kind, n in buys.items():
        if kind not in known:
            raise StateError(f"purchase: unknown item {kind!r} (known: {', '.join(known)})")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise StateError(f"purchase: {kind}: expected a whole number >= 0, got {n!r}")
    buys = {k: n for k, n in buys.items() if n}
    cost = price(buys)
    if cost > p.coins:
        raise StateError(f"purchase: costs {cost} coins, {colour} has {p.coins}")
    supply = state.supply(colour)
    for kind in UNIT_TYPES:
        if buys.get(kind, 0) > supply[kind]:
            raise StateError(f"purchase: only {supply[kind]} {kind} left in {colour}'s supply")
    placed: dict[str, int] = {}
    for site, units in placements.items():
        if state.owner(site) != colour:
            raise StateError(f"purchase: {site} is not {colour}'s undisputed territory")
        placed = plus(placed, units)
    wanted = {k: n for k, n in buys.items() if k in UNIT_TYPES}
    if placed != wanted:
        raise StateError(
            f"purchase: placements ({describe(placed)}) must match the units bought "
            f"({describe(wanted)})"
        )
    if buys.get(CASTLE, 0) > 1 or (buys.get(CASTLE) and castle_at is None):
        raise StateError("purchase: one castle at a time, with the city it goes to")
    if buys.get(CASTLE):
        if state.owner(castle_at) != colour or not state.board.is_city(castle_at):
            raise StateError(f"purchase: {castle_at} is not {colour}'s city")
        if state.territory(castle_at).castle or state.castles_left() < 1:
            raise StateError(f"purchase: no castle can go to {castle_at}")
    details = {
        "buys": buys,
        "spent": cost,
        "coins_left": p.coins - cost,
        "row": None,
        "placements": {s: dict(u) for s, u in placements.items()},
        "castle_at": castle_at if buys.get(CASTLE) else None,
        "crowns": buys.get(CROWN_CARD, 0),
    }
    text = f"{colour_name(colour)} buys {describe(buys)} for {cost} coins."
    return apply_action(state, Action("purchase", colour, details, text))
