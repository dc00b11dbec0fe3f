"""Colour model learned from calibration clicks, as one lookup table over quantised BGR.

Each class (the bare floor, and every calibrated cube colour) is a few prototype BGR values
(k-means of its samples). A painted face under one light is its prototype scaled by how
much light it gets, so a class covers the ray segment s * prototype for s in a range: the
lit top, the shaded sides (darker) and glints (brighter); for the floor the range reaches
down into cast shadows. A pixel belongs to the nearest class whose segment it lies within
a noise tolerance of; near none it is UNKNOWN, never forced into the nearest class.

Light that drifts after calibration is corrected per frame from the tray floor, the one
surface that is always in view: per-channel gains bring the floor back to its calibration
colour (von Kries), applied through the per-channel quantisation tables for free.
"""
from __future__ import annotations

import cv2
import numpy as np

from vision.errors import VisionError

FLOOR = 0
UNKNOWN = 255
# Bins per channel, spaced on a square-root scale: fine steps in the dark, where black
# cubes and shadows must be told apart, coarse in the bright.
BINS = 40
# Light a cube face gets relative to the clicked face: shaded sides down to this, glints up to that.
FACE_SHADING = (0.3, 1.4)
# The floor in a cast shadow keeps at least this fraction of its light (ambient light).
FLOOR_SHADING = (0.33, 1.3)
# Tolerance around a class: this many levels plus this fraction of the colour's brightness.
NOISE_LEVELS = 7.0
NOISE_RELATIVE = 0.14
PROTOTYPES = 6


def _bin_centres() -> np.ndarray:
    edges = (np.arange(BINS + 1) / BINS) ** 2 * 256.0
    return (edges[:-1] + edges[1:]) / 2


def _channel_table(gain: float) -> np.ndarray:
    v = np.clip(np.arange(256, dtype=np.float64) * gain, 0, 255.999)
    return np.minimum((np.sqrt(v / 256.0) * BINS).astype(np.uint8), BINS - 1)


def prototypes(samples: np.ndarray, k: int = PROTOTYPES) -> np.ndarray:
    samples = np.asarray(samples, dtype=np.float32).reshape(-1, 3)
    if len(samples) == 0:
        raise VisionError("a colour needs at least one sample pixel")
    if len(samples) <= k:
        return samples
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(1)
    _, _, centres = cv2.kmeans(samples, k, None, criteria, 1, cv2.KMEANS_PP_CENTERS)
    return centres


def segment_distance(colours: np.ndarray, protos: np.ndarray, shading: tuple[float, float]) -> np.ndarray:
    """Distance of each colour (Nx3) to the nearest shaded prototype, in tolerance units (<1: inside)."""
    c = colours[:, None, :]
    p = protos[None, :, :].astype(np.float64)
    pp = np.maximum((p * p).sum(-1), 1.0)
    s = np.clip((c * p).sum(-1) / pp, *shading)
    residual = np.linalg.norm(c - s[..., None] * p, axis=-1)
    tolerance = NOISE_LEVELS + NOISE_RELATIVE * s * np.sqrt(pp)
    return (residual / tolerance).min(axis=1)


class ColourModel:
    """Classifies pixels into FLOOR, 1..len(names) (cube colours, in `names` order) or UNKNOWN."""

    def __init__(self, floor_pixels: np.ndarray, colour_pixels: dict[str, np.ndarray]):
        if not colour_pixels:
            raise VisionError("the colour model needs at least one cube colour")
        self.names = list(colour_pixels)
        floor = np.asarray(floor_pixels, dtype=np.float32).reshape(-1, 3)
        self.floor_reference = np.median(floor, axis=0)
        self.floor_protos = prototypes(floor)
        self.colour_protos = {n: prototypes(px) for n, px in colour_pixels.items()}
        centres = _bin_centres()
        b, g, r = np.meshgrid(centres, centres, centres, indexing="ij")
        grid = np.stack([b.ravel(), g.ravel(), r.ravel()], axis=1)
        self.distances = self.class_distances(grid)
        best = self.distances.argmin(axis=1)
        labels = np.where(self.distances[np.arange(len(grid)), best] < 1.0, best, UNKNOWN)
        self.table = labels.astype(np.uint8)
        self.gains = np.ones(3)

    def class_distances(self, colours: np.ndarray) -> np.ndarray:
        """Nx(1+K) distances in tolerance units: column 0 the floor, then each colour."""
        colours = np.asarray(colours, dtype=np.float64).reshape(-1, 3)
        cols = [segment_distance(colours, self.floor_protos, FLOOR_SHADING)]
        cols += [segment_distance(colours, self.colour_protos[n], FACE_SHADING) for n in self.names]
        return np.stack(cols, axis=1)

    def classify(self, image: np.ndarray, gains=None) -> np.ndarray:
        """Label image (uint8) of a BGR image, after per-channel light-correction gains."""
        gains = self.gains if gains is None else gains
        chans = cv2.split(image)
        idx = [cv2.LUT(ch, _channel_table(g)).astype(np.int32) for ch, g in zip(chans, gains)]
        return self.table[(idx[0] * BINS + idx[1]) * BINS + idx[2]]

    def light_gains(self, image: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        """Per-channel gains that bring this frame's floor back to its calibration colour.

        The floor is the brightest-half of pixels the current model calls floor (cast
        shadows excluded); with no labels yet, the image median (the floor fills most of
        the tray).
        """
        px = image.reshape(-1, 3)
        if labels is not None:
            floor = px[labels.reshape(-1) == FLOOR]
            if len(floor) > 0.2 * len(px):
                px = floor
        now = np.median(px, axis=0).astype(np.float64)
        return self.floor_reference / np.maximum(now, 4.0)
