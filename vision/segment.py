"""Cubes versus floor versus shadows: connected blobs of cube pixels on the rectified tray.

The colour model and the counter's shadow decision have already called cast shadows floor
(the floor's own colour, as dark as this frame's shadows) and a black cube black (darker
than any shadow, or of black's hue); what is left here is grouping the coarse labels into
blobs and dropping specks too small to be any part of a cube.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.colour import FLOOR

# A blob smaller than this fraction of one cube is noise or a glint on the floor.
MIN_BLOB_FRACTION = 0.2
# Clicked corners are a few pixels off, so a band this wide (rectified px) along the
# tray's edge may show the foot of the wall; blobs with less than this share of a cube
# outside it are wall, not cubes.
EDGE_BAND = 3
EDGE_INNER = 0.3


@dataclass(frozen=True)
class Blob:
    index: int                 # component number in the component image
    area: int                  # pixels
    box: tuple[int, int, int, int]  # x, y, w, h
    centre: tuple[float, float]     # rectified px
    class_pixels: np.ndarray   # pixels per coarse class: [floor, tops 1..K, other faces 1..K, unknown, dark part]


def find_blobs(coarse: np.ndarray, n_colours: int, cube_area: float, cube_size: float) -> tuple[np.ndarray, list[Blob]]:
    """Component image and the blobs big enough to hold part of a cube."""
    foreground = (coarse != FLOOR).astype(np.uint8)
    # Specks and strips thinner than half a cube (noise, the foot of the wall where the
    # corners were clicked a little outside the floor) are not cubes: keep only what lies
    # near something an opening with half a cube leaves standing.
    k = max(3, int(round(cube_size / 2)) | 1)
    core = cv2.morphologyEx(foreground, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    foreground &= cv2.dilate(core, np.ones((k, k), np.uint8))
    n, comps, stats, centroids = cv2.connectedComponentsWithStats(foreground, connectivity=4)
    classes = 2 * n_colours + 3
    per_class = np.bincount((comps * classes + coarse).ravel(), minlength=n * classes).reshape(n, classes)
    h, w = coarse.shape
    band = EDGE_BAND
    inner = np.bincount(comps[band:h - band, band:w - band].ravel(), minlength=n)
    blobs = []
    for i in range(1, n):
        area = int(stats[i, cv2.CC_STAT_AREA])
        if area < MIN_BLOB_FRACTION * cube_area or inner[i] < EDGE_INNER * cube_area:
            continue
        x, y, w, h = (int(v) for v in stats[i, :4])
        blobs.append(Blob(i, area, (x, y, w, h), (float(centroids[i, 0]), float(centroids[i, 1])),
                          per_class[i]))
    return comps, blobs
