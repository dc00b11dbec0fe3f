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
        return cv2.magnitude(cv2.Sobel(smooth, cv2.CV_32F, 1, 0, scale=0.125),
                             cv2.Sobel(smooth, cv2.CV_32F, 0, 1, scale=0.125))
    return cv2.dilate(cv2.subtract(gradient(SHARP_SIGMA), gradient(SOFT_SIGMA)), np.ones((3, 3), np.uint8))


def outline_score(edges: np.ndarray, side: float) -> np.ndarray:
    """Per pixel: the best over angles of the weakest of the four sides of a square of
    `side` px centred there, each side scored by the mean edge strength along it."""
    h, w = edges.shape
    half = max(1, int(round(side / 2)))
    length = 2 * half + 1
    centre = (w / 2, h / 2)
    best = np.zeros_like(edges)
    for k in range(ANGLES):
        angle = 90.0 * k / ANGLES
        turned = cv2.warpAffine(edges, cv2.getRotationMatrix2D(centre, angle, 1.0), (w, h)) if k else edges
        columns = cv2.boxFilter(turned, -1, (1, length), borderType=cv2.BORDER_CONSTANT)
        rows = cv2.boxFilter(turned, -1, (length, 1), borderType=cv2.BORDER_CONSTANT)
        score = np.zeros_like(edges)
        score[:, half:w - half] = np.minimum(columns[:, :w - 2 * half], columns[:, 2 * half:])
        score[half:h - half, :] = np.minimum(score[half:h - half, :],
                                             np.minimum(rows[:h - 2 * half, :], rows[2 * half:, :]))
        score[:half, :] = 0
        score[h - half:, :] = 0
        if k:
            score = cv2.warpAffine(score, cv2.getRotationMatrix2D(centre, -angle, 1.0), (w, h))
        best = np.maximum(best, score)
    return best


def peaks(score: np.ndarray, threshold: float, spacing: float) -> list[tuple[float, float, float]]:
    """(x, y, score) of the strongest local maxima at least `spacing` apart, strongest first."""
    ys, xs = np.nonzero((score >= threshold) & (score >= cv2.dilate(score, np.ones((3, 3), np.uint8))))
    order = np.argsort(-score[ys, xs])
    found: list[tuple[float, float, float]] = []
    for i in order:
        x, y = float(xs[i]), float(ys[i])
        if all((x - fx) ** 2 + (y - fy) ** 2 >= spacing ** 2 for fx, fy, _ in found):
            found.append((x, y, float(score[ys[i], xs[i]])))
    return found
