"""Cubes versus floor versus shadows: connected blobs of cube pixels on the rectified tray.

The colour model and the counter's shadow decision have already called cast shadows floor
(the floor's own colour, as dark as this frame's shadows) and a black cube black (darker
than any shadow, or of black's hue); what is left here is grouping the coarse labels into
blobs, dropping specks too small to be any part of a cube, and giving the pieces cut off
from a blob by a shadow line back to it.
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
# outside it are wall, not cubes. (No more than a blob's least: a cube that the near wall
# mostly hides shows little more.)
EDGE_BAND = 3
EDGE_INNER = MIN_BLOB_FRACTION
# A piece of cube pixels too small to be a blob of its own that lies within this many cube
# edges of a blob belongs to it: the uncovered strip of a cube under a pile, cut off by the
# shadow of the cube on it. Not so a piece of a paint's sides alone (less than this share of
# a top of its top) beside a blob showing a top of that paint: that is the cube's own side
# beyond a dark edge.
# Nor a piece of unknown pixels alone along the tray's edge: that is the foot of a wall in
# a light that changed since calibration, which a cube against that wall would join.
FRAGMENT_REACH = 0.25
FRAGMENT_TOP = 0.1
# Holes in cube pixels up to this share of a top are filled before looking for solid parts.
HOLE = 0.25


@dataclass(frozen=True)
class Blob:
    index: int  # component number in the component image
    area: int  # pixels
    box: tuple[int, int, int, int]  # x, y, w, h
    centre: tuple[float, float]  # rectified px
    class_pixels: (
        np.ndarray
    )  # pixels per coarse class: [floor, tops 1..K, other faces 1..K, unknown, dark part]


def find_blobs(
    coarse: np.ndarray, n_colours: int, cube_area: float, cube_size: float
) -> tuple[np.ndarray, list[Blob]]:
    """Component image and the blobs big enough to hold part of a cube."""
    foreground = (coarse != FLOOR).astype(np.uint8)
    # Specks and strips thinner than half a cube (noise, the foot of the wall where the
    # corners were clicked a little outside the floor) are not cubes: keep only what lies
    # near something an opening with half a cube leaves standing.
    # (small holes filled first: a lit top of a paint near the floor's colour, blue on a navy
    # tray, loses scattered pixels to the floor, and no opening fits between them; a gap
    # between two pieces is open at its ends, so it stays)
    k = max(3, int(round(cube_size / 2)) | 1)
    holes, hole_areas = pieces(1 - foreground)
    small = (hole_areas <= HOLE * cube_size**2).astype(np.uint8)
    solid = foreground | small[holes]
    core = cv2.morphologyEx(
        solid, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    )
    foreground &= cv2.dilate(core, np.ones((k, k), np.uint8))
    n, comps, areas, boxes, centroids = _components(foreground)
    inner = areas - _in_band(comps, n)
    kept = (areas >= MIN_BLOB_FRACTION * cube_area) & (inner >= EDGE_INNER * cube_area)
    kept[0] = False
    comps = np.take(np.where(kept, np.arange(n, dtype=np.int32), 0), comps)
    classes = 2 * n_colours + 3
    per_class = np.bincount((comps * classes + coarse).ravel(), minlength=n * classes).reshape(
        n, classes
    )
    # the pieces of cube pixels outside the blobs
    loose = ((coarse != FLOOR) & (comps == 0)).astype(np.uint8)
    count, fragments = cv2.connectedComponents(loose, connectivity=8)
    given = _fragment_owners(
        comps,
        coarse,
        fragments,
        count,
        n_colours,
        per_class[:, 1 : n_colours + 1],
        FRAGMENT_REACH * cube_size,
        FRAGMENT_TOP * cube_size**2,
    )
    areas = areas.astype(np.float64)
    sums = centroids * areas[:, None]
    if given.any():
        joined = given.take(fragments)
        comps = np.where(loose > 0, joined, comps)
        # the joined pieces' pixels added to their blobs' boxes, areas and classes
        ys, xs = nonzero(joined != 0)
        owner = joined[ys, xs]
        for b in np.unique(owner):
            mine = owner == b
            bx, by = xs[mine], ys[mine]
            x0, y0 = min(boxes[b, 0], bx.min()), min(boxes[b, 1], by.min())
            boxes[b] = (
                x0,
                y0,
                max(boxes[b, 0] + boxes[b, 2], bx.max() + 1) - x0,
                max(boxes[b, 1] + boxes[b, 3], by.max() + 1) - y0,
            )
            areas[b] += len(bx)
            sums[b] += bx.sum(), by.sum()
        added = np.bincount(owner * classes + coarse[ys, xs], minlength=n * classes)
        per_class = per_class + added.reshape(n, classes)
    return comps, [
        Blob(
            int(i),
            int(areas[i]),
            tuple(int(v) for v in boxes[i]),
            (float(sums[i, 0] / areas[i]), float(sums[i, 1] / areas[i])),
            per_class[i],
        )
        for i in np.nonzero(kept)[0]
    ]


def _in_band(comps: np.ndarray, n: int) -> np.ndarray:
    """Pixels of each of the `n` labels in the EDGE_BAND along the image's edge."""
    h, w = comps.shape
    e = EDGE_BAND
    return sum(
        np.bincount(strip.ravel(), minlength=n)
        for strip in (comps[:e], comps[h - e :], comps[e : h - e, :e], comps[e : h - e, w - e :])
    )


def pieces(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 4-connected pieces of a uint8 mask (a label image, 0 outside them) and the area
    in px of each label, the outside's first. (Areas by bincount: the statistics of
    connectedComponentsWithStats cost more than the labelling.)"""
    n, labels = cv2.connectedComponents(mask, connectivity=4)
    return labels, np.bincount(labels.ravel(), minlength=n)


def nonzero(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of a 2-D bool mask's set pixels in raster order, as np.nonzero gives
    them (found flat: several times faster on a whole frame)."""
    return np.divmod(np.flatnonzero(mask), mask.shape[1])


def _components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """OpenCV's 4-connected components of a uint8 mask with their statistics: the count,
    the label image, and per label its area, box (x, y, w, h) and centroid (the
    background's area only). The statistics are taken from the mask's pixels alone: over
    every pixel, as connectedComponentsWithStats takes them, they cost more than the
    labelling."""
    n, comps = cv2.connectedComponents(mask, connectivity=4)
    ys, xs = nonzero(mask > 0)
    label = comps[ys, xs]
    areas = np.bincount(label, minlength=n)
    areas[0] = mask.size - len(label)
    order = np.argsort(label, kind="stable")
    starts = np.searchsorted(label[order], np.arange(1, n))
    boxes = np.zeros((n, 4), np.int64)
    centroids = np.zeros((n, 2))
    for axis, v in enumerate((xs, ys)):
        if n > 1:
            grouped = v[order]
            low = np.minimum.reduceat(grouped, starts)
            boxes[1:, axis], boxes[1:, axis + 2] = (
                low,
                np.maximum.reduceat(grouped, starts) - low + 1,
            )
        centroids[1:, axis] = np.bincount(label, weights=v, minlength=n)[1:] / areas[1:]
    return n, comps, areas, boxes, centroids


def _fragment_owners(
    comps: np.ndarray,
    coarse: np.ndarray,
    fragments: np.ndarray,
    count: int,
    n_colours: int,
    tops: np.ndarray,
    reach: float,
    least_top: float,
) -> np.ndarray:
    """For each piece of cube pixels outside the blobs (`fragments`, `count` of them with the
    background), the blob it joins (0: none): the blob nearest to it, if within `reach` px,
    unless the piece is that blob's own side or the foot of a wall (see FRAGMENT_REACH;
    `tops`: top pixels per blob and colour, `least_top`: FRAGMENT_TOP in px)."""
    given = np.zeros(count, np.int32)
    r = int(np.ceil(reach))
    near = cv2.dilate((comps > 0).astype(np.uint8), np.ones((2 * r + 1, 2 * r + 1), np.uint8)) > 0
    ys, xs = nonzero(near & (fragments > 0))
    if len(xs) == 0:
        return given
    # distance from the pixels near a blob to the nearest blob pixel, and which pixel that
    # is, in the window round them
    x0, y0 = max(0, xs.min() - r - 1), max(0, ys.min() - r - 1)
    window = comps[y0 : ys.max() + r + 2, x0 : xs.max() + r + 2]
    dist, nearest = cv2.distanceTransformWithLabels(
        (window == 0).astype(np.uint8), cv2.DIST_L2, 3, labelType=cv2.DIST_LABEL_PIXEL
    )
    owner = np.zeros(int(nearest.max()) + 1, np.int32)
    owner[nearest[window > 0]] = window[window > 0]
    d, piece = dist[ys - y0, xs - x0], fragments[ys, xs]
    order = np.lexsort((d, piece))
    closest = order[
        np.unique(piece[order], return_index=True)[1]
    ]  # each piece's pixel nearest a blob
    blob, piece = owner[nearest[ys[closest] - y0, xs[closest] - x0]], piece[closest]
    # each piece's paint (by its top and side pixels) and its top pixels
    mine = fragments > 0
    owner_of = fragments[mine]
    label = coarse[mine].astype(np.int64)
    paint = np.where(label <= n_colours, label, label - n_colours) * (label <= 2 * n_colours)
    per_paint = np.bincount(owner_of * (n_colours + 1) + paint, minlength=count * (n_colours + 1))
    per_paint = per_paint.reshape(count, -1)[piece]
    area = per_paint.sum(axis=1)  # (paint 0: unknown and dark parts)
    per_paint = per_paint[:, 1:]
    main = per_paint.argmax(axis=1)
    top = np.bincount(owner_of, (label >= 1) & (label <= n_colours), count)[piece]
    own_side = (per_paint.max(axis=1) > 0) & (top < least_top) & (tops[blob, main] >= least_top)
    unknown = np.bincount(owner_of, label == 2 * n_colours + 1, count)[piece]
    wall = (unknown == area) & (_in_band(fragments, count)[piece] > 0)
    join = (d[closest] <= reach) & ~own_side & ~wall
    given[piece[join]] = blob[join]
    return given
