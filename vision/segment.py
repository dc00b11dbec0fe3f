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
# A piece of cube pixels too small to be a blob of its own that lies within this many cube
# edges of a blob belongs to it: the uncovered strip of a cube under a pile, cut off by the
# shadow of the cube on it. Not so a piece of a paint's sides alone (less than this share of
# a top of its top) beside a blob showing a top of that paint: that is the cube's own side
# beyond a dark edge.
FRAGMENT_REACH = 0.25
FRAGMENT_TOP = 0.1


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
    n, comps, stats, _ = cv2.connectedComponentsWithStats(foreground, connectivity=4)
    h, w = coarse.shape
    band = EDGE_BAND
    inner = np.bincount(comps[band:h - band, band:w - band].ravel(), minlength=n)
    kept = (stats[:, cv2.CC_STAT_AREA] >= MIN_BLOB_FRACTION * cube_area) & (inner >= EDGE_INNER * cube_area)
    kept[0] = False
    classes = 2 * n_colours + 3
    comps = np.where(kept[comps], comps, 0).astype(np.int32)
    per_class = np.bincount((comps * classes + coarse).ravel(), minlength=n * classes).reshape(n, classes)
    comps = _with_fragments(comps, coarse, n_colours, per_class[:, 1:n_colours + 1],
                            FRAGMENT_REACH * cube_size, FRAGMENT_TOP * cube_size ** 2)
    per_class = np.bincount((comps * classes + coarse).ravel(), minlength=n * classes).reshape(n, classes)
    at = np.flatnonzero(comps)
    label = comps.ravel()[at]
    ys, xs = np.divmod(at, w)
    area = np.bincount(label, minlength=n)
    centre = np.bincount(label, xs, n) / np.maximum(area, 1), np.bincount(label, ys, n) / np.maximum(area, 1)
    x0, y0, x1, y1 = np.full(n, w), np.full(n, h), np.zeros(n, int), np.zeros(n, int)
    np.minimum.at(x0, label, xs)
    np.minimum.at(y0, label, ys)
    np.maximum.at(x1, label, xs)
    np.maximum.at(y1, label, ys)
    blobs = [Blob(int(i), int(area[i]), (int(x0[i]), int(y0[i]), int(x1[i] - x0[i] + 1), int(y1[i] - y0[i] + 1)),
                  (float(centre[0][i]), float(centre[1][i])), per_class[i]) for i in np.nonzero(kept)[0]]
    return comps, blobs


def _with_fragments(comps: np.ndarray, coarse: np.ndarray, n_colours: int, tops: np.ndarray, reach: float,
                    least_top: float) -> np.ndarray:
    """The component image with the pieces of cube pixels outside the blobs given, whole,
    to the blob nearest to each, if within `reach` px (see FRAGMENT_REACH; `tops`: top
    pixels per blob and colour, `least_top`: FRAGMENT_TOP in px)."""
    loose = ((coarse != FLOOR) & (comps == 0)).astype(np.uint8)
    count, pieces = cv2.connectedComponents(loose, connectivity=8)
    if count <= 1 or not comps.any():
        return comps
    # distance from every pixel to the nearest blob pixel, and which pixel that is
    dist, nearest = cv2.distanceTransformWithLabels((comps == 0).astype(np.uint8), cv2.DIST_L2, 3,
                                                    labelType=cv2.DIST_LABEL_PIXEL)
    ys, xs = np.nonzero(comps)
    owner = np.zeros(int(nearest.max()) + 1, np.int32)
    owner[nearest[ys, xs]] = comps[ys, xs]
    ys, xs = np.nonzero(loose)
    d, piece, label = dist[ys, xs], pieces[ys, xs], coarse[ys, xs].astype(np.int64)
    order = np.lexsort((d, piece))
    closest = order[np.unique(piece[order], return_index=True)[1]]   # each piece's pixel nearest a blob
    blob = owner[nearest[ys[closest], xs[closest]]]
    # each piece's paint (by its top and side pixels) and its top pixels
    paint = np.where(label <= n_colours, label, label - n_colours) * (label <= 2 * n_colours)
    per_paint = np.bincount(piece * (n_colours + 1) + paint, minlength=count * (n_colours + 1)).reshape(count, -1)
    main = per_paint[:, 1:].argmax(axis=1)[piece[closest]]
    top = np.bincount(piece, (label >= 1) & (label <= n_colours), count)[piece[closest]]
    join = (d[closest] <= reach) & ((top >= least_top) | (tops[blob, main] < least_top))
    given = np.zeros(count, np.int32)
    given[piece[closest][join]] = blob[join]
    return np.where(loose > 0, given[pieces], comps)
