"""The game state: players, units on the board, supply and box limits, decks, round, log.

Pure data: every change returns a new `GameState` (dicts inside are never mutated after
construction). A territory's owner is the one colour with units there; two colours make it
disputed. The JSON form (`to_dict`/`from_dict`, `load_state`) is the state file of
`companion automaton`; territories not listed are empty.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from companion.errors import CompanionError
from companion.rules.board import DEFAULT_MAP, Board, load_map
from companion.rules.deck import CARDS
from companion.rules.units import UNIT_TYPES, Units, clean, plural

PLAYER_KEYS = ("automaton", "coins", "crowns", "capital", "deck", "discard", "hand")
TERRITORY_KEYS = ("units", "castle", "revolt_markers", "attacker")
STATE_KEYS = (
    "map",
    "players",
    "territories",
    "round",
    "first_player",
    "next_first_player",
    "winner",
    "log",
)


class StateError(CompanionError):
    """A state file or a requested change is wrong; the message names the entry."""


@dataclass(frozen=True)
class Territory:
    units: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # colour -> unit type -> n
    castle: bool = False
    revolt_markers: int = 0
    # A battle is pending here: who entered (a disputed territory, or an empty one entered
    # under the farmer rule, `army.EMPTY_TERRITORY_BATTLE`). Cleared by `game.apply_battle`.
    attacker: str | None = None

    @property
    def empty(self) -> bool:
        return not self.units and not self.castle and not self.revolt_markers


EMPTY = Territory()


@dataclass(frozen=True)
class Player:
    colour: str
    automaton: bool = False
    coins: int = 0
    crowns: int = 0
    capital: str | None = None
    deck: tuple[str, ...] = ()  # draw pile, top card first
    discard: tuple[str, ...] = ()
    hand: tuple[str, ...] = ()  # this round's cards, face down, in order


@dataclass(frozen=True, eq=False)
class GameState:
    board: Board
    players: Mapping[str, Player]  # in seating (clockwise) order
    territories: Mapping[str, Territory] = field(default_factory=dict)  # non-empty ones only
    map: str = DEFAULT_MAP
    round: int = 1
    first_player: str | None = None
    next_first_player: str | None = None  # King Me: takes the token from the next round
    winner: str | None = None
    log: tuple[Mapping[str, Any], ...] = ()

    # --- reading -----------------------------------------------------------------------------
    def territory(self, name: str) -> Territory:
        return self.territories.get(name, EMPTY)

    def units(self, name: str, colour: str) -> Mapping[str, int]:
        return self.territory(name).units.get(colour, {})

    def count(self, name: str, colour: str) -> int:
        return sum(self.units(name, colour).values())

    def owner(self, name: str) -> str | None:
        units = self.territory(name).units
        return next(iter(units)) if len(units) == 1 else None

    def disputed(self, name: str) -> bool:
        return len(self.territory(name).units) > 1

    def enemies(self, name: str, colour: str) -> int:
        """Units of every other colour in a territory."""
        return sum(sum(u.values()) for c, u in self.territory(name).units.items() if c != colour)

    def on_board(self, colour: str) -> dict[str, int]:
        out = dict.fromkeys(UNIT_TYPES, 0)
        for t in self.territories.values():
            for kind, n in t.units.get(colour, {}).items():
                out[kind] += n
        return out

    def supply(self, colour: str) -> dict[str, int]:
        """Figures of a colour not on the board (box limit minus board)."""
        board = self.on_board(colour)
        return {kind: max(0, self.board.box.get(kind, 0) - board[kind]) for kind in UNIT_TYPES}

    def castles_left(self) -> int:
        return self.board.castles - sum(t.castle for t in self.territories.values())

    def turn_order(self) -> list[str]:
        colours = list(self.players)
        if self.first_player in colours:
            i = colours.index(self.first_player)
            colours = colours[i:] + colours[:i]
        return colours

    def player(self, colour: str) -> Player:
        if colour not in self.players:
            raise StateError(f"unknown player {colour!r} (players: {', '.join(self.players)})")
        return self.players[colour]

    # --- changing (each returns a new state) -------------------------------------------------
    def with_units(self, name: str, colour: str, units: Units) -> GameState:
        t = self.territory(name)
        all_units = dict(t.units)
        units = clean(units)
        if units:
            all_units[colour] = units
        else:
            all_units.pop(colour, None)
        attacker = t.attacker if t.attacker in all_units else None
        return self.with_territory(name, replace(t, units=all_units, attacker=attacker))

    def with_territory(self, name: str, territory: Territory) -> GameState:
        territories = dict(self.territories)
        if territory.empty:
            territories.pop(name, None)
        else:
            territories[name] = territory
        return replace(self, territories=territories)

    def with_player(self, player: Player) -> GameState:
        return replace(self, players={**self.players, player.colour: player})

    def logged(self, *entries: Mapping[str, Any]) -> GameState:
        return replace(self, log=self.log + tuple(entries))

    # --- JSON --------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        players = {}
        for c, p in self.players.items():
            players[c] = {"automaton": p.automaton, "coins": p.coins, "crowns": p.crowns}
            if p.capital:
                players[c]["capital"] = p.capital
            for key in ("deck", "discard", "hand"):
                if getattr(p, key):
                    players[c][key] = list(getattr(p, key))
        territories = {}
        for name in self.board.territories:  # map order
            t = self.territories.get(name)
            if t is None:
                continue
            entry: dict[str, Any] = {"units": {c: dict(u) for c, u in t.units.items()}}
            if t.castle:
                entry["castle"] = True
            if t.revolt_markers:
                entry["revolt_markers"] = t.revolt_markers
            if t.attacker:
                entry["attacker"] = t.attacker
            territories[name] = entry
        out = {"map": self.map, "players": players, "territories": territories, "round": self.round}
        for key in ("first_player", "next_first_player", "winner"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.log:
            out["log"] = list(self.log)
        return out


def load_state(path: str | Path, map_override: str | Path | None = None) -> GameState:
    """Read a state file; raises StateError naming the file and the wrong entry."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StateError(f"{path}: no such state file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StateError(f"{path}: not valid JSON ({e})") from None
    try:
        return from_dict(data, map_override)
    except StateError as e:
        raise StateError(f"{path}: {e}") from None


def from_dict(
    data: Any, map_override: str | Path | None = None, board: Board | None = None
) -> GameState:
    """A GameState from the state file's JSON object (see the module docstring)."""
    if not isinstance(data, dict):
        raise StateError("expected a JSON object with 'players' and 'territories'")
    _unknown_keys("", data, STATE_KEYS)
    map_name = str(map_override or data.get("map", DEFAULT_MAP))
    board = board or load_map(map_name)
    players_data = data.get("players", {})
    if not isinstance(players_data, dict):
        raise StateError("players: expected colour -> {automaton, coins, crowns}")
    players = {colour: _player(colour, entry, board) for colour, entry in players_data.items()}
    territories_data = data.get("territories", {})
    if not isinstance(territories_data, dict):
        raise StateError("territories: expected territory name -> {units, castle}")
    territories = {}
    for name, entry in territories_data.items():
        if name not in board.adjacent:
            raise StateError(f"territories.{name}: unknown territory (not on the map {board.name})")
        t = _territory(name, entry)
        for colour in t.units:
            # Interpretation: a colour with units but no player entry is a human opponent with
            # nothing in hand (the example lists only the automaton).
            players.setdefault(colour, Player(colour))
        if t.attacker is not None and t.attacker not in t.units:
            raise StateError(f"territories.{name}.attacker: {t.attacker!r} has no units there")
        if not t.empty:
            territories[name] = t
    state = GameState(
        board=board,
        players=players,
        territories=territories,
        map=map_name,
        round=_whole("round", data.get("round", 1), minimum=1),
        log=tuple(data.get("log", ())),
    )
    for key in ("first_player", "next_first_player", "winner"):
        value = data.get(key)
        if value is not None and value not in players:
            raise StateError(f"{key}: unknown player {value!r} (players: {', '.join(players)})")
        state = replace(state, **{key: value})
    for colour in players:
        for kind, n in state.on_board(colour).items():
            if n > board.box.get(kind, 0):
                raise StateError(
                    f"units.{colour}.{kind}: {n} {plural(kind)} on the board, but the "
                    f"box holds {board.box.get(kind, 0)}"
                )
    if state.castles_left() < 0:
        raise StateError(
            f"castles: {board.castles - state.castles_left()} on the board, but the "
            f"box holds {board.castles}"
        )
    return state


def _player(colour: Any, entry: Any, board: Board) -> Player:
    where = f"players.{colour}"
    if not isinstance(entry, dict):
        raise StateError(f'{where}: expected an object like {{"automaton": true, "coins": 5}}')
    _unknown_keys(where, entry, PLAYER_KEYS)
    automaton = entry.get("automaton", False)
    if not isinstance(automaton, bool):
        raise StateError(f"{where}.automaton: expected true or false, got {automaton!r}")
    capital = entry.get("capital")
    if capital is not None and capital not in board.adjacent:
        raise StateError(f"{where}.capital: unknown territory {capital!r}")
    cards = {}
    for key in ("deck", "discard", "hand"):
        value = entry.get(key, [])
        if not isinstance(value, list) or any(card not in CARDS for card in value):
            raise StateError(f"{where}.{key}: expected a list of cards ({', '.join(CARDS)})")
        cards[key] = tuple(value)
    return Player(
        colour=str(colour),
        automaton=automaton,
        coins=_whole(f"{where}.coins", entry.get("coins", 0)),
        crowns=_whole(f"{where}.crowns", entry.get("crowns", 0)),
        capital=capital,
        **cards,
    )


def _territory(name: str, entry: Any) -> Territory:
    where = f"territories.{name}"
    if not isinstance(entry, dict):
        raise StateError(
            f'{where}: expected an object like {{"units": {{"blue": {{"footman": 2}}}}}}'
        )
    _unknown_keys(where, entry, TERRITORY_KEYS)
    units_data = entry.get("units", {})
    if not isinstance(units_data, dict):
        raise StateError(f"{where}.units: expected colour -> {{unit type: count}}")
    units = {}
    for colour, per_type in units_data.items():
        if not isinstance(per_type, dict):
            raise StateError(f"{where}.units.{colour}: expected unit type -> count")
        for kind, n in per_type.items():
            if kind not in UNIT_TYPES:
                raise StateError(
                    f"{where}.units.{colour}.{kind}: unknown unit type "
                    f"(known: {', '.join(UNIT_TYPES)})"
                )
            _whole(f"{where}.units.{colour}.{kind}", n)
        if clean(per_type):
            units[colour] = clean(per_type)
    castle = entry.get("castle", False)
    if not isinstance(castle, bool):
        raise StateError(f"{where}.castle: expected true or false, got {castle!r}")
    attacker = entry.get("attacker")
    return Territory(
        units=units,
        castle=castle,
        revolt_markers=_whole(f"{where}.revolt_markers", entry.get("revolt_markers", 0)),
        attacker=attacker,
    )


def _whole(where: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise StateError(f"{where}: expected a whole number, got {value!r}")
    if value < minimum:
        raise StateError(
            f"{where}: {value} is " + ("negative" if minimum == 0 else f"below {minimum}")
        )
    return value


def _unknown_keys(where: str, entry: Mapping, known: tuple[str, ...]) -> None:
    for key in entry:
        if key not in known:
            prefix = f"{where}." if where else ""
            raise StateError(f"{prefix}{key}: unknown key (known: {', '.join(known)})")
