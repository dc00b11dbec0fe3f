"""The summary of a game (issue 43), from the store: who won in which round, battles won and
lost per player, the tower over the game, and the counts the table corrected.

A game is the steps from its `new_game` step on. A battle is won by the side whose province it
is afterwards (conquered: the attacker; held: the defender) and lost by the other; a devastated
one is counted apart for both sides (nobody holds the province). A corrected count shows what
the camera counted last (from the announcement log) beside what the table confirmed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from companion.rules.battle import CONQUERED, DEVASTATED, HELD
from companion.rules.stickiness import estimate
from companion.service.phases import BATTLE, BattleRecord
from companion.store import Store
from companion.throws import EVERY, throws

GAME_START = "new_game"


def game_summary(store: Store) -> dict[str, Any] | None:
    """The current (or last) game's summary; None when no game was ever started."""
    steps = store.steps(limit=EVERY)
    starts = [n for n, s in enumerate(steps) if s.kind == GAME_START]
    if not starts:
        return None
    first = starts[-1]
    game = steps[-1].game or {}
    records = {b["id"]: b for b in store.battles(limit=EVERY)}
    players = {
        c: {
            "automaton": p["automaton"],
            "crowns": p["crowns"],
            "won": 0,
            "lost": 0,
            "devastated": 0,
        }
        for c, p in game.get("players", {}).items()
    }
    battles, corrected = 0, []
    counted = _camera_counts(store)
    for step in steps[first + 1 :]:
        data = records.get(step.data.get("battle"))
        if data is None or data.get("emerged") is None:
            continue
        record = BattleRecord.from_dict(data)
        if record.corrected:
            corrected.append(
                {
                    "battle": record.id,
                    "kind": record.kind,
                    "territory": record.territory,
                    "counted": counted.get(record.id),
                    "confirmed": dict(record.emerged),
                }
            )
        if record.kind != BATTLE:
            continue
        battles += 1
        result = record.outcome["result"]
        winner = {CONQUERED: record.attacker, HELD: record.defender}.get(result)
        for side in (record.attacker, record.defender):
            if side not in players:
                continue  # the farmers, or a colour not in the game
            if result == DEVASTATED:
                players[side]["devastated"] += 1
            else:
                players[side]["won" if side == winner else "lost"] += 1
    thrown = throws(store, since_step=steps[first].id)
    into, out = Counter(), Counter()
    for throw in thrown:
        into.update(throw.thrown)
        out.update(throw.emerged)
    tower = (steps[-1].ledger or {}).get("tower", {})
    return {
        "winner": game.get("winner"),
        "round": game.get("round"),
        "finished": bool(game.get("winner")),
        "map": game.get("map"),
        "players": players,
        "battles": battles,
        "tower": {
            "throws": len(thrown),
            "thrown": sum(into.values()),
            "emerged": sum(out.values()),
            "inside": {c: n for c, n in tower.items() if n},
            "stickiness": estimate(thrown).to_dict(),
        },
        "corrected": corrected,
    }


def _camera_counts(store: Store) -> dict[int, dict[str, int]]:
    """Each battle's last count by the camera, from the announcement log."""
    counts = {}
    after = 0
    while True:
        events = store.events(after=after, limit=1000)
        if not events:
            return counts
        for event in events:
            battle = event["data"].get("battle") if event["kind"] == "battle_counted" else None
            if battle is not None:
                counts[battle["id"]] = battle.get("emerged") or {}
        after = events[-1]["id"]
