"""A frame source that survives its camera: reopened with backoff when it is lost.

A camera counts as lost when it raises, or when it has delivered nothing for `silence`
seconds (by default: for a whole read's timeout, the configured camera timeout). The status
("ok" / "lost") and its detail are kept for the panel and the page, and reported through
`on_status` the moment they change.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from firmware.camera import CameraLost, EndOfStream, Frame, FrameSource, FrameTimeout, SourceBase

log = logging.getLogger(__name__)

StatusCallback = Callable[[str, str], None]


class RetryingSource(SourceBase):
    def __init__(
        self,
        opener: Callable[[], FrameSource],
        *,
        first: FrameSource | None = None,
        silence: float | None = None,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        on_status: StatusCallback | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._opener = opener
        self._source = first if first is not None else opener()
        self._last = self._source
        self.name = self._source.name
        self.silence = silence
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.on_status = on_status
        self._clock = clock
        self.status = "ok"
        self.detail = f"{self.name}: delivering"
        self.attempts = 0  # reopen attempts since the camera was lost
        self._delay = backoff
        self._next_attempt = 0.0
        self._last_frame = clock()
        self._lost_at = 0.0
        self._index = 0

    def __getattr__(self, name: str):
        # Device extras (a Pi camera's `controls`, `relock()`) of the current camera, or of
        # the last one while it is lost.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._source if self._source is not None else self._last, name)

    def read(self, timeout: float = 3.0) -> Frame:
        deadline = self._clock() + timeout
        while True:
            now = self._clock()
            if self._source is None and now >= self._next_attempt:
                self._reopen(now)
            if self._source is not None:
                # Lost when silent for the whole read (or for `silence` s since the last frame).
                limit = deadline if self.silence is None else self._last_frame + self.silence
                try:
                    frame = self._source.read(max(0.0, min(deadline, limit) - now))
                except EndOfStream:
                    raise
                except FrameTimeout as e:
                    if self._clock() >= limit:
                        self._lose(
                            f"no frame for {timeout if self.silence is None else self.silence:g} s"
                        )
                    elif self._clock() >= deadline:
                        raise CameraLost(str(e)) from None
                except CameraLost as e:
                    self._lose(str(e))
                else:
                    self._last_frame = self._clock()
                    if self.status != "ok":
                        self._set(
                            "ok",
                            f"{self.name}: back after {self._last_frame - self._lost_at:.1f} s",
                        )
                    frame = Frame(frame.image, frame.timestamp, self._index)
                    self._index += 1
                    return frame
            now = self._clock()
            if now >= deadline:
                raise CameraLost(self.detail)
            if self._source is None:
                time.sleep(max(0.0, min(deadline, self._next_attempt) - now))

    def _lose(self, why: str) -> None:
        try:
            self._source.close()
        except Exception as e:  # a dying device may fail to close too; it is gone either way
            log.debug("closing lost camera %s: %s", self.name, e)
        self._source = None
        self._lost_at = self._clock()
        self._delay = self.backoff
        self._next_attempt = self._lost_at + self._delay
        self.attempts = 0
        self._set("lost", f"camera lost: {why}")

    def _reopen(self, now: float) -> None:
        self.attempts += 1
        try:
            self._source = self._last = self._opener()
        except Exception as e:  # FirmwareError or a driver fault: try again later
            self._delay = min(self._delay * 2, self.max_backoff)
            self._next_attempt = now + self._delay
            self.detail = f"camera lost: {e} (attempt {self.attempts}, next in {self._delay:g} s)"
            log.debug(self.detail)
            return
        # A reopened camera gets a full silence period for its first frame.
        self._last_frame = self._clock()

    def _set(self, status: str, detail: str) -> None:
        self.status, self.detail = status, detail
        (log.warning if status == "lost" else log.info)(detail)
        if self.on_status is not None:
            self.on_status(status, detail)

    def close(self) -> None:
        if self._source is not None:
            self._source.close()
            self._source = None
        self._next_attempt = float("inf")
