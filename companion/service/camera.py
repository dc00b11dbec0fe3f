"""The camera watch: a thread reads frames, keeps the camera's health and feeds the settle
watcher (vision.watcher.Watcher) and the preview.

It knows nothing of battles: it tells the table through callbacks that the tray moved,
that it settled (with the count), that the camera's status changed, or that the profile
does not fit the camera. Work for the tray itself (the simulated table's drops) is queued
with `call_soon` and runs on this thread between two reads, so no frame falls in between.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from calibration import make_counter
from calibration.errors import CalibrationError
from companion.config import Config
from companion.errors import CompanionError
from companion.service.preview import Preview
from firmware.camera import CameraLost, EndOfStream, Frame, FrameSource
from firmware.errors import FirmwareError
from vision import annotate
from vision.counter import FrameCount
from vision.errors import VisionError
from vision.watcher import Watcher

log = logging.getLogger(__name__)


def _ignore(*args: Any) -> None:
    """The default callback: nobody listens yet."""


class CameraWatch:
    def __init__(
        self, config: Config, source: FrameSource | None, profile: Any, preview: Preview
    ) -> None:
        self.config = config
        self.source = source
        self.preview = preview
        self.status = {"status": "starting", "detail": "", "source": getattr(source, "name", None)}
        self.frames = 0
        self.frame: Frame | None = None
        # Set by the table before start(): what the watch reports.
        self.on_motion: Callable[[], None] = _ignore
        self.on_settled: Callable[[FrameCount, np.ndarray], None] = _ignore
        self.on_status: Callable[[str, str], None] = _ignore
        self.on_unfit: Callable[[CalibrationError], None] = _ignore
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._soon: deque[Callable[[], None]] = deque()
        # The counter carries its light correction from count to count: one count at a time
        # (the camera thread, a recount from the page).
        self._count_lock = threading.Lock()
        self._last_motion: float | None = None
        self.profile = profile
        self._watcher = self._new_watcher(profile)
        self._unfit: tuple[int, int] | None = None  # a frame size the profile failed on

    # --- calibration ---------------------------------------------------------------------

    @staticmethod
    def _new_watcher(profile: Any) -> Watcher | None:
        if profile is None:
            return None
        return Watcher(lambda size: make_counter(profile, size))

    def set_profile(self, profile: Any) -> None:
        """Count with a new profile from now on; raises CalibrationError when it cannot."""
        frame = self.frame
        size = (
            frame.size
            if frame is not None
            else (self.config.camera.width, self.config.camera.height)
        )
        watcher = self._new_watcher(profile)
        watcher.counter_for(size)
        with self._count_lock:
            self.profile, self._watcher, self._unfit = profile, watcher, None

    @property
    def counter(self):
        """The counter for the camera's frames, or None (not calibrated, or the profile failed)."""
        watcher = self._watcher
        return None if watcher is None or self._unfit is not None else watcher.counter

    def count(self, image: np.ndarray) -> FrameCount:
        with self._count_lock:
            return self.counter.count(image)

    def annotate(self, image: np.ndarray, result: FrameCount | None = None) -> np.ndarray:
        """`image` with every counted cube outlined (counted now when no result is given)."""
        if result is None:
            if self.counter is None:
                return image
            result = self.count(image)
        return annotate(image, result)

    # --- the thread ------------------------------------------------------------------------

    def call_soon(self, work: Callable[[], None]) -> None:
        """Run `work` on the camera thread before its next read."""
        self._soon.append(work)

    def start(self) -> None:
        if self.source is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="camera", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.preview.close()
        if self.source is not None:
            self.source.close()  # also wakes a read waiting for its next frame
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def alive(self) -> bool:
        """The loop is running (or there is no camera to watch)."""
        return self.source is None or (self._thread is not None and self._thread.is_alive())

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _loop(self) -> None:
        timeout = self.config.camera.timeout
        while not self._stop.is_set():
            while self._soon:
                try:
                    self._soon.popleft()()
                except FirmwareError as e:
                    log.warning("simulated tray: %s", e)
            try:
                frame = self.source.read(timeout=timeout)
            except EndOfStream as e:
                self._set_status("lost", str(e))
                return
            except CameraLost as e:
                self._set_status("lost", str(e))
                self._stop.wait(0.5)
                continue
            if self.status["status"] != "ok":
                self._set_status("ok", f"{self.source.name}: delivering")
            self.frames += 1
            self.frame = frame
            try:
                self._watch(frame)
                self.preview.offer(frame.image, self.annotate)
            except (CompanionError, VisionError, CalibrationError) as e:
                log.warning("frame %d not counted: %s", frame.index, e)
            except Exception:
                # One bad frame must not stop the table; the log keeps the details.
                log.exception("frame %d not counted", frame.index)

    def _watch(self, frame: Frame) -> None:
        watcher = self._watcher
        if watcher is None or self._unfit is not None:
            return
        try:
            with self._count_lock:
                watcher.counter_for(frame.size)  # the camera's real size, known from its frames
                settled = watcher.feed(frame.image, frame.timestamp, frame.index)
        except CalibrationError as e:
            self._unfit = frame.size  # not retried on every frame
            self.on_unfit(e)
            return
        moved = watcher.detector.last_motion
        if moved is not None and moved != self._last_motion:
            self._last_motion = moved
            self.on_motion()
        if settled is not None:
            self.on_settled(settled.result, settled.event.image)

    def _set_status(self, status: str, detail: str) -> None:
        if self.status["status"] == status:
            return
        first = self.status["status"] == "starting"
        self.status = {**self.status, "status": status, "detail": detail}
        if first and status == "ok":
            return  # starting up is not news
        log.warning("camera %s: %s", status, detail)
        self.on_status(status, detail)
