"""The phases of one tower battle at the table, as a pure record and its transitions.

declared -> waiting_for_throw -> moving -> counted -> applied | cancelled
(an applied battle that is undone becomes `undone`). A recount goes back to the tray
from any open phase; a count can be corrected on confirm. Each transition returns a new
record; the service stores it before it answers, so a restart resumes the open phase.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from companion.errors import CompanionError
from companion.rules.battle import Battle, BattleError, Outcome, counts, into_tower, resolve
from companion.rules.ledger import PRIME_FARMER_CUBES, PRIME_PLAYER_CUBES

WAITING = "waiting_for_throw"
MOVING = "moving"
COUNTED = "counted"
APPLIED = "applied"
CANCELLED = "cancelled"
UNDONE = "undone"
OPEN = (WAITING, MOVING, COUNTED)
# A tower battle, or the priming throw at setup (docs/rules.md 1 "Priming the tower"): the
# same phases, but what comes out goes back to the supply and nobody wins.
BATTLE, PRIME = "battle", "prime"

# Keys a table may send when declaring a battle (POST /api/battles).
DECLARE_KEYS = {"attacker", "defender", "thrown", "revolt_markers", "territory", "pending_action"}


class PhaseError(CompanionError):
    """The request does not fit the battle's phase (answered with 409)."""


@dataclass(frozen=True)
class BattleRecord:
    id: int
    attacker: str
    defender: str | None
    thrown: Mapping[str, int]
    cup: Mapping[str, int]
    farmer: str
    revolt_markers: int = 0
    pending_action: bool = False
    territory: str | None = None
    origin: str = "table"  # "table" or "automaton"
    kind: str = BATTLE
    status: str = WAITING
    emerged: Mapping[str, int] | None = None
    unknown: int = 0  # blobs the counter could not name
    confidence: float | None = None
    unsure: bool = False  # the counter doubts its count (vision.counter.SURE)
    corrected: bool = False  # emerged typed in by the table, not read by the camera
    outcome: dict[str, Any] | None = None
    step_id: int | None = None  # the applied step, for undo
    times: dict[str, float] = field(default_factory=dict)

    def battle(self, emerged: Mapping[str, int] | None = None) -> Battle:
        return Battle(
            attacker=self.attacker,
            defender=self.defender,
            thrown=self.thrown,
            emerged=(self.emerged or {}) if emerged is None else emerged,
            cup=self.cup,
            revolt_markers=self.revolt_markers,
            farmer=self.farmer,
            pending_action=self.pending_action,
        )

    @property
    def into_tower(self) -> dict[str, int]:
        if self.kind == PRIME:
            return {**self.thrown, self.farmer: PRIME_FARMER_CUBES}
        return into_tower(self.battle({}))

    @property
    def is_open(self) -> bool:
        return self.status in OPEN

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["into_tower"] = self.into_tower
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BattleRecord:
        return cls(**{k: v for k, v in d.items() if k != "into_tower"})


def declare(
    battle_id: int, params: Any, cup: Mapping[str, int], farmer: str, origin: str = "table"
) -> BattleRecord:
    """A new battle from the table's request; raises BattleError naming a bad key."""
    if not isinstance(params, dict):
        raise BattleError(
            "expected a JSON object with attacker, defender, thrown "
            "(and optionally revolt_markers, territory, pending_action)"
        )
    unknown = sorted(set(params) - DECLARE_KEYS)
    if unknown:
        raise BattleError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(DECLARE_KEYS))})")
    for key in ("attacker", "defender", "thrown"):
        if key not in params:
            raise BattleError(
                f"missing key {key!r}"
                + (" (null for an empty province)" if key == "defender" else "")
            )
    territory = params.get("territory")
    if territory is not None and (not isinstance(territory, str) or not territory.strip()):
        raise BattleError(f"territory: expected a territory name, got {territory!r}")
    battle = Battle(
        attacker=params["attacker"],
        defender=params["defender"],
        thrown=params["thrown"],
        cup=cup,
        revolt_markers=params.get("revolt_markers", 0),
        farmer=farmer,
        pending_action=params.get("pending_action", False),
    )
    return BattleRecord(
        id=battle_id,
        attacker=battle.attacker,
        defender=battle.defender,
        thrown=dict(battle.thrown),
        cup=dict(battle.cup),
        farmer=battle.farmer,
        revolt_markers=battle.revolt_markers,
        pending_action=battle.pending_action,
        territory=territory.strip() if territory else None,
        origin=origin,
        times={WAITING: time.time()},
    )


def declare_prime(battle_id: int, players: list[str], farmer: str) -> BattleRecord:
    """The priming throw: PRIME_PLAYER_CUBES of each player and PRIME_FARMER_CUBES farmers."""
    if not players:
        raise BattleError("priming the tower needs the players' colours")
    return BattleRecord(
        id=battle_id,
        attacker=players[0],
        defender=None,
        thrown={p: PRIME_PLAYER_CUBES for p in players},
        cup={},
        farmer=farmer,
        kind=PRIME,
        times={WAITING: time.time()},
    )


def moving(record: BattleRecord) -> BattleRecord:
    _require(record, (WAITING,), "start moving")
    return replace(record, status=MOVING, times={**record.times, MOVING: time.time()})


def counted(
    record: BattleRecord,
    emerged: Mapping[str, int],
    unknown: int = 0,
    confidence: float | None = None,
    unsure: bool = False,
) -> BattleRecord:
    """The camera's (re)count: emerged cubes and the outcome they would give."""
    _require(record, OPEN, "be counted")
    emerged = counts("emerged", emerged)
    outcome = resolve(record.battle(emerged)).to_dict() if record.kind == BATTLE else None
    return replace(
        record,
        status=COUNTED,
        emerged=emerged,
        unknown=unknown,
        confidence=confidence,
        unsure=unsure,
        corrected=False,
        outcome=outcome,
        times={**record.times, COUNTED: time.time()},
    )


def doubtful(record: BattleRecord) -> bool:
    """Whether a count needs the table's eyes before it is applied: something in the tray
    was not named, the counter doubts it, or the battle's outcome carries a warning."""
    return bool(record.unknown or record.unsure or (record.outcome or {}).get("warnings"))


def confirm(
    record: BattleRecord, emerged: Any = None
) -> tuple[BattleRecord, Battle | None, Outcome | None]:
    """Confirm the count (or the table's corrected `emerged`); returns the applied record and
    the battle and outcome to apply to the game and the ledger (None, None for the priming)."""
    if emerged is None:
        _require(record, (COUNTED,), 'be confirmed without counts (give "emerged" to enter them)')
        emerged, corrected = record.emerged or {}, record.corrected
    else:
        _require(record, OPEN, "be confirmed")
        emerged = counts("emerged", emerged)
        corrected = emerged != (record.emerged or {}) or record.corrected
    if record.kind == PRIME:
        return (
            replace(
                record,
                status=APPLIED,
                emerged=emerged,
                corrected=corrected,
                times={**record.times, APPLIED: time.time()},
            ),
            None,
            None,
        )
    battle = record.battle(emerged)
    outcome = resolve(battle)
    applied = replace(
        record,
        status=APPLIED,
        emerged=dict(battle.emerged),
        corrected=corrected,
        outcome=outcome.to_dict(),
        times={**record.times, APPLIED: time.time()},
    )
    return applied, battle, outcome


def cancel(record: BattleRecord) -> BattleRecord:
    _require(record, OPEN, "be cancelled")
    return replace(record, status=CANCELLED, times={**record.times, CANCELLED: time.time()})


def undone(record: BattleRecord) -> BattleRecord:
    _require(record, (APPLIED,), "be undone")
    return replace(record, status=UNDONE, times={**record.times, UNDONE: time.time()})


def require_open(record: BattleRecord, what: str) -> None:
    _require(record, OPEN, what)


def _require(record: BattleRecord, allowed: tuple[str, ...], what: str) -> None:
    if record.status not in allowed:
        raise PhaseError(
            f"battle {record.id} is {record.status.replace('_', ' ')}: it cannot {what}"
        )
