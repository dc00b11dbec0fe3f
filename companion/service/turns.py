"""The game at the table: new games, people's moves and purchases, the automaton's turns.

Pure helpers over `companion.rules.game`; the TableService commits what they return. A
round goes: every automaton draws its two cards; then, card by card in turn order, each
player acts (an automaton's decision is shown and said and waits for the table to move the
pieces and confirm; a person moves and buys on the Game page and presses Next); then the
round's battles are fought in the order of docs/rules.md section 3 (the side whose turn it is
first, then turn order), each declared by the service itself; then the round ends.

The open turn is a plain dict (stored as the `turn` open record, so a restart resumes it):
    {"status": "waiting" | "human" | "battles", "round": n, "queue": [[colour, card_index], ...],
     "player": colour, "card": name, "index": card_index, "actions": [action dicts],
     "text": sentence, "proposed": game dict after the decision (status "waiting")}

With physical dice (docs/rules.md section 4) a decision is replayed from the values the table has
rolled so far (`"rolls": [n, ...]`); when it needs one more the turn has status "needs_roll"
and `"roll": {"sides", "reason"}`, and the decided turn lists them as `"table_rolls"`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from companion.errors import CompanionError
from companion.rules import game as rules
from companion.rules.actions import colour_name
from companion.rules.board import Board, load_map
from companion.rules.deck import CARDS_PER_ROUND
from companion.rules.dice import Dice
from companion.rules.state import GameState, from_dict
from companion.rules.units import CASTLE, total
from companion.service.phases import PhaseError

WAITING, HUMAN, BATTLES, NEEDS_ROLL = "waiting", "human", "battles", "needs_roll"
# An automaton's turn the table must answer before anything else happens.
PENDING = (WAITING, NEEDS_ROLL)
GAME_KEYS = {"map", "seed", "players", "physical_dice"}
MOVE_KEYS = {"player", "from", "to", "path", "units"}
PURCHASE_KEYS = {"player", "territory", "items", "castle_at"}


class GameInputError(CompanionError):
    """A game request is malformed (answered with 400)."""


class RollNeeded(Exception):
    """The table's rolls ran out: the decision waits for the next physical die."""

    def __init__(self, sides: int, reason: str) -> None:
        super().__init__(reason)
        self.sides, self.reason = sides, reason


@lru_cache(maxsize=4)
def board(map_name: str) -> Board:
    return load_map(map_name)


def load(data: Mapping[str, Any] | None) -> GameState | None:
    if data is None:
        return None
    return from_dict(dict(data), board=board(data.get("map", "risk-europe")))


def dice(seed: int, step: int) -> Dice:
    """The dice of one step: seeded by the game's seed and the step, so a replay rolls the same."""
    return Dice(seed * 1_000_003 + step)


def table_dice(rolls: list[int]) -> Dice:
    """Dice that replay the table's rolls in order, and ask for the next one when they run out.
    The rules are pure, so the same rolls give the same decision."""
    supplied = iter(rolls)

    def source(sides: int, reason: str) -> int:
        value = next(supplied, None)
        if value is None:
            raise RollNeeded(sides, reason)
        return value

    return Dice(source=source)


def physical_dice(params: Mapping[str, Any], default: bool) -> bool:
    """A new game's choice of physical dice (the configured one unless it says)."""
    value = params.get("physical_dice", default) if isinstance(params, Mapping) else default
    if not isinstance(value, bool):
        raise GameInputError(f"physical_dice: expected true or false, got {value!r}")
    return value


def new_game(params: Any, default_map: str) -> tuple[GameState, int, str]:
    """(state, seed, sentence) from {"map", "seed", "players": [{"colour", "automaton"}]}."""
    params = _object(params, GAME_KEYS, "players")
    seed = params.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise GameInputError(f"seed: expected a whole number, 0 or more, got {seed!r}")
    players = params.get("players")
    if not isinstance(players, list) or not players:
        raise GameInputError('players: expected a list of {"colour": ..., "automaton": true|false}')
    colours, automata = [], []
    for i, p in enumerate(players):
        if (
            not isinstance(p, dict)
            or not isinstance(p.get("colour"), str)
            or not isinstance(p.get("automaton", False), bool)
            or set(p) - {"colour", "automaton"}
        ):
            raise GameInputError(
                f'players[{i}]: expected {{"colour": NAME, "automaton": true|false}}, got {p!r}'
            )
        colours.append(p["colour"].strip().lower())
        if p.get("automaton", False):
            automata.append(colours[-1])
    map_name = params.get("map", default_map)
    if not isinstance(map_name, str) or not map_name.strip():
        raise GameInputError(f"map: expected a map name, got {map_name!r}")
    state = rules.new_game(
        board(map_name), colours, dice(seed, 0), automata=automata, map_name=map_name
    )
    who = ", ".join(f"{c} ({'automaton' if c in automata else 'person'})" for c in colours)
    return state, seed, f"New game on {map_name}: {who}; {colours[0]} plays first."


def move(state: GameState, params: Any) -> tuple[GameState, str]:
    params = _object(params, MOVE_KEYS, "player")
    path = params.get("path") or [params.get("from"), params.get("to")]
    if not isinstance(path, list) or not all(isinstance(t, str) and t for t in path):
        raise GameInputError('move: give "from" and "to" (or a "path" of territory names)')
    units = params.get("units")
    if not isinstance(units, dict):
        raise GameInputError(f"units: expected unit type -> number, got {units!r}")
    after = rules.move(state, _colour(state, params), path, units)
    return after, after.log[-1]["text"]


def purchase(state: GameState, params: Any) -> tuple[GameState, str]:
    params = _object(params, PURCHASE_KEYS, "player")
    items = params.get("items")
    if not isinstance(items, dict):
        raise GameInputError(f"items: expected item -> number, got {items!r}")
    where = params.get("territory")
    units = {k: n for k, n in items.items() if k not in (CASTLE, "crown_card") and n}
    if units and not isinstance(where, str):
        raise GameInputError("territory: say where the bought units go")
    castle_at = params.get("castle_at") or (where if items.get(CASTLE) else None)
    after = rules.purchase(
        state, _colour(state, params), items, {where: units} if units else {}, castle_at=castle_at
    )
    return after, after.log[-1]["text"]


def round_queue(state: GameState) -> list[list]:
    """Who acts, card by card: every player's first card in turn order, then the second."""
    return [[colour, i] for i in range(CARDS_PER_ROUND) for colour in state.turn_order()]


def decide(
    state: GameState, colour: str, index: int, seed: int, step: int, rolls: list[int] | None = None
) -> dict:
    """The open turn of the automaton's decision for its card `index`, from seeded dice, or,
    with `rolls` (physical dice), from the table's rolls: status NEEDS_ROLL while one is missing."""
    card = state.players[colour].hand[index]
    base = {"player": colour, "card": card, "index": index}
    if rolls is None:
        used = dice(seed, step)
    else:
        used, base["rolls"] = table_dice(rolls), list(rolls)
    try:
        after, actions = rules.take_turn(state, colour, index, used)
    except RollNeeded as need:
        return {
            **base,
            "status": NEEDS_ROLL,
            "actions": [],
            "roll": {"sides": need.sides, "reason": need.reason},
            "text": roll_prompt(colour, need.sides, need.reason),
        }
    texts = [a.text for a in actions] or [f"{colour_name(colour)} can do nothing with its cards."]
    if after.winner:
        texts.append(f"{colour_name(after.winner)} has 7 crowns and wins the game.")
    if rolls is not None:
        base["table_rolls"] = [r.to_dict() for r in used.log]
    return {
        **base,
        "status": WAITING,
        "actions": [a.to_dict() for a in actions],
        "text": " ".join(texts),
        "proposed": after.to_dict(),
    }


def roll_prompt(colour: str, sides: int, reason: str) -> str:
    again = f", rolling again above {sides}" if sides < 6 else ""
    return f"Roll a die for {colour_name(colour)}, {reason}: enter 1 to {sides}{again}."


def rolled_text(table_rolls: list[dict]) -> str:
    """What the log keeps of the table's dice: "Dice rolled at the table: 2 (d2), 5 (d6)."."""
    if not table_rolls:
        return ""
    return (
        " Dice rolled at the table: "
        + ", ".join(f"{r['value']} (d{r['die']})" for r in table_rolls)
        + "."
    )


def human_turn(colour: str, index: int) -> dict:
    return {
        "status": HUMAN,
        "player": colour,
        "index": index,
        "card": None,
        "actions": [],
        "text": f"{colour_name(colour)}'s turn (card {index + 1}): move and buy on the Game page, "
        f"then press Next.",
    }


def battle_params(state: GameState, territory: str) -> dict:
    """The declaration of the battle pending in `territory` (all units there are thrown)."""
    attacker, defender, thrown = rules.battle_sides(state, territory)
    return {
        "attacker": attacker,
        "defender": defender,
        "thrown": thrown,
        "territory": territory,
        "revolt_markers": state.territory(territory).revolt_markers,
    }


def check_battle(state: GameState, territory: str, attacker: str) -> None:
    """A battle declared at the table in a territory must be the one pending there."""
    if territory not in state.board.adjacent:
        raise PhaseError(f"territory {territory!r}: not on the map {state.board.name}")
    pending = state.territory(territory).attacker
    if pending != attacker:
        raise PhaseError(
            f"territory {territory}: no battle of {attacker} is pending there"
            + (f" ({pending} attacks there)" if pending else "; move the army in first")
        )


def board_cubes(state: GameState | None) -> dict[str, int]:
    """Armies per colour on the board (every unit is one cube in the tower)."""
    if state is None:
        return {}
    return {c: total(state.on_board(c)) for c in state.players if total(state.on_board(c))}


def _object(params: Any, keys: set[str], required: str) -> dict:
    if not isinstance(params, dict):
        raise GameInputError(f"expected a JSON object with {', '.join(sorted(keys))}")
    unknown = sorted(set(params) - keys)
    if unknown:
        raise GameInputError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(keys))})")
    if required not in params:
        raise GameInputError(f"missing key {required!r}")
    return params


def _colour(state: GameState, params: dict) -> str:
    colour = params["player"]
    if not isinstance(colour, str) or colour.strip().lower() not in state.players:
        raise GameInputError(
            f"player: {colour!r} is not in this game (players: {', '.join(state.players)})"
        )
    return colour.strip().lower()
