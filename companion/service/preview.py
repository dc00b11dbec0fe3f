"""The tray preview for /stream.mjpg: one annotated JPEG at a time, however many watch.

The camera thread offers every frame; a JPEG is encoded only while someone watches, and
at most PREVIEW_FPS times a second. Readers wait for the next one on a condition.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import cv2
import numpy as np

from companion.errors import CompanionError

PREVIEW_FPS = 5
JPEG_QUALITY = 80


def jpeg(image: np.ndarray) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise CompanionError("could not encode a preview image")
    return data.tobytes()


class Preview:
    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._jpeg: bytes | None = None
        self._seq = 0
        self._time = 0.0
        self._closed = False
        self.viewers = 0

    def add_viewer(self, change: int) -> None:
        with self._ready:
            self.viewers += change

    def offer(self, image: np.ndarray, annotate: Callable[[np.ndarray], np.ndarray]) -> None:
        """A new camera frame: encoded (as `annotate` draws it) when it is wanted."""
        now = time.monotonic()
        if self.viewers <= 0 or now - self._time < 1.0 / PREVIEW_FPS:
            return
        data = jpeg(annotate(image))
        with self._ready:
            self._jpeg, self._time = data, now
            self._seq += 1
            self._ready.notify_all()

    def wait(self, last_seq: int, timeout: float) -> tuple[int, bytes | None]:
        """The next JPEG after `last_seq`, or the same one on timeout (or once closed)."""
        with self._ready:
            if self._seq == last_seq and not self._closed:
                self._ready.wait(timeout)
            return self._seq, self._jpeg

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify_all()
