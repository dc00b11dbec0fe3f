"""The table service: the parts of a running companion, assembled.

camera watch (camera.py) -> settle and count -> the core (core.py: battles, game, undo)
-> store -> event bus -> page, speaker and panel (outputs.py), and on the simulated tray
the simulated table (simtable.py), which throws declared battles. The parts share one
lock (the core's) and talk through the bus; see docs/design.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from companion.config import Config
from companion.service.bus import EventBus
from companion.service.camera import CameraWatch
from companion.service.core import TableCore
from companion.service.outputs import Outputs
from companion.service.preview import Preview
from companion.service.simtable import SimulatedTable
from companion.store import Store
from firmware.camera import Frame, FrameSource
from firmware.simtray import SimulatedTray

PROFILE_FILE = "calibration.json"


class TableService(TableCore):
    def __init__(
        self,
        config: Config,
        store: Store,
        source: FrameSource | None,
        *,
        bus: EventBus | None = None,
        speaker: Any = None,
        panel: Any = None,
        profile: Any = None,
    ) -> None:
        self.source = source
        self.preview = Preview()
        camera = CameraWatch(config, source, profile, self.preview)
        super().__init__(config, store, bus or EventBus(), camera)
        self.simulated = (
            SimulatedTable(source, self, camera) if isinstance(source, SimulatedTray) else None
        )
        self.outputs = Outputs(self, camera, speaker, panel)

    def start(self) -> None:
        self.camera.start()

    def stop(self) -> None:
        self.bus.close()
        self.camera.stop()

    def state(self) -> dict:
        simulated = self.simulated
        return {
            **super().state(),
            "camera": {**self.camera.status, "frames": self.camera.frames},
            "calibrated": self.profile is not None,
            "auto_drop": simulated is not None,
            "simulated_tray": simulated.contents() if simulated is not None else None,
            "speech": self.outputs.speech_state(),
            "panel": self.panel.leds() if self.panel is not None else None,
        }

    # --- what the web app and the commands use of the parts ------------------------------

    @property
    def profile_path(self) -> Path:
        return Path(self.config.data_dir) / PROFILE_FILE

    @property
    def profile(self) -> Any:
        return self.camera.profile

    def set_profile(self, profile: Any) -> None:
        """Use a new calibration profile from now on (the calibration page saves it first)."""
        self.camera.set_profile(profile)

    @property
    def camera_status(self) -> dict:
        return self.camera.status

    @property
    def latest_frame(self) -> Frame | None:
        """The camera's newest frame (read-only; the calibration page shows it)."""
        return self.camera.frame

    @property
    def alive(self) -> bool:
        return self.camera.alive

    @property
    def stopped(self) -> bool:
        return self.camera.stopped

    def add_viewer(self, change: int) -> None:
        self.preview.add_viewer(change)

    def wait_preview(self, last_seq: int, timeout: float) -> tuple[int, bytes | None]:
        """The next preview JPEG after `last_seq` (for /stream.mjpg), or the same on timeout."""
        return self.preview.wait(last_seq, timeout)

    @property
    def speaker(self) -> Any:
        return self.outputs.speaker

    @property
    def panel(self) -> Any:
        return self.outputs.panel

    def panel_command(self, command: str) -> None:
        self.outputs.panel_command(command)

    def speech_state(self) -> dict:
        return self.outputs.speech_state()

    def set_muted(self, muted: bool) -> dict:
        return self.outputs.set_muted(muted)
