"""The tower's throws as the store records them (issue 43): what went in, what the tower held
before, what came out, for every applied battle and priming; and a battle's odds from them.

Read from the step history (the undo stack), so an undone battle is not a throw.
"""

from __future__ import annotations

from itertools import pairwise

from companion.rules.odds import Odds, battle_odds
from companion.rules.stickiness import Throw, estimate
from companion.service.phases import BATTLE, BattleRecord
from companion.store import Store

EVERY = -1  # SQLite's LIMIT for no limit


def throws(store: Store, before_step: int | None = None, since_step: int = 0) -> list[Throw]:
    """The applied throws in order (those applied before step `before_step` when given, and
    after step `since_step`)."""
    steps = store.steps(limit=EVERY)
    records = {b["id"]: b for b in store.battles(limit=EVERY)}
    found = []
    for previous, step in pairwise(steps):
        if before_step is not None and step.id >= before_step:
            break
        if step.id <= since_step:
            continue
        record = records.get(step.data.get("battle"))
        if record is None or record.get("emerged") is None:
            continue
        found.append(
            Throw(
                thrown=BattleRecord.from_dict(record).into_tower,
                inside=(previous.ledger or {}).get("tower", {}),
                emerged=record["emerged"],
            )
        )
    return found


def record_odds(store: Store, record: BattleRecord) -> Odds | None:
    """The odds of a battle as they stood before its throw: the tower's contents and stickiness
    from the steps before it (an applied battle) or the latest step. None for the priming."""
    if record.kind != BATTLE:
        return None
    before = [
        s for s in store.steps(limit=EVERY) if record.step_id is None or s.id < record.step_id
    ]
    inside = (before[-1].ledger or {}).get("tower", {}) if before else {}
    return battle_odds(
        record.battle({}), inside, estimate(throws(store, record.step_id)), seed=record.id
    )
