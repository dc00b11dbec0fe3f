"""The counter: one frame in, cubes per colour out, with unknown blobs and confidences."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from vision.colour import ColourModel
from vision.errors import VisionError
from vision.geometry import TrayGeometry
from vision.segment import find_blobs
from vision.split import split_blob

# Light correction is redone when the floor's gains moved by more than this (relative).
GAIN_TOLERANCE = 0.03


@dataclass(frozen=True)
class Cube:
    centre: tuple[float, float]   # image px
    colour: str | None            # None: a blob the counter cannot explain
    confidence: float             # 0..1
    outline: np.ndarray = field(repr=False, default=None)  # 4x2 image px: one cube's square on the floor


@dataclass(frozen=True)
class FrameCount:
    counts: dict[str, int]
    unknown: int
    cubes: list[Cube]
    confidence: float
    ms: float
    tray: np.ndarray = field(repr=False, default=None)  # 4x2 image px of the tray floor

    def to_dict(self) -> dict:
        return {"counts": dict(self.counts), "unknown": self.unknown,
                "confidence": round(self.confidence, 3), "ms": round(self.ms, 2),
                "cubes": [{"centre": [round(c.centre[0], 1), round(c.centre[1], 1)], "colour": c.colour,
                           "confidence": round(c.confidence, 3)} for c in self.cubes]}


class Counter:
    def __init__(self, geometry: TrayGeometry, model: ColourModel, cube_area: float, cube_size: float,
                 frame_size: tuple[int, int]):
        self.geometry = geometry
        self.model = model
        self.cube_area = cube_area
        self.cube_size = cube_size
        self.frame_size = tuple(frame_size)
        self.gains = np.ones(3)

    def count(self, frame: np.ndarray) -> FrameCount:
        start = time.perf_counter()
        if frame is None or frame.ndim != 3 or frame.shape[2] != 3:
            raise VisionError("expected a BGR colour frame")
        if (frame.shape[1], frame.shape[0]) != self.frame_size:
            raise VisionError(f"frame is {frame.shape[1]}x{frame.shape[0]} but the counter was made "
                              f"for {self.frame_size[0]}x{self.frame_size[1]}")
        rect = self.geometry.rectify(frame)
        labels = self.model.classify(rect, self.gains)
        gains = self.model.light_gains(rect, labels)
        if np.max(np.abs(gains / self.gains - 1)) > GAIN_TOLERANCE:
            self.gains = gains
            labels = self.model.classify(rect, gains)
        n_colours = len(self.model.names)
        comps, blobs = find_blobs(labels, n_colours, self.cube_area)
        parts = [p for blob in blobs for p in split_blob(blob, comps, labels, n_colours, self.cube_area)]
        return self._result(parts, start)

    def _result(self, parts, start) -> FrameCount:
        names = self.model.names
        counts = {name: 0 for name in names}
        unknown = 0
        centres = self.geometry.to_image([p.centre for p in parts]) if parts else np.zeros((0, 2))
        half = self.cube_size / 2
        square = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        outlines = self.geometry.to_image(np.concatenate([square + p.centre for p in parts])) \
            if parts else np.zeros((0, 2))
        cubes = []
        for i, part in enumerate(parts):
            colour = names[part.colour - 1] if part.colour is not None else None
            if colour is None:
                unknown += 1
            else:
                counts[colour] += 1
            cubes.append(Cube((float(centres[i, 0]), float(centres[i, 1])), colour, part.confidence,
                              outlines[4 * i:4 * i + 4]))
        confidence = min([c.confidence for c in cubes], default=1.0)
        if unknown:
            confidence = 0.0
        return FrameCount(counts, unknown, cubes, confidence, (time.perf_counter() - start) * 1000,
                          self.geometry.corners)
