"""Settle detection: one event per settled tray state in a stream of frames.

Frames are compared as coarse block means (cube-sized blocks average away sensor noise and
JPEG artefacts) after dividing each colour channel by its median, so brightness flicker of a
few percent is not motion. A frame is still when it matches both the previous frame (fast
motion) and the first frame of the current still run (slow creep). After `still_seconds` of
stillness the state is settled; it is reported when it differs from the last reported state,
so a cube that trickles out late gives a second, complete event instead of silence, and a
hand that passes over without changing the contents gives none.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.errors import VisionError

# Block means on a grid of about this many blocks across: cubes in a tray seen at 640x480
# are 20-40 px, so 8 px blocks see any moved cube in several blocks.
GRID_WIDTH = 80
# A block changed when a channel moved by this many levels after gain normalisation;
# noise and JPEG stay below ~4 levels on 64-pixel block means.
BLOCK_THRESHOLD = 12.0
# Blocks that must change for motion; one block alone can be a glint or a compression edge.
MIN_CHANGED_BLOCKS = 2
# Stillness needed before a state counts as settled.
STILL_SECONDS = 0.3


@dataclass(frozen=True)
class SettleEvent:
    frame_index: int  # index of the frame whose update() fired the event
    time: float  # that frame's time
    delay: float  # seconds since the last frame that showed movement
    image: np.ndarray  # the frame that fired (settled), for counting


class SettleDetector:
    def __init__(
        self,
        still_seconds: float = STILL_SECONDS,
        threshold: float = BLOCK_THRESHOLD,
        min_blocks: int = MIN_CHANGED_BLOCKS,
    ):
        self.still_seconds = still_seconds
        self.threshold = threshold
        self.min_blocks = min_blocks
        self.index = -1
        self._previous = None  # block means of the previous frame
        self._anchor = None  # block means of the first frame of this still run
        self._still_since = None  # time of that frame
        self._last_motion = None  # time of the last frame that moved
        self._previous_time = None
        self._reported = None  # block means of the last reported settled state
        self._previously_reported = None
        self._settled = False  # current still run already decided

    def _blocks(self, image: np.ndarray) -> np.ndarray:
        if image is None or image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
            raise VisionError("settle detector needs BGR colour frames")
        h, w = image.shape[:2]
        gw = min(GRID_WIDTH, w)
        gh = max(1, round(h * gw / w))
        small = cv2.resize(image, (gw, gh), interpolation=cv2.INTER_AREA).astype(np.float32)
        return small

    def _changed(self, a: np.ndarray, b: np.ndarray) -> bool:
        if a.shape != b.shape:
            return True
        # One gain for all channels (flicker dims them alike), compared in a's own levels
        # so a dark tray's noise is not blown up.
        gain = max(float(np.median(a)), 1.0) / max(float(np.median(b)), 1.0)
        diff = np.abs(a - b * gain).max(axis=2)
        return int(np.count_nonzero(diff > self.threshold)) >= self.min_blocks

    def update(
        self, image: np.ndarray, time: float, index: int | None = None
    ) -> SettleEvent | None:
        """Feed the next frame; return an event when this frame decides a new settled state."""
        self.index = self.index + 1 if index is None else index
        blocks = self._blocks(image)
        previous, self._previous = self._previous, blocks
        previous_time, self._previous_time = self._previous_time, time
        if (
            previous is None
            or self._changed(previous, blocks)
            or self._changed(self._anchor, blocks)
        ):
            if previous is not None:
                # Things were still moving in the previous frame: this one is the first
                # that may be at rest.
                self._last_motion = previous_time
            self._anchor, self._still_since, self._settled = blocks, time, False
            return None
        if self._settled or time - self._still_since < self.still_seconds - 1e-6:
            return None
        self._settled = True
        if self._reported is not None and not self._changed(self._reported, blocks):
            return None
        self._previously_reported, self._reported = self._reported, blocks
        since = self._last_motion if self._last_motion is not None else self._still_since
        return SettleEvent(self.index, time, time - since, image)

    @property
    def last_motion(self) -> float | None:
        """Time of the last frame that moved (None before any movement): when cubes start
        falling, this changes."""
        return self._last_motion

    def reject(self) -> None:
        """The last event's state is not a real settled tray (a hand holding still in it):
        forget it, so the state after the next movement is reported even if it looks alike."""
        self._reported = self._previously_reported
