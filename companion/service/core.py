"""The table's core: battles, the game and its turns, undo, and the table's state.

Every change at the table (declare, count, confirm, cancel, undo, moves, automaton steps)
happens under one lock, is committed to the store, and only then published on the bus
(page, panel, speaker, the simulated table) and answered. The camera watch reports here
what moved and what settled; nothing is written per frame, so a quiet table writes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from calibration.errors import CalibrationError
from companion.config import Config
from companion.rules import game as rules_game
from companion.rules.battle import Battle, Outcome
from companion.rules.ledger import Ledger
from companion.service import announce, phases, turns
from companion.service.bus import Event, EventBus
from companion.service.camera import CameraWatch
from companion.service.phases import BattleRecord, PhaseError
from companion.service.preview import jpeg
from companion.service.records import game_dict, ledger_dict, ledger_from, shown
from companion.service.tray import COUNT, STILL_WAITING, TrayMemory
from companion.store import Store
from vision.counter import FrameCount

log = logging.getLogger(__name__)

# Interpretation (docs/rules.md, "The ledger"): the ledger starts with this many cubes of each
# colour in the supply. Only movements matter (the tower estimate and the cup), so any number
# above a box's count works.
STARTING_SUPPLY = 60
# Steps and events shown as recent history in the state.
HISTORY = 20
# Step kinds undo never goes past: the start of the game.
START_KINDS = ("start", "new_game")


class TableCore:
    def __init__(self, config: Config, store: Store, bus: EventBus, camera: CameraWatch) -> None:
        self.config = config
        self.store = store
        self.bus = bus
        self.camera = camera
        self.farmer = config.colours.farmer
        self._lock = threading.RLock()
        self.tray = TrayMemory()
        self._resume()
        camera.on_motion = self.moved
        camera.on_settled = self.settled
        camera.on_status = self._camera_news
        camera.on_unfit = self._unfit

    # --- resuming after a stop or a crash ------------------------------------------------

    def _resume(self) -> None:
        last = self.store.last_step()
        if last is None:
            ledger = self._start_ledger(self.config.colours.players)
            with self.store.transaction() as tx:
                last = tx.add_step(
                    "start", "Companion started with an empty table.", None, ledger_dict(ledger)
                )
        self.game = turns.load(last.game)
        self._restore(last.data)
        self.ledger = ledger_from(last.ledger)
        self.turn = self.store.get_open("turn")
        self.battle: BattleRecord | None = None
        for record in self.store.battles(limit=5):
            if record["status"] in phases.OPEN:
                self.battle = BattleRecord.from_dict(record)
        self.bus.preload(Event(**e) for e in self.store.events(limit=200))
        if self.battle is not None:
            log.info("resuming battle %d (%s)", self.battle.id, self.battle.status)
            if self.battle.status == phases.MOVING:
                # Whatever was falling has landed meanwhile: watch for the throw again (or
                # recount).
                self.battle = replace(self.battle, status=phases.WAITING)

    def reload(self, text: str) -> None:
        """Take up the store as it is now (a game imported: companion.record), and say so."""
        with self._lock:
            self._resume()
            self._commit("game", text)

    def _restore(self, data: dict) -> None:
        """What each step carries besides the game and the ledger."""
        self.seed = data.get("seed", 0)
        self.physical_dice = data.get("physical_dice", self.config.game.physical_dice)
        self.primed = data.get("primed", False)

    def _step_data(self, **extra) -> dict:
        return {
            "seed": self.seed,
            "physical_dice": self.physical_dice,
            "primed": self.primed,
            "turn": self.turn,
            **extra,
        }

    # --- what the camera watch reports ---------------------------------------------------

    def moved(self) -> None:
        """Something moved in the tray: a battle waiting for its throw is now falling."""
        with self._lock:
            if self.battle is not None and self.battle.status == phases.WAITING:
                self._commit_battle(phases.moving(self.battle), "battle_moving", announce.moving)

    def settled(self, result: FrameCount, image: np.ndarray) -> None:
        """The tray settled and was counted (never with a hand in it: the watcher drops those)."""
        found = {c: n for c, n in result.counts.items() if n}
        with self._lock:
            record = self.battle
            if record is None:
                self.tray.read(None, found, {})
                return
            meaning = self.tray.read(record.status, found, record.cup)
            if meaning == COUNT:
                self._counted(record, result, image)
            elif meaning == STILL_WAITING and record.status == phases.MOVING:
                self._commit_battle(
                    replace(record, status=phases.WAITING),
                    "battle_waiting",
                    lambda r: f"Battle {r.id}: waiting for the throw.",
                )

    def tray_before_throw(self, cubes: Mapping[str, int]) -> None:
        """The cubes lying in the tray just before a throw, none of them the throw's."""
        with self._lock:
            self.tray.before_throw(cubes)

    def tray_cleared(self, left: Mapping[str, int]) -> None:
        """The table cleared the tray after a battle: only `left` (the cup) lies in it."""
        with self._lock:
            self.tray.cleared(left)

    def _counted(self, record: BattleRecord, result: FrameCount, image: np.ndarray) -> BattleRecord:
        found = {c: n for c, n in result.counts.items() if n}
        counted = phases.counted(
            record,
            self.tray.emerged(found),
            unknown=int(result.unknown),
            confidence=round(float(result.confidence), 3),
            unsure=not result.sure,
        )
        picture = jpeg(self.camera.annotate(image, result))
        self.tray.counted(found)
        counted = self._commit_battle(counted, "battle_counted", announce.counted, image=picture)
        if self.config.game.auto_confirm and not phases.doubtful(counted):
            # The table chose not to confirm each count; a doubtful one still waits for it.
            return self.confirm(counted.id)
        return counted

    def _camera_news(self, status: str, detail: str) -> None:
        with self._lock:
            self._commit(
                "camera", announce.camera(status, detail), {"status": status, "detail": detail}
            )

    def _unfit(self, error: CalibrationError) -> None:
        with self._lock:
            self._commit(
                "calibration", f"Not counting: {error}. Calibrate again on the Calibrate page."
            )

    # --- battles -------------------------------------------------------------------------

    def declare_battle(self, params: Any, origin: str = "table") -> BattleRecord:
        with self._lock:
            if self.battle is not None:
                status = self.battle.status.replace("_", " ")
                raise PhaseError(
                    f"battle {self.battle.id} is still {status}: confirm or cancel it first"
                )
            record = phases.declare(
                self.store.next_battle_id(), params, self.ledger.cup, self.farmer, origin
            )
            self._check_territory(record)
            return self._declared(record)

    def _declared(self, record: BattleRecord) -> BattleRecord:
        with self._lock:
            self.tray.armed(record.cup)
            return self._commit_battle(record, "battle_declared", announce.declared)

    def prime_tower(self) -> BattleRecord:
        """The priming throw at setup (docs/rules.md, "Priming the tower"): the game's players'
        colours, else the configured ones; counted like a battle, and what comes out goes back
        to the supply."""
        with self._lock:
            self._no_open_battle("priming the tower")
            game = self.game
            players = list(game.players if game is not None else self.config.colours.players)
            record = phases.declare_prime(self.store.next_battle_id(), players, self.farmer)
            return self._declared(record)

    def get_battle(self, battle_id: int) -> BattleRecord:
        with self._lock:
            if self.battle is not None and self.battle.id == battle_id:
                return self.battle
        data = self.store.battle(battle_id)
        if data is None:
            raise LookupError(f"no battle {battle_id}")
        return BattleRecord.from_dict(data)

    def battle_image(self, battle_id: int) -> bytes | None:
        return self.store.battle_image(battle_id)

    def recount(self, battle_id: int) -> BattleRecord:
        """Count the tray as it is now (a settle that came too early, or a cube moved by hand)."""
        with self._lock:
            record = self._open(battle_id)
            phases.require_open(record, "be recounted")
            if self.camera.counter is None:
                raise PhaseError(
                    "the camera is not calibrated: calibrate it, or confirm with "
                    "the counts typed in"
                )
            frame = self.camera.frame
            if frame is None:
                raise PhaseError("no camera frame yet: the camera is not delivering")
            return self._counted(record, self.camera.count(frame.image), frame.image)

    def confirm(self, battle_id: int, emerged: Any = None) -> BattleRecord:
        with self._lock:
            record = self._open(battle_id)
            applied, battle, outcome = phases.confirm(record, emerged)
            game = self.game
            if applied.kind == phases.PRIME:
                ledger, warnings = self.ledger.prime(
                    list(applied.thrown), applied.farmer, applied.emerged
                )
                self.primed = True
            else:
                if game is not None and applied.territory is not None:
                    game = rules_game.apply_battle(
                        game, applied.territory, applied.attacker, outcome
                    )
                ledger, warnings = self._ledger_after(battle, outcome)
            text = announce.applied(applied)
            with self.store.transaction() as tx:
                step = tx.add_step(
                    applied.kind,
                    text,
                    game_dict(game),
                    ledger_dict(ledger),
                    self._step_data(battle=applied.id, warnings=warnings),
                )
                applied = replace(applied, step_id=step.id)
                tx.put_battle(applied.id, applied.to_dict())
                event = tx.add_event(
                    "battle_applied", text, {"battle": applied.to_dict(), "warnings": warnings}
                )
            self.game, self.ledger, self.battle = game, ledger, None
            self._publish(event)
            if self.turn and self.turn["status"] == turns.BATTLES:
                # The round's battles: the service declares the next one itself.
                self._round_battles()
            return applied

    def cancel(self, battle_id: int) -> BattleRecord:
        with self._lock:
            record = self._open(battle_id)
            return self._commit_battle(
                phases.cancel(record), "battle_cancelled", announce.cancelled
            )

    def _open(self, battle_id: int) -> BattleRecord:
        if self.battle is None or self.battle.id != battle_id:
            record = self.get_battle(battle_id)  # LookupError when there is none
            status = record.status.replace("_", " ")
            raise PhaseError(f"battle {battle_id} is {status}: it is not the open battle")
        return self.battle

    def _commit_battle(
        self,
        record: BattleRecord,
        kind: str,
        sentence: Callable[[BattleRecord], str],
        image: bytes | None = None,
    ) -> BattleRecord:
        text = sentence(record)
        with self.store.transaction() as tx:
            tx.put_battle(record.id, record.to_dict(), image=image, keep_image=image is None)
            event = tx.add_event(kind, text, {"battle": record.to_dict()})
        self.battle = record if record.is_open else None
        self._publish(event)
        return record

    def _ledger_after(self, battle: Battle, outcome: Outcome) -> tuple[Ledger, list[str]]:
        ledger = self.ledger
        if self.game is None:
            # Without a game the companion does not know the board: the thrown armies were on it.
            short = Counter(battle.thrown) - Counter(ledger.board)
            if short:
                ledger = ledger.move("supply", "board", dict(short))
        return ledger.apply(battle, outcome)

    def _check_territory(self, record: BattleRecord) -> None:
        """A battle in a named territory must be the one pending there in the game."""
        if record.territory is None:
            return
        if self.game is None:
            raise PhaseError(
                f"territory {record.territory!r}: no game is running; "
                "start a game, or declare the battle without a territory"
            )
        turns.check_battle(self.game, record.territory, record.attacker)

    # --- the game ------------------------------------------------------------------------

    def new_game(self, params: Any) -> dict:
        """Set up a new game (solo setup done by the rules); undo stops here."""
        with self._lock:
            self._no_open_battle("starting a new game")
            game, seed, text = turns.new_game(params, self.config.game.map)
            physical = turns.physical_dice(params, self.config.game.physical_dice)
            ledger = self._start_ledger(game.players).move(
                "supply", "board", turns.board_cubes(game)
            )
            # A new ledger starts with an empty tower: the table primes it again.
            self.seed, self.turn, self.physical_dice, self.primed = seed, None, physical, False
            if physical:
                text += " The automatons' dice are rolled at the table."
            self._commit_step("new_game", text, game, ledger, event_kind="game")
            return {"text": text, "game": game_dict(game, log=False)}

    def human_move(self, params: Any) -> dict:
        return self._human_step("move", turns.move, params)

    def human_purchase(self, params: Any) -> dict:
        return self._human_step("purchase", turns.purchase, params)

    def _human_step(self, kind: str, change: Callable, params: Any) -> dict:
        with self._lock:
            game = self._require_game()
            self._no_open_battle(f"a {kind}")
            self._no_pending_turn()
            after, text = change(game, params)
            self._commit_step(kind, text, after, self._board_synced(game, after), event_kind="game")
            return {"text": text, "game": game_dict(after, log=False)}

    def automaton_next(self) -> dict:
        """The next step of the round: an automaton's decision (shown, said, waiting for the
        table to move the pieces and confirm), a person's turn, the round's battles, or the
        next round."""
        with self._lock:
            game = self._require_game()
            self._no_open_battle("the next step")
            if game.winner:
                raise PhaseError(f"the game is over: {game.winner} won")
            self._no_pending_turn()
            if self.turn is None:
                game = rules_game.start_round(game, turns.dice(self.seed, self.store.step_count()))
                self.turn = {
                    "status": "round",
                    "round": game.round,
                    "queue": turns.round_queue(game),
                    "text": f"Round {game.round}: the automatons draw their cards.",
                }
                self._commit_step(
                    "round", self.turn["text"], game, self.ledger, event_kind="automaton"
                )
            queue = self.turn.get("queue") or []
            if not queue:
                return self._round_battles()
            colour, index = queue[0]
            if game.players[colour].automaton:
                turn = turns.decide(
                    game,
                    colour,
                    index,
                    self.seed,
                    self.store.step_count(),
                    [] if self.physical_dice else None,
                )
            else:
                turn = turns.human_turn(colour, index)
            self.turn = {**turn, "round": game.round, "queue": queue[1:]}
            self._commit_open_turn("automaton")
            return shown(self.turn)

    def automaton_roll(self, value: Any) -> dict:
        """The value of the physical die the table rolled for the automaton's decision: stored
        with the open turn, and the decision replayed from all the table's rolls so far."""
        with self._lock:
            self._require_game()
            if not self.turn or self.turn["status"] != turns.NEEDS_ROLL:
                raise PhaseError(
                    "no die roll is wanted now: the automaton asks for one when "
                    "its decision needs it (with physical dice on)"
                )
            sides, reason = self.turn["roll"]["sides"], self.turn["roll"]["reason"]
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= sides:
                raise turns.GameInputError(
                    f"value: expected a whole number from 1 to {sides} "
                    f"(the die for {reason}), got {value!r}"
                )
            self._replay_rolls(self.turn["rolls"] + [value], f"Rolled {value} at the table.")
            return shown(self.turn)

    def _replay_rolls(self, rolls: list[int], said: str) -> None:
        """The open automaton decision recomputed from the table's `rolls`, stored and
        announced."""
        turn = self.turn
        decided = turns.decide(self.game, turn["player"], turn["index"], self.seed, 0, rolls)
        self.turn = {**decided, "round": turn["round"], "queue": turn["queue"]}
        self._commit_open_turn("automaton", f"{said} {self.turn['text']}")

    def automaton_confirm(self) -> dict:
        """The table has moved the pieces as the automaton said: apply its decision."""
        with self._lock:
            game = self._require_game()
            if self.turn and self.turn["status"] == turns.NEEDS_ROLL:
                raise PhaseError(f"the automaton waits for a die roll first: {self.turn['text']}")
            if not self.turn or self.turn["status"] != turns.WAITING:
                raise PhaseError("no automaton move is waiting for confirmation (press Next)")
            after = turns.load(self.turn["proposed"])
            text = self.turn["text"] + turns.rolled_text(self.turn.get("table_rolls", []))
            self.turn = {**self.turn, "status": "done", "proposed": None}
            self._commit_step(
                "automaton",
                f"Confirmed: {text}",
                after,
                self._board_synced(game, after),
                event_kind="automaton",
            )
            return shown(self.turn)

    def _round_battles(self) -> dict:
        """Declare the round's next pending battle, or end the round when none is left."""
        game = self.game
        pending = rules_game.pending_battles(game, game.first_player)
        if pending:
            params = turns.battle_params(game, pending[0])
            battles = f"{len(pending)} battle{'s' * (len(pending) > 1)}"
            self.turn = {
                "status": turns.BATTLES,
                "round": game.round,
                "queue": [],
                "text": f"Round {game.round}: {battles} to fight, first in {pending[0]}.",
            }
            self._commit_open_turn("automaton")
            self.declare_battle(params, origin="automaton")
            return shown(self.turn)
        game = rules_game.end_round(game)
        self.turn = None
        self._commit_step(
            "round_end",
            f"Round {game.round - 1} is over.",
            game,
            self.ledger,
            event_kind="automaton",
        )
        return {"status": "round_over", "text": f"Round {game.round - 1} is over."}

    def _require_game(self):
        if self.game is None:
            raise PhaseError("no game is running: start one on the Game page")
        return self.game

    def _no_pending_turn(self) -> None:
        if self.turn and self.turn["status"] == turns.NEEDS_ROLL:
            raise PhaseError(f"the automaton waits for a die roll: {self.turn['text']}")
        if self.turn and self.turn["status"] == turns.WAITING:
            raise PhaseError(f"the automaton's move waits for confirmation: {self.turn['text']}")

    def _no_open_battle(self, what: str) -> None:
        if self.battle is not None:
            raise PhaseError(f"battle {self.battle.id} is open: confirm or cancel it before {what}")

    def _start_ledger(self, colours) -> Ledger:
        return Ledger.start({c: STARTING_SUPPLY for c in (*colours, self.farmer)})

    def _board_synced(self, before, after) -> Ledger:
        """Armies that came onto the board (purchases, fortify) leave the supply, and back."""
        was, now = turns.board_cubes(before), turns.board_cubes(after)
        ledger = self.ledger
        added = {c: now.get(c, 0) - was.get(c, 0) for c in set(was) | set(now)}
        if any(n > 0 for n in added.values()):
            ledger = ledger.move("supply", "board", {c: n for c, n in added.items() if n > 0})
        if any(n < 0 for n in added.values()):
            ledger = ledger.move("board", "supply", {c: -n for c, n in added.items() if n < 0})
        return ledger

    def _commit_step(self, kind: str, text: str, game, ledger: Ledger, event_kind: str) -> None:
        with self.store.transaction() as tx:
            tx.add_step(kind, text, game_dict(game), ledger_dict(ledger), self._step_data())
            tx.set_open("turn", self.turn)
            event = tx.add_event(event_kind, text, {"turn": shown(self.turn)})
        self.game, self.ledger = game, ledger
        self._publish(event)

    def _commit_open_turn(self, kind: str, text: str | None = None) -> None:
        with self.store.transaction() as tx:
            tx.set_open("turn", self.turn)
            event = tx.add_event(kind, text or self.turn["text"], {"turn": shown(self.turn)})
        self._publish(event)

    # --- undo, state -------------------------------------------------------------------------

    def undo(self) -> dict:
        with self._lock:
            if self.battle is not None:
                raise PhaseError(
                    f"battle {self.battle.id} is open: confirm or cancel it before undoing"
                )
            turn = self.turn or {}
            rolls = turn.get("rolls") if turn.get("status") in turns.PENDING else None
            if rolls:
                # A die value typed by mistake: take the table's last roll back and ask again.
                text = f"Undone: the roll of {rolls[-1]}."
                self._replay_rolls(rolls[:-1], text)
                return {"undone": {"kind": "roll", "value": rolls[-1]}, "text": text}
            steps = self.store.steps(limit=2)
            last = steps[-1]
            if last.kind in START_KINDS or len(steps) < 2:
                raise PhaseError("nothing to undo: this is the start of the game")
            previous = steps[-2]
            text = announce.undone(last.text)
            with self.store.transaction() as tx:
                tx.delete_step(last.id)
                battle_id = last.data.get("battle")
                if battle_id is not None:
                    record = BattleRecord.from_dict(self.store.battle(battle_id))
                    tx.put_battle(battle_id, phases.undone(record).to_dict())
                event = tx.add_event("undo", text, {"step": last.summary()})
                self.turn = previous.data.get("turn")
                tx.set_open("turn", self.turn)
            self.game, self.ledger = turns.load(previous.game), ledger_from(previous.ledger)
            self._restore(previous.data)
            self._publish(event)
            return {"undone": last.summary(), "text": text}

    def state(self) -> dict:
        with self._lock:
            battle = self.battle
            steps = self.store.steps(limit=HISTORY)
            can_undo = battle is None and (
                bool((self.turn or {}).get("rolls"))
                or (len(steps) > 1 and steps[-1].kind not in START_KINDS)
            )
            return {
                "phase": battle.status if battle is not None else "idle",
                "battle": battle.to_dict() if battle else None,
                "game": game_dict(self.game, log=False),
                "game_log": list(self.game.log[-HISTORY:]) if self.game is not None else [],
                "automaton": shown(self.turn),
                "ledger": ledger_dict(self.ledger),
                "ledger_warnings": self.ledger.miscounts(),
                "history": [s.summary() for s in steps],
                "can_undo": can_undo,
                "physical_dice": self.physical_dice,
                "primed": self.primed,
                "events": [e.to_dict() for e in self.bus.recent(HISTORY)],
                "tray": self.tray.last,
            }

    # --- committing and publishing -------------------------------------------------------

    def _commit(self, kind: str, text: str, data: dict | None = None) -> None:
        with self.store.transaction() as tx:
            event = tx.add_event(kind, text, data)
        self._publish(event)

    def _publish(self, event: dict) -> None:
        log.info("%s", event["text"])
        self.bus.publish(Event(**event))
