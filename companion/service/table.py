"""The table service: camera -> settle -> count -> rules -> confirmation -> game -> announcements.

One TableService per running companion. A camera thread reads frames, feeds the settle
detector and, while a battle waits for its throw, counts the settled tray. Every change
at the table (declare, count, confirm, cancel, undo, moves, automaton steps) happens under
one lock, is committed to the store, and only then published on the bus (page, panel,
speaker) and answered. Nothing is written per frame: a quiet table writes nothing.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Callable, Mapping

import cv2

from companion.config import Config
from companion.errors import CompanionError
from companion.rules.battle import Battle, Outcome
from companion.rules.ledger import Ledger
from companion.rules import game as rules_game
from companion.service import announce, phases, turns
from companion.service.bus import Event, EventBus
from companion.service.phases import BattleRecord, PhaseError
from companion.store import Store
from firmware.camera import CameraLost, EndOfStream, Frame, FrameSource
from firmware.errors import FirmwareError
from vision.errors import VisionError
from calibration.errors import CalibrationError

log = logging.getLogger(__name__)

PROFILE_FILE = "calibration.json"
# Interpretation: the ledger starts with this many cubes of each colour in the supply. Only
# movements matter (the tower estimate and the cup), so any number above a box's count works.
STARTING_SUPPLY = 60
# The annotated preview is re-encoded at most this often, however many clients watch.
PREVIEW_FPS = 5
JPEG_QUALITY = 80
# Steps and events shown as recent history in the state.
HISTORY = 20
# Step kinds undo never goes past: the start of the game.
START_KINDS = ("start", "new_game")
# The panel's status LEDs (firmware.panel.PHASES) and outcome LEDs for a battle.
PANEL_PHASES = {phases.WAITING: "armed", phases.MOVING: "counting"}
PANEL_OUTCOMES = {"conquered": "attacker_won", "held": "held", "devastated": "devastated"}


class TableService:
    def __init__(self, config: Config, store: Store, source: FrameSource | None, *,
                 bus: EventBus | None = None, speaker: Any = None, panel: Any = None,
                 profile: Any = None) -> None:
        self.config = config
        self.store = store
        self.source = source
        self.bus = bus or EventBus()
        self.speaker = speaker
        self.panel = panel
        self.farmer = config.colours.farmer
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._tray_commands: deque[Callable[[], None]] = deque()
        # The simulated tray plays the table's part: it drops declared battles itself.
        self.auto_drop = source is not None and hasattr(source, "throw")
        self.profile = profile
        self.counter = None
        self._counter_size: tuple[int, int] | None = None
        self._count_lock = threading.Lock()
        self._detector = None
        self._last_motion: float | None = None
        self._tray: dict[str, int] | None = None       # last settled tray contents (memory only)
        # While a battle waits for its throw: the tray before it, and the cubes in it that are not
        # the cup (strays, left by mistake): they lie there before the throw and are not counted.
        self._before: dict[str, int] | None = None
        self._strays: dict[str, int] | None = None
        self.camera_status = {"status": "starting", "detail": "", "source": getattr(source, "name", None)}
        self.frames = 0
        # The latest frame, and the annotated preview JPEG built from it.
        self._frame: Frame | None = None
        self._preview = threading.Condition()
        self._preview_jpeg: bytes | None = None
        self._preview_seq = 0
        self._preview_time = 0.0
        self.viewers = 0
        self._load()
        for listener in (self._speak, self._light):
            self.bus.add_listener(listener)
        if panel is not None:
            panel.when_command = self.panel_command
            self._light(Event(0, 0.0, "start", ""))

    # --- start, stop, resume ---------------------------------------------------------

    def _load(self) -> None:
        last = self.store.last_step()
        if last is None:
            ledger = self._start_ledger(self.config.colours.players)
            with self.store.transaction() as tx:
                last = tx.add_step("start", "Companion started with an empty table.", None, _ledger_dict(ledger))
        self.game = turns.load(last.game)
        self._restore(last.data)
        self.ledger = _ledger(last.ledger)
        self.turn = self.store.get_open("turn")
        self.battle: BattleRecord | None = None
        for record in self.store.battles(limit=5):
            if record["status"] in phases.OPEN:
                self.battle = BattleRecord.from_dict(record)
        self.bus.preload(Event(**e) for e in self.store.events(limit=200))
        if self.auto_drop:
            self._tray_commands.append(self._match_simulated_tray)
        if self.battle is not None:
            log.info("resuming battle %d (%s)", self.battle.id, self.battle.status)
            if self.battle.status == phases.MOVING:
                # Whatever was falling has landed meanwhile: watch for the throw again (or recount).
                self.battle = replace(self.battle, status=phases.WAITING)
            if self.battle.status == phases.WAITING and self.auto_drop:
                # The simulated tray forgot the throw when the service stopped: drop it again.
                self._queue_drop(self.battle)

    def reload(self, text: str) -> None:
        """Take up the store as it is now (a game imported: companion.record), and say so."""
        with self._lock:
            self._load()
            self._commit("game", text)

    def _restore(self, data: dict) -> None:
        """What each step carries besides the game and the ledger."""
        self.seed = data.get("seed", 0)
        self.physical_dice = data.get("physical_dice", self.config.game.physical_dice)
        self.primed = data.get("primed", False)

    def _step_data(self, **extra) -> dict:
        return {"seed": self.seed, "physical_dice": self.physical_dice, "primed": self.primed,
                "turn": self.turn, **extra}

    def start(self) -> None:
        if self.source is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._camera_loop, name="camera", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.bus.close()
        with self._preview:
            self._preview.notify_all()
        if self.source is not None:
            self.source.close()  # also wakes a read waiting for its next frame
        if self._thread is not None:
            self._thread.join(timeout=5)

    # --- calibration -------------------------------------------------------------------

    @property
    def profile_path(self) -> Path:
        return Path(self.config.data_dir) / PROFILE_FILE

    def set_profile(self, profile: Any) -> None:
        """Use a new calibration profile from now on (the calibration page saves it first)."""
        self._make_counter(profile)

    def _make_counter(self, profile: Any) -> None:
        from calibration import make_counter
        from vision.settle import SettleDetector
        size = self._frame.size if self._frame is not None else (self.config.camera.width,
                                                                 self.config.camera.height)
        with self._count_lock:
            self.profile = profile
            self.counter = make_counter(profile, size)
            self._counter_size = size
            self._detector = SettleDetector()

    def _counter_for(self, frame: Frame) -> None:
        """A counter for the camera's real frame size, made here so the page answers meanwhile."""
        try:
            self._make_counter(self.profile)
        except CalibrationError as e:
            self.counter, self._counter_size = None, frame.size  # not retried on every frame
            with self._lock:
                self._commit("calibration", f"Not counting: {e}. Calibrate again on the Calibrate page.")

    # --- the camera loop -----------------------------------------------------------------

    def _camera_loop(self) -> None:
        timeout = self.config.camera.timeout
        while not self._stop.is_set():
            while self._tray_commands:
                try:
                    self._tray_commands.popleft()()
                except FirmwareError as e:
                    log.warning("simulated tray: %s", e)
            try:
                frame = self.source.read(timeout=timeout)
            except EndOfStream as e:
                self._camera("lost", str(e))
                return
            except CameraLost as e:
                self._camera("lost", str(e))
                self._stop.wait(0.5)
                continue
            if self.camera_status["status"] != "ok":
                self._camera("ok", f"{self.source.name}: delivering")
            self.frames += 1
            self._frame = frame
            try:
                if self.profile is not None and self._counter_size != frame.size:
                    self._counter_for(frame)
                self._watch(frame)
                self._update_preview(frame)
            except (CompanionError, VisionError, CalibrationError) as e:
                log.warning("frame %d not counted: %s", frame.index, e)
            except Exception:
                # One bad frame must not stop the table; the log keeps the details.
                log.exception("frame %d not counted", frame.index)

    def _watch(self, frame: Frame) -> None:
        detector = self._detector
        if detector is None:
            return
        event = detector.update(frame.image, frame.timestamp)
        moved = detector.last_motion
        if moved is not None and moved != self._last_motion:
            self._last_motion = moved
            with self._lock:
                if self.battle is not None and self.battle.status == phases.WAITING:
                    self._commit_battle(phases.moving(self.battle), "battle_moving", announce.moving)
        if event is None:
            return
        result = self._count(event.image)
        if result.obstructed:
            # A hand (or another big unknown thing) in the tray: not a settled tray. The
            # detector forgets this state, so the one after the hand leaves is reported.
            detector.reject()
            return
        found = {c: n for c, n in result.counts.items() if n}
        with self._lock:
            record = self.battle
            if record is None:
                self._tray = found
                return
            if record.status == phases.COUNTED:
                if not _within(found, self._tray or {}):
                    # More cubes than counted, before the confirmation: one that trickled out
                    # late, or a pile a player spread out. The count follows the tray. (Fewer
                    # cubes means the table started clearing it: the count stands.)
                    self._counted(record, result, event.image)
                return
            if record.status == phases.WAITING:
                # Still since before the throw: the tray as it is before the cubes come out.
                self._tray = found
                self._set_before(found, record.cup)
                return
            if self._before is not None and _within(found, self._before):
                # Only cubes taken out (the cup picked up to be thrown): still waiting.
                self._set_before(found, record.cup)
                if record.status == phases.MOVING:
                    self._commit_battle(replace(record, status=phases.WAITING), "battle_waiting",
                                        lambda r: f"Battle {r.id}: waiting for the throw.")
                return
            self._counted(record, result, event.image)

    def _count(self, image):
        with self._count_lock:
            return self.counter.count(image)

    def _set_before(self, tray: Mapping[str, int], cup: Mapping[str, int]) -> None:
        self._before = dict(tray)
        self._strays = dict(Counter(tray) - Counter(cup))

    def _counted(self, record: BattleRecord, result, image) -> BattleRecord:
        emerged = Counter({c: n for c, n in result.counts.items() if n}) - Counter(self._strays or {})
        counted = phases.counted(record, dict(emerged), unknown=int(result.unknown),
                                 confidence=round(float(result.confidence), 3), unsure=not result.sure)
        jpeg = _jpeg(self._annotate(image, result))
        self._tray = {c: n for c, n in result.counts.items() if n}
        counted = self._commit_battle(counted, "battle_counted", announce.counted, image=jpeg)
        if self.config.game.auto_confirm and not phases.doubtful(counted):
            # The table chose not to confirm each count; a doubtful one still waits for it.
            return self.confirm(counted.id)
        return counted

    def _annotate(self, image, result):
        from vision import annotate
        return annotate(image, result)

    def _update_preview(self, frame: Frame) -> None:
        now = time.monotonic()
        if self.viewers <= 0 or now - self._preview_time < 1.0 / PREVIEW_FPS:
            return
        image = frame.image
        if self.counter is not None:
            image = self._annotate(image, self._count(image))
        jpeg = _jpeg(image)
        with self._preview:
            self._preview_jpeg, self._preview_time = jpeg, now
            self._preview_seq += 1
            self._preview.notify_all()

    @property
    def latest_frame(self) -> Frame | None:
        """The camera's newest frame (read-only; the calibration page shows it)."""
        return self._frame

    def add_viewer(self, change: int) -> None:
        with self._preview:
            self.viewers += change

    @property
    def alive(self) -> bool:
        """The camera loop is running (or there is no camera to watch)."""
        return self.source is None or (self._thread is not None and self._thread.is_alive())

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def wait_preview(self, last_seq: int, timeout: float) -> tuple[int, bytes | None]:
        """The next preview JPEG after `last_seq` (for /stream.mjpg), or the same one on timeout."""
        with self._preview:
            if self._preview_seq == last_seq and not self._stop.is_set():
                self._preview.wait(timeout)
            return self._preview_seq, self._preview_jpeg

    def _camera(self, status: str, detail: str) -> None:
        if self.camera_status["status"] == status:
            return
        first = self.camera_status["status"] == "starting"
        self.camera_status = {**self.camera_status, "status": status, "detail": detail}
        if first and status == "ok":
            return  # starting up is not news
        log.warning("camera %s: %s", status, detail)
        with self._lock:
            self._commit("camera", announce.camera(status, detail), {"status": status, "detail": detail})

    # --- battles -------------------------------------------------------------------------

    def declare_battle(self, params: Any, origin: str = "table") -> BattleRecord:
        with self._lock:
            if self.battle is not None:
                raise PhaseError(f"battle {self.battle.id} is still {self.battle.status.replace('_', ' ')}: "
                                 "confirm or cancel it first")
            record = phases.declare(self.store.next_battle_id(), params, self.ledger.cup, self.farmer, origin)
            self._check_territory(record)
            return self._declared(record)

    def _declared(self, record: BattleRecord) -> BattleRecord:
        with self._lock:
            if self._tray is not None:
                self._set_before(self._tray, record.cup)
            else:
                self._before = self._strays = None
            record = self._commit_battle(record, "battle_declared", announce.declared)
            if self.auto_drop:
                self._queue_drop(record)
            return record

    def prime_tower(self) -> BattleRecord:
        """The priming throw at setup (RULES 1 "Accounting"): the game's players' colours, else the
        configured ones; counted like a battle, and what comes out goes back to the supply."""
        with self._lock:
            self._no_open_battle("priming the tower")
            players = list(self.game.players) if self.game is not None else list(self.config.colours.players)
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
            if self.counter is None:
                raise PhaseError("the camera is not calibrated: calibrate it, or confirm with the counts typed in")
            if self._frame is None:
                raise PhaseError("no camera frame yet: the camera is not delivering")
            image = self._frame.image
            return self._counted(record, self._count(image), image)

    def confirm(self, battle_id: int, emerged: Any = None) -> BattleRecord:
        with self._lock:
            record = self._open(battle_id)
            applied, battle, outcome = phases.confirm(record, emerged)
            game = self.game
            if applied.kind == phases.PRIME:
                ledger, warnings = self.ledger.prime(list(applied.thrown), applied.farmer, applied.emerged)
                cup_after: Mapping[str, int] = {}
                self.primed = True
            else:
                if game is not None and applied.territory is not None:
                    game = rules_game.apply_battle(game, applied.territory, applied.attacker, outcome)
                ledger, warnings = self._ledger_after(battle, outcome)
                cup_after = outcome.cup_after
            text = announce.applied(applied)
            with self.store.transaction() as tx:
                step = tx.add_step(applied.kind, text, _game_dict(game), _ledger_dict(ledger),
                                   self._step_data(battle=applied.id, warnings=warnings))
                applied = replace(applied, step_id=step.id)
                tx.put_battle(applied.id, applied.to_dict())
                event = tx.add_event("battle_applied", text, {"battle": applied.to_dict(), "warnings": warnings})
            self.game, self.ledger, self.battle = game, ledger, None
            self._publish(event)
            if self.auto_drop:
                # The table clears the tray after a battle: all but the cup leaves it.
                leaving = Counter(applied.emerged or {}) - Counter(cup_after)
                self._tray_commands.append(lambda: self._take_from_tray(dict(leaving)))
                self._tray = dict(cup_after)
            if self.turn and self.turn["status"] == turns.BATTLES:
                # The round's battles: the service declares the next one itself.
                self._round_battles()
            return applied

    def cancel(self, battle_id: int) -> BattleRecord:
        with self._lock:
            record = self._open(battle_id)
            cancelled = self._commit_battle(phases.cancel(record), "battle_cancelled", announce.cancelled)
            if self.auto_drop:
                # The table takes the cubes of a cancelled throw out of the tray, as after a battle.
                self._tray_commands.append(self._match_simulated_tray)
            return cancelled

    def _open(self, battle_id: int) -> BattleRecord:
        if self.battle is None or self.battle.id != battle_id:
            record = self.get_battle(battle_id)  # LookupError when there is none
            raise PhaseError(f"battle {battle_id} is {record.status.replace('_', ' ')}: it is not the open battle")
        return self.battle

    def _commit_battle(self, record: BattleRecord, kind: str, sentence: Callable[[BattleRecord], str],
                       image: bytes | None = None) -> BattleRecord:
        text = sentence(record)
        with self.store.transaction() as tx:
            tx.put_battle(record.id, record.to_dict(), image=image, keep_image=image is None)
            event = tx.add_event(kind, text, {"battle": record.to_dict()})
        self.battle = record if record.is_open else None
        self._publish(event)
        return record

    def _queue_drop(self, record: BattleRecord) -> None:
        cubes = record.into_tower

        def drop() -> None:
            # The cup is picked up out of the tray and thrown in with the armies; what lies in
            # the tray then is what the count must not mistake for the throw.
            self._take_from_tray(record.cup)
            with self._lock:
                left = {c: n for c, n in self.source.contents().items() if n}
                self._before, self._strays = left, left
            self.source.throw(cubes)
        self._tray_commands.append(drop)

    def _take_from_tray(self, cubes: Mapping[str, int]) -> None:
        """Take cubes out of the simulated tray (as many as it holds: a miscount may claim more)."""
        have = self.source.contents()
        take = {c: min(n, have.get(c, 0)) for c, n in cubes.items() if min(n, have.get(c, 0))}
        if take:
            self.source.remove(take)

    def _match_simulated_tray(self) -> None:
        # The simulated tray starts with cubes of its own; the table's tray holds just the cup.
        self._take_from_tray(dict(Counter(self.source.contents()) - Counter(self.ledger.cup)))

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
            raise PhaseError(f"territory {record.territory!r}: no game is running; "
                             "start a game, or declare the battle without a territory")
        turns.check_battle(self.game, record.territory, record.attacker)

    # --- the game ---------------------------------------------------------------------------

    def new_game(self, params: Any) -> dict:
        """Set up a new game (solo setup done by the rules); undo stops here."""
        with self._lock:
            self._no_open_battle("starting a new game")
            game, seed, text = turns.new_game(params, self.config.game.map)
            physical = turns.physical_dice(params, self.config.game.physical_dice)
            ledger = self._start_ledger(game.players).move("supply", "board", turns.board_cubes(game))
            # A new ledger starts with an empty tower: the table primes it again.
            self.seed, self.turn, self.physical_dice, self.primed = seed, None, physical, False
            if physical:
                text += " The automatons' dice are rolled at the table."
            self._commit_step("new_game", text, game, ledger, event_kind="game")
            return {"text": text, "game": _game_dict(game, log=False)}

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
            return {"text": text, "game": _game_dict(after, log=False)}

    def automaton_next(self) -> dict:
        """The next step of the round: an automaton's decision (shown, said, waiting for the table
        to move the pieces and confirm), a person's turn, the round's battles, or the next round."""
        with self._lock:
            game = self._require_game()
            self._no_open_battle("the next step")
            if game.winner:
                raise PhaseError(f"the game is over: {game.winner} won")
            self._no_pending_turn()
            if self.turn is None:
                game = rules_game.start_round(game, turns.dice(self.seed, self.store.step_count()))
                self.turn = {"status": "round", "round": game.round, "queue": turns.round_queue(game),
                             "text": f"Round {game.round}: the automatons draw their cards."}
                self._commit_step("round", self.turn["text"], game, self.ledger, event_kind="automaton")
            queue = self.turn.get("queue") or []
            if not queue:
                return self._round_battles()
            colour, index = queue[0]
            if game.players[colour].automaton:
                turn = turns.decide(game, colour, index, self.seed, self.store.step_count(),
                                    [] if self.physical_dice else None)
            else:
                turn = turns.human_turn(colour, index)
            self.turn = {**turn, "round": game.round, "queue": queue[1:]}
            self._commit_open_turn("automaton")
            return _shown(self.turn)

    def automaton_roll(self, value: Any) -> dict:
        """The value of the physical die the table rolled for the automaton's decision: stored
        with the open turn, and the decision replayed from all the table's rolls so far."""
        with self._lock:
            game = self._require_game()
            if not self.turn or self.turn["status"] != turns.NEEDS_ROLL:
                raise PhaseError("no die roll is wanted now: the automaton asks for one when its "
                                 "decision needs it (with physical dice on)")
            sides, reason = self.turn["roll"]["sides"], self.turn["roll"]["reason"]
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= sides:
                raise turns.GameInputError(f"value: expected a whole number from 1 to {sides} "
                                           f"(the die for {reason}), got {value!r}")
            self._replay_rolls(self.turn["rolls"] + [value], f"Rolled {value} at the table.")
            return _shown(self.turn)

    def _replay_rolls(self, rolls: list[int], said: str) -> None:
        """The open automaton decision recomputed from the table's `rolls`, stored and announced."""
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
            self._commit_step("automaton", f"Confirmed: {text}", after, self._board_synced(game, after),
                              event_kind="automaton")
            return _shown(self.turn)

    def _round_battles(self) -> dict:
        """Declare the round's next pending battle, or end the round when none is left."""
        game = self.game
        pending = rules_game.pending_battles(game, game.first_player)
        if pending:
            params = turns.battle_params(game, pending[0])
            self.turn = {"status": turns.BATTLES, "round": game.round, "queue": [],
                         "text": f"Round {game.round}: {len(pending)} battle{'s' * (len(pending) > 1)} "
                                 f"to fight, first in {pending[0]}."}
            self._commit_open_turn("automaton")
            self.declare_battle(params, origin="automaton")
            return _shown(self.turn)
        game = rules_game.end_round(game)
        self.turn = None
        self._commit_step("round_end", f"Round {game.round - 1} is over.", game, self.ledger,
                          event_kind="automaton")
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
            tx.add_step(kind, text, _game_dict(game), _ledger_dict(ledger), self._step_data())
            tx.set_open("turn", self.turn)
            event = tx.add_event(event_kind, text, {"turn": _shown(self.turn)})
        self.game, self.ledger = game, ledger
        self._publish(event)

    def _commit_open_turn(self, kind: str, text: str | None = None) -> None:
        with self.store.transaction() as tx:
            tx.set_open("turn", self.turn)
            event = tx.add_event(kind, text or self.turn["text"], {"turn": _shown(self.turn)})
        self._publish(event)

    # --- undo, state --------------------------------------------------------------------------

    def undo(self) -> dict:
        with self._lock:
            if self.battle is not None:
                raise PhaseError(f"battle {self.battle.id} is open: confirm or cancel it before undoing")
            rolls = (self.turn or {}).get("rolls") if (self.turn or {}).get("status") in turns.PENDING else None
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
            self.game, self.ledger = turns.load(previous.game), _ledger(previous.ledger)
            self._restore(previous.data)
            self._publish(event)
            return {"undone": last.summary(), "text": text}

    def state(self) -> dict:
        with self._lock:
            battle = self.battle
            phase = battle.status if battle is not None else "idle"
            steps = self.store.steps(limit=HISTORY)
            return {
                "phase": phase,
                "battle": battle.to_dict() if battle else None,
                "game": _game_dict(self.game, log=False),
                "game_log": list(self.game.log[-HISTORY:]) if self.game is not None else [],
                "automaton": _shown(self.turn),
                "ledger": _ledger_dict(self.ledger),
                "ledger_warnings": self.ledger.miscounts(),
                "history": [s.summary() for s in steps],
                "can_undo": battle is None and (bool((self.turn or {}).get("rolls")) or
                                                (len(steps) > 1 and steps[-1].kind not in START_KINDS)),
                "physical_dice": self.physical_dice,
                "primed": self.primed,
                "events": [e.to_dict() for e in self.bus.recent(HISTORY)],
                "camera": {**self.camera_status, "frames": self.frames},
                "calibrated": self.profile is not None,
                "auto_drop": self.auto_drop,
                "tray": self._tray,
                # The simulated tray's truth, so a demo (and its tests) can check the count.
                "simulated_tray": self.source.contents() if self.auto_drop else None,
                "speech": self.speech_state(),
                "panel": self.panel.leds() if self.panel is not None else None,
            }

    # --- outputs --------------------------------------------------------------------------

    def _commit(self, kind: str, text: str, data: dict | None = None) -> None:
        with self.store.transaction() as tx:
            event = tx.add_event(kind, text, data)
        self._publish(event)

    def _publish(self, event: dict) -> None:
        log.info("%s", event["text"])
        self.bus.publish(Event(**event))

    def _speak(self, event: Event) -> None:
        if self.speaker is not None:
            self.speaker.say(event.text)

    def _light(self, event: Event) -> None:
        if self.panel is None:
            return
        battle = self.battle
        if self.camera_status["status"] == "lost":
            phase = "camera_lost"
        elif battle is None:
            # An automaton's move waits for the table to move its pieces and confirm, or for a die.
            phase = "attention" if self.turn and self.turn["status"] in turns.PENDING else "idle"
        elif battle.status == phases.COUNTED:
            phase = "attention" if phases.doubtful(battle) else "result"
        else:
            phase = PANEL_PHASES[battle.status]
        self.panel.show_phase(phase)
        if event.kind == "battle_declared":
            self.panel.show_outcome(None)
        elif event.kind in ("battle_counted", "battle_applied") and event.data["battle"]["outcome"]:
            self.panel.show_outcome(PANEL_OUTCOMES[event.data["battle"]["outcome"]["result"]])

    def panel_command(self, command: str) -> None:
        """A panel button (firmware.panel.COMMANDS); runs on gpiozero's thread. A press that does
        not fit the moment is answered by voice, like the page's message."""
        try:
            battle = self.battle
            if command == "repeat":
                recent = self.bus.recent(1)
                if recent:
                    self._speak(recent[0])
            elif command == "undo":
                self.undo()
            elif command == "next":
                self.automaton_next()
            elif command == "confirm" and battle is None:
                self.automaton_confirm()
            elif command in ("confirm", "recount", "cancel") and battle is not None:
                getattr(self, command)(battle.id)
            elif command == "arm" and battle is not None and battle.status == phases.WAITING:
                # a declared battle is armed already (the camera watches for its throw): the
                # press is answered with what to throw, so the table hears it was taken
                if self.speaker is not None:
                    self.speaker.say(announce.declared(battle))
            elif command == "arm" and battle is not None:
                raise PhaseError(f"battle {battle.id} is thrown already: confirm, recount or cancel it")
            else:
                raise PhaseError({"arm": "declare the battle on the page first",
                                  "recount": "no battle is open to recount",
                                  "cancel": "no battle is open to cancel"}.get(
                    command, f"the {command} button has no use in this version"))
        except (CompanionError, LookupError) as e:
            log.info("panel %s: %s", command, e)
            if self.speaker is not None:
                self.speaker.say(str(e))

    def speech_state(self) -> dict:
        s = self.speaker
        return {"available": bool(s and s.available), "muted": bool(s and s.muted)}

    def set_muted(self, muted: bool) -> dict:
        if self.speaker is not None:
            self.speaker.muted = muted
        return self.speech_state()


def _within(found: Mapping[str, int], baseline: Mapping[str, int]) -> bool:
    """True when `found` has no cube that was not already in `baseline`."""
    return all(n <= baseline.get(colour, 0) for colour, n in found.items())


def _jpeg(image) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise CompanionError("could not encode a preview image")
    return data.tobytes()


def _shown(turn: dict | None) -> dict | None:
    """The open turn as the page sees it (without the proposed game, kept for the confirmation)."""
    return None if turn is None else {k: v for k, v in turn.items() if k != "proposed"}


def _game_dict(game, log: bool = True) -> dict | None:
    if game is None:
        return None
    data = game.to_dict()
    if not log:
        data.pop("log", None)
    return data


def _ledger_dict(ledger: Ledger) -> dict:
    return {k: dict(v) for k, v in asdict(ledger).items()}


def _ledger(data: dict | None) -> Ledger:
    return Ledger(**(data or {}))
