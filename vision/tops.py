"""Cube tops found by their outline rather than their colour.

Where a paint looks like the floor in shadow (black cubes on a grey tray), colour cannot
tell a cube from a shadow. Shape can: a cube's top is a square of the learned size whose
four edges are all sharp (painted faces meet at an edge), while a cast shadow's edges are
soft (the lamp is not a point) except where it touches the cube that casts it. So the
edges are taken as what stays of the gradient at a fine scale after removing the gradient
at a coarser one (a soft edge has about as much of both), and a top is where a square of
the cube's size, at some angle, finds such edges on all four of its sides.
"""

from __future__ import annotations

import cv2
import numpy as np

# The outline is measured on a rectified view this much finer than the counter's (about
# 20 px per cube edge): at the counter's own scale a soft shadow edge looks as sharp as a
# cube's.
FINE = 1.5
# Gaussian scales (fine px) of the sharp and the soft gradient.
SHARP_SIGMA = 0.8
SOFT_SIGMA = 1.5
# Square angles tried over a quarter turn (a square repeats every 90°); 10° steps leave a
# corner at most 2 px off, within the edge's widening below.
ANGLES = 9


def sharp_edges(level: np.ndarray) -> np.ndarray:
    """Edge strength that only sharp edges keep: gradient at SHARP_SIGMA minus the
    gradient at SOFT_SIGMA, widened by a pixel so a square a pixel off still finds it."""

    def gradient(sigma: float) -> np.ndarray:
        smooth = cv2.GaussianBlur(level, (0, 0), sigma)
        return cv2.magnitude(
            cv2.Sobel(smooth, cv2.CV_32F, 1, 0, scale=0.125),
            cv2.Sobel(smooth, cv2.CV_32F, 0, 1, scale=0.125),
        )

    return cv2.dilate(
        cv2.subtract(gradient(SHARP_SIGMA), gradient(SOFT_SIGMA)), np.ones((3, 3), np.uint8)
    )


def outline_score(edges: np.ndarray, side: float, where: np.ndarray | None = None) -> np.ndarray:
    """Per pixel (only where `where` is set, 0 elsewhere): the best over angles of the
    weakest of the four sides of a square of `side` px centred there, each side scored by
    the mean edge strength along it.

    Each angle turns the image about its centre so that the squares stand upright (what
    turns off the image scores 0), scores them there and reads the score back at each
    pixel's turned position. Only the part of the turned image that the asked pixels'
    squares cover is made: on a tray they are a small share of the image.
    """
    h, w = edges.shape
    half = max(1, int(round(side / 2)))
    mean = np.full(2 * half + 1, 1 / (2 * half + 1), np.float32)
    ys, xs = np.nonzero(np.ones((h, w), bool) if where is None else where)
    best = np.zeros(len(xs), np.float32)
    for k in range(ANGLES if len(xs) else 0):
        turn = cv2.getRotationMatrix2D((w / 2, h / 2), 90.0 * k / ANGLES, 1.0)
        at = turn[:, :2] @ np.vstack([xs, ys]) + turn[:, 2:]
        # the squares round the turned pixels, and a pixel for the interpolation
        x0, y0 = np.maximum(np.floor(at.min(axis=1)).astype(int) - half, 0)
        x1, y1 = np.minimum(np.ceil(at.max(axis=1)).astype(int) + half + 1, (w, h))
        if x1 - x0 <= 2 * half or y1 - y0 <= 2 * half:
            continue
        turn[:, 2] -= (x0, y0)
        turned = cv2.warpAffine(edges, turn, (x1 - x0, y1 - y0)) if k else edges[y0:y1, x0:x1]
        columns = cv2.filter2D(turned, -1, mean[:, None], borderType=cv2.BORDER_CONSTANT)
        rows = cv2.filter2D(turned, -1, mean[None], borderType=cv2.BORDER_CONSTANT)
        # The weakest side where the whole square lies in the part; 0 round it, as the
        # image's border (where the part reaches it) or no asked pixel's square (elsewhere).
        score = cv2.min(
            cv2.min(columns[half:-half, : -2 * half], columns[half:-half, 2 * half :]),
            cv2.min(rows[: -2 * half, half:-half], rows[2 * half :, half:-half]),
        )
        best = np.maximum(best, _sample(score, at[0] - x0 - half, at[1] - y0 - half))
    score = np.zeros_like(edges)
    score[ys, xs] = best
    return score


def _sample(image: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The image interpolated at (x, y), 0 outside, in rows as wide as remap takes."""
    n = len(x)
    width = max(1, min(n, 4096))
    # (filled by assignment: np.pad's own cost was most of a small call's)
    maps = [np.zeros(-(-n // width) * width, np.float32) for _ in (x, y)]
    maps[0][:n], maps[1][:n] = x, y
    return cv2.remap(image, *(m.reshape(-1, width) for m in maps), cv2.INTER_LINEAR).ravel()[:n]


def peaks(score: np.ndarray, threshold: float, spacing: float) -> list[tuple[float, float, float]]:
    """(x, y, score) of the strongest local maxima at least `spacing` apart, strongest first."""
    ys, xs = np.nonzero(
        (score >= threshold) & (score >= cv2.dilate(score, np.ones((3, 3), np.uint8)))
    )
    order = np.argsort(-score[ys, xs])
    found: list[tuple[float, float, float]] = []
    for i in order:
        x, y = float(xs[i]), float(ys[i])
        if all((x - fx) ** 2 + (y - fy) ** 2 >= spacing**2 for fx, fy, _ in found):
            found.append((x, y, float(score[ys[i], xs[i]])))
    return found
