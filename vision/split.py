"""Touching cubes and piles: how many cubes of each colour a blob holds, and where.

A blob's pixels of one colour cover about `cube_area` per cube (the silhouette of one lone
cube, measured at calibration). Piles hide part of the lower cubes, so a colour's count is
its area over the cube area rounded with a bias toward more cubes, and each count gets a
confidence from how close the ratio is to a whole number.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.segment import Blob

# A colour's share of a blob below this fraction of a cube is a stray edge of a neighbour.
MIN_COLOUR_FRACTION = 0.3
# Unknown pixels need this much of a cube to be reported as an unknown blob.
MIN_UNKNOWN_FRACTION = 0.45
# Round n + this fraction up: hidden parts of piled cubes make areas fall short.
ROUND_UP_FROM = 0.45


@dataclass(frozen=True)
class Part:
    colour: int | None         # class number 1..K, None for unknown
    centre: tuple[float, float]  # rectified px
    confidence: float


def cubes_in_area(area: float, cube_area: float) -> tuple[int, float]:
    """Number of cubes that explain `area`, and a confidence 0..1 in that number."""
    ratio = area / cube_area
    n = max(int(np.floor(ratio)) + (1 if ratio - np.floor(ratio) >= ROUND_UP_FROM else 0), 1)
    confidence = float(np.clip(1.0 - 2.0 * abs(ratio - n) / max(1.0, n ** 0.5), 0.0, 1.0))
    return n, confidence


def split_blob(blob: Blob, comps: np.ndarray, coarse: np.ndarray, n_colours: int, cube_area: float) -> list[Part]:
    unknown, dark_part = n_colours + 1, n_colours + 2
    pixels = blob.class_pixels.astype(float)
    colours = [c for c in range(1, n_colours + 1) if pixels[c] >= MIN_COLOUR_FRACTION * cube_area]
    # Dark cube parts (shaded sides too dark to name) belong to the blob's colours.
    extra = pixels[dark_part]
    if colours:
        total = sum(pixels[c] for c in colours)
        areas = {c: pixels[c] + extra * pixels[c] / total for c in colours}
    else:
        areas = {}
        pixels[unknown] += extra
    if pixels[unknown] >= MIN_UNKNOWN_FRACTION * cube_area:
        areas[None] = pixels[unknown]
    x, y, w, h = blob.box
    inside = comps[y:y + h, x:x + w] == blob.index
    parts: list[Part] = []
    for cls, area in areas.items():
        n, confidence = cubes_in_area(area, cube_area)
        want = coarse[y:y + h, x:x + w] == (unknown if cls is None else cls)
        ys, xs = np.nonzero(inside & want)
        if len(xs) == 0:
            ys, xs = np.nonzero(inside)
        points = np.column_stack([xs + x, ys + y]).astype(np.float32)
        parts += [Part(cls, centre, confidence) for centre in _centres(points, n)]
    return parts


def _centres(points: np.ndarray, n: int) -> list[tuple[float, float]]:
    if n == 1 or len(points) < 2 * n:
        c = points.mean(axis=0)
        return [(float(c[0]), float(c[1]))] * n
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 0.5)
    cv2.setRNGSeed(0)
    _, _, centres = cv2.kmeans(points, n, None, criteria, 1, cv2.KMEANS_PP_CENTERS)
    return [(float(cx), float(cy)) for cx, cy in centres]
