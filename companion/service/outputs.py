"""The table's outputs besides the page: the speaker and the LED/button panel.

Both listen on the bus. The speaker says every event; the panel lights the phase and the
battle's outcome, and its buttons act on the table like the page's (a press that does not
fit the moment is answered by voice, like the page's message).
"""

from __future__ import annotations

import logging
from typing import Any

from companion.errors import CompanionError
from companion.service import announce, phases, turns
from companion.service.bus import Event
from companion.service.camera import CameraWatch
from companion.service.core import TableCore
from companion.service.phases import PhaseError

log = logging.getLogger(__name__)

# The panel's status LEDs (firmware.panel.PHASES) and outcome LEDs for a battle.
PANEL_PHASES = {phases.WAITING: "armed", phases.MOVING: "counting"}
PANEL_OUTCOMES = {"conquered": "attacker_won", "held": "held", "devastated": "devastated"}


class Outputs:
    def __init__(
        self, table: TableCore, camera: CameraWatch, speaker: Any = None, panel: Any = None
    ) -> None:
        self.table = table
        self.camera = camera
        self.speaker = speaker
        self.panel = panel
        table.bus.add_listener(self.speak)
        table.bus.add_listener(self.light)
        if panel is not None:
            panel.when_command = self.panel_command
            self.light(Event(0, 0.0, "start", ""))

    def speak(self, event: Event) -> None:
        if self.speaker is not None:
            self.speaker.say(event.text)

    def light(self, event: Event) -> None:
        if self.panel is None:
            return
        battle, turn = self.table.battle, self.table.turn
        if self.camera.status["status"] == "lost":
            phase = "camera_lost"
        elif battle is None:
            # An automaton's move waits for the table to move its pieces and confirm, or a die.
            phase = "attention" if turn and turn["status"] in turns.PENDING else "idle"
        elif battle.status == phases.COUNTED:
            phase = "attention" if phases.doubtful(battle) else "result"
        else:
            phase = PANEL_PHASES[battle.status]
        self.panel.show_phase(phase)
        if event.kind == "battle_declared":
            self.panel.show_outcome(None)
        elif event.kind in ("battle_counted", "battle_applied"):
            outcome = event.data["battle"]["outcome"]
            if outcome:
                self.panel.show_outcome(PANEL_OUTCOMES[outcome["result"]])

    def panel_command(self, command: str) -> None:
        """A panel button (firmware.panel.COMMANDS); runs on gpiozero's thread."""
        table = self.table
        try:
            battle = table.battle
            if command == "repeat":
                recent = table.bus.recent(1)
                if recent:
                    self.speak(recent[0])
            elif command == "undo":
                table.undo()
            elif command == "next":
                table.automaton_next()
            elif command == "confirm" and battle is None:
                table.automaton_confirm()
            elif command in ("confirm", "recount", "cancel") and battle is not None:
                getattr(table, command)(battle.id)
            elif command == "arm" and battle is not None and battle.status == phases.WAITING:
                # a declared battle is armed already (the camera watches for its throw): the
                # press is answered with what to throw, so the table hears it was taken
                if self.speaker is not None:
                    self.speaker.say(announce.declared(battle))
            elif command == "arm" and battle is not None:
                raise PhaseError(
                    f"battle {battle.id} is thrown already: confirm, recount or cancel it"
                )
            else:
                raise PhaseError(
                    {
                        "arm": "declare the battle on the page first",
                        "recount": "no battle is open to recount",
                        "cancel": "no battle is open to cancel",
                    }.get(command, f"the {command} button has no use in this version")
                )
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
