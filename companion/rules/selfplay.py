"""Self-play: automatons against each other, battles in a simulated tower, invariants checked.

Battles are resolved by the battle engine (`battle.resolve`) on what a tower model
(`companion.rules.tower.TowerModel`) lets out (it keeps some thrown cubes and releases earlier
ones); the `Ledger` accounts every cube. Each figure on the board is one cube; the tower and
the tray (cup) hold cubes only. After every turn the invariants are checked and a broken one
raises InvariantError:
- cube totals per colour never change, no stock is negative, the ledger's tower is the model's;
- the ledger's board cubes per colour are the figures on the board;
- no figure in two places: per colour and type, board + supply = the box;
- coins never negative.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from companion.rules.actions import Action
from companion.rules.battle import Battle, into_tower, resolve
from companion.rules.board import Board
from companion.rules.deck import CARDS_PER_ROUND
from companion.rules.dice import Dice
from companion.rules.game import (
    apply_battle,
    battle_sides,
    end_round,
    new_game,
    pending_battles,
    start_round,
    take_turn,
)
from companion.rules.ledger import PRIME_FARMER_CUBES, PRIME_PLAYER_CUBES, Ledger
from companion.rules.state import GameState
from companion.rules.stickiness import Throw
from companion.rules.tower import TowerModel
from companion.rules.units import total

# Cubes of each colour in the simulated game (figures on the board plus those in tower and cup
# never exceed this), and farmer cubes.
CUBES_PER_COLOUR = 80
FARMER_CUBES = 40
FARMER = "green"
COLOURS = ("red", "blue", "yellow", "purple")


class InvariantError(RuntimeError):
    """Self-play broke a rule of conservation: a bug, never a user's mistake."""


@dataclass(frozen=True)
class GameResult:
    seed: int
    winner: str | None  # None: nobody reached 7 crowns within the rounds
    rounds: int  # rounds played (the winning round when there is a winner)
    crowns: dict[str, int]
    battles: int
    actions: int
    state: GameState

    def to_dict(self) -> dict:
        return {
            "seed": self.seed,
            "winner": self.winner,
            "rounds": self.rounds,
            "crowns": self.crowns,
            "battles": self.battles,
            "actions": self.actions,
        }


def play_game(
    board: Board,
    automata: int,
    rounds: int,
    seed: int,
    farmer: str = FARMER,
    observe: Callable[[GameState, str], None] | None = None,
    tower: TowerModel | None = None,
    on_throw: Callable[[Throw, Battle | None], None] | None = None,
) -> GameResult:
    """One game of `automata` automatons, seeded; `observe(state, colour)` sees every turn's
    state before the turn (the benchmark times decisions on them). `tower`: the tower model
    (default: the usual one, seeded from `seed`); `on_throw(throw, battle)` sees every throw,
    with its battle (None for the priming; the odds benchmark learns from them)."""
    colours = list(COLOURS[:automata])
    dice = Dice(seed)
    tower = tower if tower is not None else TowerModel(random.Random(seed))
    on_throw = on_throw or (lambda throw, battle: None)
    state = new_game(board, colours, dice)
    ledger = Ledger.start({**{c: CUBES_PER_COLOUR for c in colours}, farmer: FARMER_CUBES})
    ledger = ledger.move("supply", "board", _board_cubes(state))
    # Ledger.prime moves these counts; the model is thrown the same.
    primed = {**{c: PRIME_PLAYER_CUBES for c in colours}, farmer: PRIME_FARMER_CUBES}
    emerged = tower.throw(primed)
    on_throw(Throw(primed, {}, emerged), None)
    ledger, warnings = ledger.prime(colours, farmer, emerged)
    totals = ledger.totals()
    _check(state, ledger, tower, totals, warnings)
    battles = actions = 0
    for _ in range(rounds):
        state = start_round(state, dice)
        for phase in range(CARDS_PER_ROUND):
            for colour in state.turn_order():
                if observe:
                    observe(state, colour)
                state, done = take_turn(state, colour, phase, dice)
                actions += len(done)
                ledger = _account(ledger, done)
                for territory in pending_battles(state, colour):
                    state, ledger = _fight(state, ledger, tower, territory, farmer, on_throw)
                    battles += 1
                _check(state, ledger, tower, totals, ())
                if state.winner:
                    return _result(seed, state, battles, actions)
        state = end_round(state)
    return _result(seed, replace(state, round=state.round - 1), battles, actions)


def _fight(
    state: GameState,
    ledger: Ledger,
    tower: TowerModel,
    territory: str,
    farmer: str,
    on_throw: Callable[[Throw, Battle | None], None],
) -> tuple[GameState, Ledger]:
    attacker, defender, thrown = battle_sides(state, territory)
    planned = Battle(
        attacker,
        defender,
        thrown,
        cup=ledger.cup,
        revolt_markers=state.territory(territory).revolt_markers,
        farmer=farmer,
    )
    into, inside = into_tower(planned), tower.inside()
    battle = replace(planned, emerged=tower.throw(into))
    on_throw(Throw(into, inside, dict(battle.emerged)), battle)
    outcome = resolve(battle)
    ledger, warnings = ledger.apply(battle, outcome)
    if warnings:
        raise InvariantError(f"battle in {territory}: {'; '.join(warnings)}")
    state = apply_battle(state, territory, attacker, outcome)
    unplaced = state.log[-1].get("unplaced")
    if unplaced:  # released cubes with no figure left to stand for them go back to the supply
        ledger = ledger.move("board", "supply", unplaced)
    return state, ledger


def _board_cubes(state: GameState) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in state.territories.values():
        for colour, units in t.units.items():
            out[colour] = out.get(colour, 0) + sum(units.values())
    return out


def _account(ledger: Ledger, actions: Sequence[Action]) -> Ledger:
    """The cubes each action moves between supply and board (moves stay on the board)."""
    for action in actions:
        d = action.details
        if action.action == "purchase":
            placed = sum(total(units) for units in d["placements"].values())
            if placed:
                ledger = ledger.move("supply", "board", {action.player: placed})
        elif action.action == "fortify":
            ledger = ledger.move("supply", "board", {action.player: total(d["units"])})
        elif action.action == "siege-assault" and d["losses"]:
            ledger = ledger.move("board", "supply", {d["defender"]: total(d["losses"])})
    return ledger


def _check(
    state: GameState,
    ledger: Ledger,
    tower: TowerModel,
    totals: dict[str, int],
    warnings: Sequence[str],
) -> None:
    problems = list(warnings) + ledger.miscounts()
    if ledger.totals() != totals:
        problems.append(f"cube totals changed: {totals} -> {ledger.totals()}")
    if {c: n for c, n in ledger.tower.items() if n} != tower.inside():
        problems.append(f"ledger tower {dict(ledger.tower)} != tower model {tower.inside()}")
    board = _board_cubes(state)
    if {c: n for c, n in ledger.board.items() if n} != {c: n for c, n in board.items() if n}:
        problems.append(f"ledger board {dict(ledger.board)} != figures on the board {board}")
    for colour, player in state.players.items():
        if player.coins < 0:
            problems.append(f"{colour} has {player.coins} coins")
        on_board = state.on_board(colour)
        for kind, n in on_board.items():
            if n > state.board.box[kind]:
                problems.append(
                    f"{colour}: {n} {kind} on the board, the box holds {state.board.box[kind]}"
                )
    for name, t in state.territories.items():
        for colour, units in t.units.items():
            if any(n <= 0 for n in units.values()):
                problems.append(f"{name}: {colour} has a non-positive count {dict(units)}")
    if problems:
        raise InvariantError(f"round {state.round}: " + "; ".join(problems))


def _result(seed: int, state: GameState, battles: int, actions: int) -> GameResult:
    return GameResult(
        seed=seed,
        winner=state.winner,
        rounds=state.round,
        crowns={c: p.crowns for c, p in state.players.items()},
        battles=battles,
        actions=actions,
        state=state,
    )
