"""The simulated table: plays the players' part on the simulated tray, for the demo and tests.

It listens on the bus. A declared battle is thrown: the cup is picked up out of the tray,
everything goes through the tower model (companion.rules.tower) and what comes out drops
into the tray. After a battle the table clears the tray but for the cup; after a cancelled
one, it takes the thrown cubes out. Work on the tray runs on the camera thread
(CameraWatch.call_soon), between two frames.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping

from companion.rules.tower import TowerModel
from companion.service import phases
from companion.service.bus import Event
from companion.service.camera import CameraWatch
from companion.service.core import TableCore
from companion.service.phases import BattleRecord
from firmware.simtray import SimulatedTray


class SimulatedTable:
    def __init__(self, tray: SimulatedTray, table: TableCore, camera: CameraWatch) -> None:
        self.tray = tray
        self.table = table
        self.camera = camera
        self.tower = TowerModel(random.Random(tray.seed))
        # The simulated tray starts with cubes of its own; the table's tray holds just the cup.
        camera.call_soon(self._match_cup)
        battle = table.battle
        if battle is not None and battle.status == phases.WAITING:
            # The simulated tray forgot the throw when the service stopped: throw it again.
            self._throw(battle)
        table.bus.add_listener(self._heard)

    def _heard(self, event: Event) -> None:
        if event.kind == "battle_declared":
            self._throw(BattleRecord.from_dict(event.data["battle"]))
        elif event.kind == "battle_applied":
            applied = event.data["battle"]
            cup = (applied["outcome"] or {}).get("cup_after", {})
            leaving = dict(Counter(applied["emerged"] or {}) - Counter(cup))
            self.camera.call_soon(lambda: self._take(leaving))
            self.table.tray_cleared(cup)
        elif event.kind == "battle_cancelled":
            self.camera.call_soon(self._match_cup)

    def _throw(self, record: BattleRecord) -> None:
        def throw() -> None:
            # The cup is picked up out of the tray and thrown in with the armies; what lies in
            # the tray then is what the count must not mistake for the throw.
            self._take(record.cup)
            self.table.tray_before_throw({c: n for c, n in self.tray.contents().items() if n})
            self.tray.drop(self.tower.throw(record.into_tower))

        self.camera.call_soon(throw)

    def _take(self, cubes: Mapping[str, int]) -> None:
        """Take cubes out of the tray (as many as it holds: a miscount may claim more)."""
        have = self.tray.contents()
        take = {c: min(n, have.get(c, 0)) for c, n in cubes.items() if min(n, have.get(c, 0))}
        if take:
            self.tray.remove(take)

    def _match_cup(self) -> None:
        self._take(dict(Counter(self.tray.contents()) - Counter(self.table.ledger.cup)))

    def contents(self) -> dict[str, int]:
        """The tray's truth, so a demo (and its tests) can check the count."""
        return self.tray.contents()
