"""Colour model learned from calibration clicks, as one lookup table over quantised BGR.

Frames are first normalised toward the light at calibration time, using the tray floor as
the live reference (the one surface always in view): a smooth brightness field fitted to
the lit floor removes vignetting, lamp fall-off and light-strength drift, and per-channel
gains bring the floor back to its calibration colour (von Kries), which removes colour
temperature drift.

Each class (the floor, and every calibrated cube colour) is a few prototype BGR values
(k-means of its samples). A painted face under one light is its prototype scaled by how
much light it gets, so a class covers the segment s * prototype for s in a range: lit top,
shaded sides, glints. A pixel belongs to the nearest class it lies within tolerance of;
near none it is UNKNOWN, never forced into the nearest class.

Floor-coloured pixels darker than the lit floor get their own DARK labels by darkness, so
the counter can decide per frame, from where the cast shadows of this frame lie, which
darkness is shadow and which (on a grey tray, where black paint is floor-coloured) is a
black cube.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.errors import VisionError

# Label values of the lookup table: 1..K cube colours on a face lit like the clicked
# tops (horizontal faces: all tops get the floor's light, which the normalisation evens
# out), SIDE_BASE + k the other faces of colour k; then these.
FLOOR = 0
SIDE_BASE = 100
UNKNOWN = 255
DARK_BASE = 200  # DARK_BASE + i: floor-coloured at darkness bin i
DARK_LEVELS = np.linspace(0.22, 0.86, 17)  # bin edges, fraction of the lit floor's brightness
# Bins per channel, spaced on a square-root scale: fine steps in the dark, where black
# cubes and shadows must be told apart, coarse in the bright.
BINS = 40
# Light a cube face gets relative to the clicked (lit top) face: shaded sides down to
# this, glints up to that; tops (and their paint's spread between cubes) within TOP_SHADING.
FACE_SHADING = (0.28, 1.45)
TOP_SHADING = (0.86, 1.16)
# The lit floor: texture, uneven light and the fit's residue stay within this range. Not
# much lighter: a paint of the floor's hue (blue on a navy tray) is lighter by about 1.4,
# and was taken for floor (tuning tables: 734, 740, 738, 739 exact at 1.2, 1.25, 1.3, 1.35).
FLOOR_SHADING = (0.86, 1.25)
# Tolerance around a class: this many levels plus this fraction of the colour's brightness.
NOISE_LEVELS = 7.0
NOISE_RELATIVE = 0.13
PROTOTYPES = 6


def floor_labels(labels: np.ndarray) -> np.ndarray:
    """Where labels are the floor, lit or in shadow."""
    return (labels == FLOOR) | (labels >= DARK_BASE) & (labels != UNKNOWN)


def _bin_centres() -> np.ndarray:
    edges = (np.arange(BINS + 1) / BINS) ** 2 * 256.0
    return (edges[:-1] + edges[1:]) / 2


_QUANTISE = np.minimum((np.sqrt(np.arange(256) / 256.0) * BINS).astype(np.uint16), BINS - 1)
# Each channel's bin as its part of the table index (B, G, R), so that a pixel's index is
# the sum of its channels' (BINS**3 < 2**16): one 16-bit lookup and a sum per pixel.
_INDEX = np.stack([_QUANTISE * BINS * BINS, _QUANTISE * BINS, _QUANTISE], axis=1).reshape(256, 1, 3)


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


def segment_distance(
    colours: np.ndarray, protos: np.ndarray, shading: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Distance of each colour (Nx3) to the nearest shaded prototype in tolerance units
    (<1: inside), and the shading s at which it is nearest."""
    c = colours[:, None, :]
    p = protos[None, :, :].astype(np.float64)
    pp = np.maximum((p * p).sum(-1), 1.0)
    s = np.clip((c * p).sum(-1) / pp, *shading)
    residual = np.linalg.norm(c - s[..., None] * p, axis=-1)
    tolerance = NOISE_LEVELS + NOISE_RELATIVE * s * np.sqrt(pp)
    d = residual / tolerance
    best = d.argmin(axis=1)
    rows = np.arange(len(colours))
    return d[rows, best], s[rows, best]


class FloorField:
    """A smooth model of the lit floor's brightness over the rectified tray (a quadratic
    surface: vignetting and lamp fall-off are smooth), and per-channel gains."""

    # The surface is evaluated on a grid this many times coarser, then scaled up.
    COARSE = 4

    def __init__(self, size: tuple[int, int], reference: np.ndarray):
        w, h = size
        self.size = size
        self.reference = np.asarray(reference, dtype=np.float64)  # calibration floor BGR
        self.basis = self._basis(w, h)
        self.coarse_basis = self._basis(max(2, w // self.COARSE), max(2, h // self.COARSE))
        self.coef = np.array([self.reference.mean(), 0, 0, 0, 0, 0], np.float64)
        self.gains = np.ones(3)
        self._scale = None

    @staticmethod
    def _basis(w: int, h: int) -> np.ndarray:
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        x, y = (x + 0.5) / w - 0.5, (y + 0.5) / h - 0.5
        return np.stack([np.ones_like(x), x, y, x * x, x * y, y * y])

    @property
    def coef(self) -> np.ndarray:
        return self._coef

    @coef.setter
    def coef(self, value) -> None:
        self._coef = np.asarray(value, dtype=np.float64)
        self._scale = None

    def scale(self) -> np.ndarray:
        """Per-pixel, per-channel factors that map this frame to the calibration light."""
        if self._scale is None:
            small = np.tensordot(self._coef.astype(np.float32), self.coarse_basis, axes=1)
            field = cv2.resize(np.maximum(small, 2.0), self.size, interpolation=cv2.INTER_LINEAR)
            k = np.float32(self.reference.mean()) / field
            self._scale = cv2.merge([k * np.float32(g) for g in self.gains])
        return self._scale

    def fit(self, image: np.ndarray, floor_mask: np.ndarray, step: int = 5) -> bool:
        """Refit from the pixels known to be lit floor; False when too few are visible."""
        m = floor_mask[::step, ::step]
        if np.count_nonzero(m) < 0.15 * m.size:
            return False
        px = image[::step, ::step][m].astype(np.float64)
        A = self.basis[:, ::step, ::step][:, m].T.astype(np.float64)
        b = px.mean(axis=1)
        coef = np.linalg.solve(A.T @ A + 1e-6 * np.eye(6), A.T @ b)
        field = A @ coef
        if np.any(field <= 1):
            return False
        self.gains = self.reference / np.maximum(
            np.median(px / field[:, None], axis=0) * self.reference.mean(), 1e-3
        )
        self.coef = coef
        return True

    def rebase(self, image: np.ndarray, mask: np.ndarray) -> None:
        """Correct the gains from the median of the normalised image (the floor fills most
        of the tray) when the light changed too much for the floor to be recognised."""
        px = self.normalise(image)[mask > 0]
        if len(px):
            self.gains = self.gains * self.reference / np.maximum(np.median(px, axis=0), 2.0)
            self._scale = None

    def normalise(self, image: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
        scale = self.scale() if scale is None else scale
        return cv2.multiply(image, scale, dtype=cv2.CV_8U)


class ColourModel:
    """Classifies normalised pixels into FLOOR, 1..K (cube colours, in `names` order),
    DARK_BASE+i (floor colour at darkness bin i) or UNKNOWN."""

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
        self.table = self.labels_of(grid)

    def class_distances(self, colours: np.ndarray) -> np.ndarray:
        """Nx(1+K) distances in tolerance units: column 0 the floor (lit or in shadow), then each
        colour."""
        colours = np.asarray(colours, dtype=np.float64).reshape(-1, 3)
        cols = [segment_distance(colours, self.floor_protos, (DARK_LEVELS[0], FLOOR_SHADING[1]))[0]]
        cols += [
            segment_distance(colours, self.colour_protos[n], FACE_SHADING)[0] for n in self.names
        ]
        return np.stack(cols, axis=1)

    def labels_of(self, colours: np.ndarray) -> np.ndarray:
        colours = np.asarray(colours, dtype=np.float64).reshape(-1, 3)
        lit, _ = segment_distance(colours, self.floor_protos, FLOOR_SHADING)
        dark, s = segment_distance(colours, self.floor_protos, (DARK_LEVELS[0], DARK_LEVELS[-1]))
        fits = [segment_distance(colours, self.colour_protos[n], FACE_SHADING) for n in self.names]
        cubes = np.stack([d for d, _ in fits], axis=1)
        shading = np.stack([s for _, s in fits], axis=1)
        best = cubes.argmin(axis=1)
        rows = np.arange(len(colours))
        best_d = cubes[rows, best]
        best_s = shading[rows, best]
        top = (best_s >= TOP_SHADING[0]) & (best_s <= TOP_SHADING[1])
        labels = np.where(best_d < 1.0, np.where(top, best + 1, SIDE_BASE + best + 1), UNKNOWN)
        # Floor colour wins ties: a pixel that fits the floor is floor (or shadow) unless a
        # cube colour fits it clearly better.
        floor_d = np.minimum(lit, dark)
        is_floor = (floor_d < 1.0) & (floor_d <= best_d + 0.5)
        dark_bin = np.clip(np.searchsorted(DARK_LEVELS, s) - 1, 0, len(DARK_LEVELS) - 2)
        floor_labels = np.where(lit <= dark, FLOOR, DARK_BASE + dark_bin)
        return np.where(is_floor, floor_labels, labels).astype(np.uint8)

    def classify(self, normalised: np.ndarray) -> np.ndarray:
        """Label image (uint8) of a normalised BGR image."""
        return self.table.take(cv2.transform(cv2.LUT(normalised, _INDEX), np.ones((1, 3))))
