"""Cubes versus floor versus shadows: connected blobs of non-floor pixels on the rectified tray.

The colour model already calls cast shadows floor (the floor's own colour, darker), and a
black cube black (darker still, and of black's hue); what is left here is grouping the
labelled pixels into blobs and dropping specks too small to be any part of a cube.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.colour import FLOOR, UNKNOWN

# A blob smaller than this fraction of one cube is noise or a glint on the floor.
MIN_BLOB_FRACTION = 0.2


@dataclass(frozen=True)
class Blob:
    index: int                 # component number in the component image
    area: int                  # pixels
    box: tuple[int, int, int, int]  # x, y, w, h
    centre: tuple[float, float]     # rectified px
    class_pixels: np.ndarray   # pixels per class: [floor, colour 1..K, unknown]


def find_blobs(labels: np.ndarray, n_colours: int, cube_area: float) -> tuple[np.ndarray, list[Blob]]:
    """Component image and the blobs big enough to hold part of a cube."""
    foreground = (labels != FLOOR).astype(np.uint8)
    # One-pixel specks and hairlines (noise, JPEG ringing on the floor) are not cubes.
    foreground = cv2.morphologyEx(foreground, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    n, comps, stats, centroids = cv2.connectedComponentsWithStats(foreground, connectivity=4)
    classes = np.where(labels == UNKNOWN, n_colours + 1, labels).astype(np.int32)
    per_class = np.bincount((comps.astype(np.int32) * (n_colours + 2) + classes).ravel(),
                            minlength=n * (n_colours + 2)).reshape(n, n_colours + 2)
    blobs = []
    for i in range(1, n):
        area = int(stats[i, cv2.CC_STAT_AREA])
        if area < MIN_BLOB_FRACTION * cube_area:
            continue
        x, y, w, h = (int(v) for v in stats[i, :4])
        blobs.append(Blob(i, area, (x, y, w, h), (float(centroids[i, 0]), float(centroids[i, 1])),
                          per_class[i]))
    return comps, blobs
