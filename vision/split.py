"""Touching cubes and piles: how many cubes of each colour a blob holds, and where.

Cubes are counted by their tops: every top is horizontal, so it gets the floor's light
and, after the floor normalisation, keeps the clicked tops' colour anywhere in the tray,
and it has the same size anywhere (the camera is far above compared to a cube), unlike the
silhouette, whose visible sides grow toward the edge of the view. A colour's top area
over one top's area is its count; a colour seen only by its sides (a leaning cube, a
cube whose top is hidden) counts by silhouette area. Each count gets a confidence from
how close the ratio is to a whole number.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.segment import Blob

# Round n + this fraction up: the lower cubes of a pile show only part of their top.
ROUND_UP_FROM = 0.4
# A colour needs this much of a cube (by top or by silhouette) to count at all.
MIN_FRACTION = 0.35
# In a blob with other cubes, a colour showing less than MIN_FRACTION still counts when
# its top holds a solid piece (left by an opening a fifth of a cube wide) of at least this
# share of a top: a cube under a pile that shows only a corner of its top. Stray pixels of
# a colour (a neighbour's edge misnamed) form thin strips, not solid pieces.
MIN_HIDDEN_CORE = 0.1
# Next to another colour's top, a colour showing less top than this is that cube's dark
# side or its shadow, not a cube of its own.
MIN_TOP_BESIDE = 0.35
# A separate piece of top counts as a cube of its own from this share of a top.
MIN_TOP_PIECE = 0.3
# A piece of top no larger than one top but at least this many cube edges long is two
# cubes: one top square is at most about an edge and a bit long along its best
# rectangle, while a pile's top merges with the uncovered strip of a same-coloured cube
# below it, and two same-coloured cubes under a pile show one long L around it.
LONG_PIECE = 1.6
# A colour's silhouette (tops and sides, without fringes a pixel wide) this many edges long
# holds two cubes even where its area says one: the lower cubes of a pile, shaded by the
# cube on them, show their tops as dark as sides.
LONG_SILHOUETTE = 2.0
# Unknown pixels need this much of a cube's silhouette to be reported as an unknown blob,
# and this much when they touch cubes of known colours.
MIN_UNKNOWN_FRACTION = 0.45
MIN_UNKNOWN_BESIDE = 0.85


@dataclass(frozen=True)
class Part:
    colour: int | None         # class number 1..K, None for unknown
    centre: tuple[float, float]  # rectified px
    confidence: float


def cubes_in_area(area: float, unit: float) -> tuple[int, float]:
    """Number of cubes that explain `area` (at least one), and a confidence 0..1 in that number."""
    ratio = area / unit
    n = max(int(np.floor(ratio)) + (1 if ratio - np.floor(ratio) >= ROUND_UP_FROM else 0), 1)
    confidence = float(np.clip(1.0 - 2.0 * abs(ratio - n) / max(1.0, n ** 0.5), 0.0, 1.0))
    return n, confidence


def split_blob(blob: Blob, comps: np.ndarray, coarse: np.ndarray, n_colours: int,
               top_area: float, cube_area: float, dim: frozenset = frozenset()) -> list[Part]:
    """Cubes in one blob. `top_area`: one cube's top; `cube_area`: one lone cube's
    silhouette where this blob lies; `dim`: colours dark enough to be confused with the
    shaded sides and shadows of other cubes."""
    k = n_colours
    unknown, dark_part = 2 * k + 1, 2 * k + 2
    pixels = blob.class_pixels.astype(float)
    tops = pixels[1:k + 1] / top_area
    counts: dict[int | None, tuple[int, float]] = {}
    corners = []
    for c in range(1, k + 1):
        top = tops[c - 1]
        silhouette = (pixels[c] + pixels[k + c]) / cube_area
        # A cube shows at least its top or its silhouette in full; piles hide part of both.
        size = max(top, silhouette)
        if size < MIN_FRACTION:
            if top >= MIN_HIDDEN_CORE and c not in dim:
                corners.append(c)
            continue
        beside = np.delete(tops, c - 1).max(initial=0.0)
        if c in dim and top < MIN_TOP_BESIDE and silhouette < 0.7 and beside >= 0.6:
            continue
        n, confidence = cubes_in_area(size, 1.0)
        if top >= 2 * MIN_TOP_PIECE:
            # Separate tops of one colour are separate cubes (a cube resting on two
            # others of its colour splits their visible tops apart).
            pieces = _top_pieces(comps, coarse, blob, c, top_area, by_length=c not in dim)
            if pieces > n:
                n, confidence = pieces, min(confidence, 0.7)
        if n == 1 and c not in dim and _length(comps, coarse, blob, (c, k + c), top_area) >= LONG_SILHOUETTE:
            n, confidence = 2, min(confidence, 0.6)
        counts[c] = (n, confidence)
    if counts:
        for c in corners:
            if _solid_top(comps, coarse, blob, c, top_area) >= MIN_HIDDEN_CORE:
                counts[c] = (1, 0.5)
    rest = pixels[unknown] + (0 if counts else pixels[dark_part])
    # Beside named cubes, unknown pixels are mostly their edges in half shadow: only a
    # whole cube's worth is an unknown object there.
    if rest >= (MIN_UNKNOWN_BESIDE if counts else MIN_UNKNOWN_FRACTION) * cube_area:
        counts[None] = cubes_in_area(rest, cube_area)
    x, y, w, h = blob.box
    inside = comps[y:y + h, x:x + w] == blob.index
    window = coarse[y:y + h, x:x + w]
    parts: list[Part] = []
    for cls, (n, confidence) in counts.items():
        want = window == unknown if cls is None else (window == cls) | (window == k + cls)
        ys, xs = np.nonzero(inside & want)
        if len(xs) == 0:
            ys, xs = np.nonzero(inside)
        points = np.column_stack([xs + x, ys + y]).astype(np.float32)
        parts += [Part(cls, centre, confidence) for centre in _centres(points, n)]
    return parts


def _blob_mask(comps: np.ndarray, coarse: np.ndarray, blob: Blob, classes: tuple[int, ...]) -> np.ndarray:
    """uint8 mask, over the blob's box, of its pixels of these coarse classes."""
    x, y, w, h = blob.box
    return ((comps[y:y + h, x:x + w] == blob.index) & np.isin(coarse[y:y + h, x:x + w], classes)).astype(np.uint8)


def _top_pieces(comps: np.ndarray, coarse: np.ndarray, blob: Blob, colour: int, top_area: float,
                by_length: bool = True) -> int:
    """Cubes counted top by top: each separate top region of the colour in the blob, by its
    area and, for a piece of about one top, by its length (not for dim colours, whose tops
    merge with dark edges and shadows into long strips)."""
    mask = _blob_mask(comps, coarse, blob, (colour,))
    n, pieces, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    areas = stats[1:, cv2.CC_STAT_AREA] / top_area
    size = top_area ** 0.5
    total = 0
    for i, a in enumerate(areas, 1):
        if a < MIN_TOP_PIECE:
            continue
        m = cubes_in_area(a, 1.0)[0]
        if m == 1 and by_length:
            ys, xs = np.nonzero(pieces == i)
            (_, _), (w, h), _ = cv2.minAreaRect(np.column_stack([xs, ys]).astype(np.float32))
            if max(w, h) + 1 >= LONG_PIECE * size:
                m = 2
        total += m
    return total


def _solid_top(comps: np.ndarray, coarse: np.ndarray, blob: Blob, colour: int, top_area: float) -> float:
    """Share of a top in the colour's top pixels that an opening a fifth of a cube wide keeps."""
    mask = _blob_mask(comps, coarse, blob, (colour,))
    k = max(3, int(round(top_area ** 0.5 / 5)) | 1)
    return float(np.count_nonzero(cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((k, k), np.uint8)))) / top_area


def _length(comps: np.ndarray, coarse: np.ndarray, blob: Blob, classes: tuple[int, ...], top_area: float) -> float:
    """Length in cube edges of the largest solid region of these classes in the blob (the
    long side of its smallest enclosing rectangle), fringes a pixel wide removed."""
    mask = cv2.morphologyEx(_blob_mask(comps, coarse, blob, classes), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, regions, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    if n < 2:
        return 0.0
    ys, xs = np.nonzero(regions == 1 + int(stats[1:, cv2.CC_STAT_AREA].argmax()))
    (_, _), (rw, rh), _ = cv2.minAreaRect(np.column_stack([xs, ys]).astype(np.float32))
    return (max(rw, rh) + 1) / top_area ** 0.5


def _centres(points: np.ndarray, n: int) -> list[tuple[float, float]]:
    if n == 1 or len(points) < 2 * n:
        c = points.mean(axis=0)
        return [(float(c[0]), float(c[1]))] * n
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 0.5)
    cv2.setRNGSeed(0)
    _, _, centres = cv2.kmeans(points, n, None, criteria, 1, cv2.KMEANS_PP_CENTERS)
    return [(float(cx), float(cy)) for cx, cy in centres]
