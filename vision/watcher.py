"""Settled counts from a stream of frames: the settle detector decides when, the counter what.

A settled state whose count sees a hand or another big unknown object in the tray is not
reported (the detector forgets it, so the state after the hand leaves is reported).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vision.counter import Counter, FrameCount
from vision.settle import SettleDetector, SettleEvent


@dataclass(frozen=True)
class Settled:
    event: SettleEvent
    result: FrameCount

    def to_dict(self) -> dict:
        return {
            "frame": self.event.frame_index,
            "time": round(self.event.time, 3),
            "counts": dict(self.result.counts),
            "unknown": self.result.unknown,
            "confidence": round(self.result.confidence, 3),
            "sure": self.result.sure,
            "doubts": self.result.places_to_check,
            "delay": round(self.event.delay, 3),
        }


class Watcher:
    def __init__(
        self,
        make_counter: Callable[[tuple[int, int]], Counter],
        detector: SettleDetector | None = None,
    ):
        self._make_counter = make_counter
        self.detector = detector or SettleDetector()
        self.counter: Counter | None = None

    def feed(self, image: np.ndarray, time: float, index: int | None = None) -> Settled | None:
        event = self.detector.update(image, time, index)
        if event is None:
            return None
        result = self.counter_for((image.shape[1], image.shape[0])).count(image)
        if result.obstructed:
            self.detector.reject()
            return None
        return Settled(event, result)

    def counter_for(self, size: tuple[int, int]) -> Counter:
        """The counter for frames of `size` (width, height), made anew when the size changes."""
        if self.counter is None or self.counter.frame_size != size:
            self.counter = self._make_counter(size)
        return self.counter
