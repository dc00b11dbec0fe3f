"""Touching cubes and piles: how many cubes of each colour a blob holds, and where.

Cubes are counted by their tops: every top is horizontal, so it gets the floor's light
and, after the floor normalisation, keeps the clicked tops' colour anywhere in the tray,
and it has the same size anywhere (the camera is far above compared to a cube), unlike the
silhouette, whose visible sides grow toward the edge of the view. A colour's top area
over one top's area is its count; a colour seen only by its sides (a leaning cube, a
cube whose top is hidden) counts by silhouette area. Each count gets a confidence from
how close the ratio is to a whole number.

Hand-set thresholds on these measures get lone cubes right but not every pile, so the
final word per colour and blob goes to a small random forest (vision.forest) grown on
generated tables by `companion train`: it sees the rules' answer and the measures behind
it (FEATURES) and was taught the true counts. A small net (vision.net), taught the same,
looks at the colour's pixels themselves, and the two decide together.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.forest import Forest, shipped
from vision.net import PATCH, PATCH_CHANNELS, PATCH_EDGES, Net, patch
from vision.segment import Blob, pieces

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
# ... unless an opening half a cube wide keeps this share of a top of its pixels (top and
# sides): a dark side is a strip, a cube of a dim paint beside another cube a solid lump.
DIM_SOLID = 0.4
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
# A blob of no colour whose dark parts alone make it an unknown object is a cube's cast
# shadow (darker than the frame's shadows seemed) when it lies this close to a named cube,
# in cube edges from the cube's centre: a shadow falls next to its cube.
SHADOW_REACH = 1.5


@dataclass(frozen=True)
class Part:
    colour: int | None  # class number 1..K, None for unknown
    centre: tuple[float, float]  # rectified px
    confidence: float


@dataclass(frozen=True)
class Decision:
    """One call the counter made (how many cubes of a colour a blob holds, whether a
    candidate is a cube): how likely it is right, and where it was made."""

    share: float  # the deciding forest's vote share (without one, the rules' confidence)
    centre: tuple[float, float]  # rectified px


def cubes_in_area(area: float, unit: float) -> tuple[int, float]:
    """Number of cubes that explain `area` (at least one), and a confidence 0..1 in that number."""
    ratio = float(area / unit)
    n = max(math.floor(ratio) + (1 if ratio - math.floor(ratio) >= ROUND_UP_FROM else 0), 1)
    confidence = min(max(1.0 - 2.0 * abs(ratio - n) / max(1.0, n**0.5), 0.0), 1.0)
    return n, confidence


def split_blobs(
    blobs: list[Blob],
    comps: np.ndarray,
    coarse: np.ndarray,
    n_colours: int,
    top_area: float,
    units: list[float],
    dim: frozenset = frozenset(),
    forest: Forest | None = None,
    gaps: dict[int, float] | None = None,
    sides: list[tuple[float, float]] | None = None,
    net: Net | None = None,
    light: Callable[[], np.ndarray] | None = None,
) -> tuple[list[Part], list[Decision]]:
    """Cubes in the blobs of one frame, and the decisions behind their counts.
    `top_area`: one cube's top; `units`: one lone cube's silhouette where each blob lies;
    `dim`: colours dark enough to be confused with the shaded sides and shadows of other
    cubes; `gaps`: for paints that pass for the floor in shadow, how much darker than this
    frame's shadows they are (relative to the lit floor); `sides`: where a lone cube's
    silhouette centre lies from its top's where each blob lies (px; none: nowhere). The
    rules below give each colour's count in a blob; a `forest` (grown on generated scenes,
    see FEATURES) then decides each count from those rules' answer and the measures behind
    them, and its vote share is the count's confidence; with a `net` (vision.net) and
    `light` (giving the frame's light relative to the lit floor, asked only when the net
    is), the net's shares and the forest's are averaged where the forest is unsure. The
    decisions are every count the forest decided, a colour it found absent included
    (without a forest: every count of the rules)."""
    pixels = blob_pixels(blobs, comps, coarse, n_colours, top_area)
    counts = rule_counts(blobs, pixels, n_colours, top_area, units, dim)
    if forest is None:
        decisions = [
            Decision(confidence, blob.centre)
            for blob, found in zip(blobs, counts, strict=True)
            for _, confidence in found.values()
        ]
    else:
        decisions = []
        sides = sides or [(0.0, 0.0)] * len(blobs)
        rows, where = feature_rows(
            blobs, pixels, n_colours, top_area, units, dim, counts, gaps or {}, sides
        )
        if rows:

            def patches_of(ask: np.ndarray) -> np.ndarray:
                return blob_patches(
                    blobs,
                    comps,
                    coarse,
                    light(),
                    n_colours,
                    top_area,
                    [where[k] for k in ask],
                    sides,
                )

            found, shares = decide(
                forest, net, np.array(rows), None if light is None else patches_of, COUNT_LEAN
            )
            # Lone cubes in the open are not asked (see PLAIN_BLOB): they are right far
            # more often than any vote share says, so only the forest's answers are doubted.
            decisions = [
                Decision(float(share), blobs[i].centre)
                for (i, _), share in zip(where, shares, strict=True)
            ]
            for (i, c), n, share in zip(where, found, shares, strict=True):
                if n > 0:
                    counts[i][c] = (int(n), float(share))
                else:
                    counts[i].pop(c, None)
    parts = [
        _parts(blob, px, n_colours, unit, cnt)
        for blob, px, unit, cnt in zip(blobs, pixels, units, counts, strict=True)
    ]
    named = np.array([p.centre for ps in parts for p in ps if p.colour is not None]).reshape(-1, 2)
    reach = SHADOW_REACH * top_area**0.5
    # a blob that is unknown only for its dark parts, beside a named cube, is its shadow
    return [
        p
        for blob, unit, cnt, ps in zip(blobs, units, counts, parts, strict=True)
        if cnt
        or blob.class_pixels[2 * n_colours + 1] >= MIN_UNKNOWN_FRACTION * unit
        or not _within(blob.box, named, reach)
        for p in ps
    ], decisions


def decide(
    forest: Forest,
    net: Net | None,
    rows: np.ndarray,
    patches_of: Callable[[np.ndarray], np.ndarray] | None = None,
    lean: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The class of each row (a count; for the dark judge, cube or not) and its share: the
    forest's vote shares, averaged with the net's class shares of the rows' patches
    (`patches_of(indices)`) where the forest's share is below NET_BELOW. With a `lean`,
    each class's share counts 1 + lean times more than the class below it in choosing."""
    # both give shares of the classes 0, 1, ... (the forest of those its rows held)
    width = max(int(forest.classes.max()) + 1, net.classes if net is not None else 0)
    shares = np.zeros((len(rows), width))
    shares[:, forest.classes] = forest.proba(rows)
    ask = np.flatnonzero(shares.max(axis=1) < NET_BELOW)
    if net is not None and patches_of is not None and len(ask):
        shares[ask, : net.classes] += net.proba(patches_of(ask), rows[ask])
        shares[ask] /= 2
    best = (shares * (1 + lean) ** np.arange(width)).argmax(axis=1)
    return best, shares[np.arange(len(rows)), best]


def blob_patches(
    blobs: list[Blob],
    comps: np.ndarray,
    coarse: np.ndarray,
    level: np.ndarray,
    n_colours: int,
    top_area: float,
    where: list[tuple[int, int]],
    sides: list[tuple[float, float]],
) -> np.ndarray:
    """The net's patch (vision.net.patch) of each (blob index, colour) in `where`."""
    size = math.sqrt(top_area)
    # a window round the blob that holds every patch turned any way round its pixels
    m = int(math.ceil(PATCH_EDGES * size / math.sqrt(2))) + 2
    h, w = comps.shape
    out = []
    for i, c in where:
        x, y, bw, bh = blobs[i].box
        cut = np.s_[max(0, y - m) : min(h, y + bh + m), max(0, x - m) : min(w, x + bw + m)]
        out.append(
            patch(
                level[cut], coarse[cut], comps[cut] == blobs[i].index, c, n_colours, sides[i], size
            )
        )
    return np.array(out, np.uint8).reshape(len(out), PATCH, PATCH, len(PATCH_CHANNELS))


def _within(box: tuple[int, int, int, int], points: np.ndarray, reach: float) -> bool:
    """Whether any point lies within `reach` px of a box (x, y, w, h)."""
    x, y, w, h = box
    dx = np.maximum(np.maximum(x - points[:, 0], points[:, 0] - (x + w - 1)), 0)
    dy = np.maximum(np.maximum(y - points[:, 1], points[:, 1] - (y + h - 1)), 0)
    return bool(np.any(dx * dx + dy * dy <= reach * reach))


class ColourPixels:
    """One colour's pixels in a blob, as uint8 masks over the blob's box: its tops (`top`)
    and its tops and other faces (`faces`), with their measures (in tops and cube edges),
    each taken once: the rules and the forest's features look at the same ones."""

    def __init__(self, top: np.ndarray, faces: np.ndarray, top_area: float):
        self.top, self.faces, self.top_area = top, faces, top_area

    @functools.cached_property
    def solid_top_fifth(self) -> float:
        return _solid(self.top, self.top_area, 0.2)

    @functools.cached_property
    def solid_top_half(self) -> float:
        return _solid(self.top, self.top_area, 0.5)

    @functools.cached_property
    def solid_half(self) -> float:
        return _solid(self.faces, self.top_area, 0.5)

    @functools.cached_property
    def top_pieces(self) -> tuple[int, int]:
        return _top_pieces(self.top, self.top_area)

    @functools.cached_property
    def length(self) -> float:
        return _length(self.faces, self.top_area)

    @functools.cached_property
    def top_length(self) -> float:
        return _length(self.top, self.top_area)

    @functools.cached_property
    def pieces(self) -> np.ndarray:
        """Areas of the separate pieces of its faces, largest first (in tops)."""
        return np.sort(_piece_areas(self.faces))[::-1] / self.top_area


class BlobPixels:
    """One blob's pixels and coarse labels over its box, and its colours' ColourPixels."""

    def __init__(
        self, blob: Blob, comps: np.ndarray, coarse: np.ndarray, n_colours: int, top_area: float
    ):
        x, y, w, h = blob.box
        self.inside = comps[y : y + h, x : x + w] == blob.index
        self.window = coarse[y : y + h, x : x + w]
        self.n_colours, self.top_area = n_colours, top_area
        self._colours: dict[int, ColourPixels] = {}

    def colour(self, c: int) -> ColourPixels:
        if c not in self._colours:
            top = self.inside & (self.window == c)
            faces = top | self.inside & (self.window == self.n_colours + c)
            self._colours[c] = ColourPixels(top.view(np.uint8), faces.view(np.uint8), self.top_area)
        return self._colours[c]

    @functools.cached_property
    def shape(self) -> tuple[float, float]:
        """The blob's length and width in cube edges."""
        return tuple(side / self.top_area**0.5 for side in _rect_sides(self.inside))


def blob_pixels(
    blobs: list[Blob], comps: np.ndarray, coarse: np.ndarray, n_colours: int, top_area: float
) -> list[BlobPixels]:
    """The BlobPixels of each blob (`comps`: the component image, `coarse` the labels)."""
    return [BlobPixels(b, comps, coarse, n_colours, top_area) for b in blobs]


def rule_counts(
    blobs: list[Blob],
    pixels: list[BlobPixels],
    n_colours: int,
    top_area: float,
    units: list[float],
    dim: frozenset,
) -> list[dict[int, tuple[int, float]]]:
    """Per blob, cubes per colour (count, confidence) by the rules alone."""
    return [
        _rule_counts(b, px, n_colours, top_area, u, dim)
        for b, px, u in zip(blobs, pixels, units, strict=True)
    ]


def feature_rows(
    blobs: list[Blob],
    pixels: list[BlobPixels],
    n_colours: int,
    top_area: float,
    units: list[float],
    dim: frozenset,
    counts: list[dict[int, tuple[int, float]]],
    gaps: dict[int, float],
    sides: list[tuple[float, float]],
) -> tuple[list[list[float]], list[tuple[int, int]]]:
    """The FEATURES of every colour that shows in a blob, and (blob index, colour) of each
    row (`counts`: the rules' counts; `gaps`, `sides`: see split_blobs)."""
    rows, where = [], []
    for i, (blob, px, unit) in enumerate(zip(blobs, pixels, units, strict=True)):
        if _one_plain_cube(blob, n_colours, top_area, unit, counts[i]):
            continue
        for c in range(1, n_colours + 1):
            row = colour_features(
                blob,
                px,
                n_colours,
                top_area,
                unit,
                dim,
                c,
                counts[i],
                gaps.get(c, NO_GAP),
                sides[i],
            )
            if row is not None:
                rows.append(row)
                where.append((i, c))
    return rows, where


# A blob of at most this many lone-cube silhouettes, where the rules see one cube whose top
# shows within these shares of a top and other colours' tops of less than this share of a
# top in all, holds that one cube: on generated tables the true count differs in about 1
# in 700 such blobs, and they are most blobs, so the forest is not asked about them...
PLAIN_BLOB = 1.5
PLAIN_TOP = (0.6, 1.4)
PLAIN_OTHERS = 0.1
# ... unless the rules' confidence in that one cube is below this: a pile of two cubes of
# one paint, the upper turned on the lower, shows one top and a corner of the other, and
# a silhouette of 1.3 or more (held-out tables 981 -> 984 exact of 1024, check 983 -> 984).
PLAIN_SURE = 0.5


def _one_plain_cube(
    blob: Blob,
    n_colours: int,
    top_area: float,
    cube_area: float,
    counts: dict[int, tuple[int, float]],
) -> bool:
    if len(counts) != 1 or blob.area > PLAIN_BLOB * cube_area:
        return False
    ((c, (n, sure)),) = counts.items()
    tops = blob.class_pixels[1 : n_colours + 1] / top_area
    return (
        n == 1
        and sure >= PLAIN_SURE
        and PLAIN_TOP[0] <= tops[c - 1] <= PLAIN_TOP[1]
        and tops.sum() - tops[c - 1] < PLAIN_OTHERS
    )


# What the forest sees of one colour in a blob, in this order: its top and side pixels
# (in tops) and its silhouette (in lone-cube silhouettes); what openings a fifth and half a
# cube wide keep of its top, and half a cube of top and sides (in tops); its separate top
# pieces, counted by area alone and by area and length; the length (in cube edges) of its
# silhouette and of its top; the rules' count; the other colours' tops, all and largest
# (in tops); the blob, its dark cube parts and its unknown pixels (in silhouettes);
# whether the colour is dim; how many colours show a tenth of a top; the rules' count of
# the other colours; the pieces of its silhouette of a fifth of a top or more, and the
# largest two (in tops); the blob's length and width (in cube edges); how much darker
# than this frame's shadows the paint is (NO_GAP for a paint unlike the floor: on a tray
# where black passes for the floor in shadow, black pixels beside cubes are often shadow);
# how much of its top is left outside the best one and two top-sized squares, and of its
# silhouette outside squares of a lone cube's silhouette (in tops): two cubes under a pile
# show one L round it, which no single square covers; how far a lone cube's sides reach
# there (in cube edges), and where the top that one square leaves lies from it, along the
# way the sides show and across (in cube edges): a cube's own side lit like a top lies
# that way, the top of a cube under a pile on any side.
FEATURES = (
    "top",
    "side",
    "silhouette",
    "solid_top_fifth",
    "solid_top_half",
    "solid_half",
    "top_pieces",
    "top_pieces_long",
    "length",
    "top_length",
    "rules",
    "other_tops",
    "largest_other_top",
    "blob",
    "dark_part",
    "unknown",
    "dim",
    "colours",
    "other_rules",
    "pieces",
    "largest_piece",
    "second_piece",
    "blob_length",
    "blob_width",
    "shadow_gap",
    "top_left_one",
    "top_left_two",
    "faces_left_one",
    "faces_left_two",
    "side_reach",
    "top_left_along",
    "top_left_across",
)
NO_GAP = 1.0
# A colour with less than this share of a top in a blob (top and sides) is not asked about.
MIN_FEATURE_PIXELS = 0.05
# The net is asked about the rows where the forest's vote share is below this (about two
# rows a frame, at about 0.16 ms a row). Where all the forest's trees agree, asking it
# changes nothing; below 0.98 it does: on the tuning tables (seeds 300000-300047), before
# COUNT_LEAN, 729 scenes are exact at 0.98 and at 0.999, 727 at 0.95 and at 0.9.
NET_BELOW = 0.98
# A count whose share comes close to the next lower count's is taken: of the counts the
# forest and the net get wrong, most are one short (the lower cube of a pile shows a
# strip, and rows of those are rare among the rows they learnt from). In choosing, each
# count's share is weighed 1 + COUNT_LEAN times the next lower count's. On the tuning
# tables 729 scenes are exact without it, 729, 730, 731, 729 at 0.08, 0.15, 0.22, 0.3.
COUNT_LEAN = 0.22
# The forest and the net the counter ships with, grown by `companion train`
# (companion.training, companion.net_training).
COUNT_FOREST = Path(__file__).with_name("models") / "counts.npz"
COUNT_NET = Path(__file__).with_name("models") / "net.npz"


@functools.cache
def count_forest() -> Forest:
    """The shipped forest, read once."""
    return shipped(COUNT_FOREST, FEATURES, "counts")


@functools.cache
def count_net() -> Net:
    """The shipped net, read once."""
    return shipped(COUNT_NET, FEATURES, "net", Net.load)


def colour_features(
    blob: Blob,
    pixels: BlobPixels,
    n_colours: int,
    top_area: float,
    cube_area: float,
    dim: frozenset,
    colour: int,
    rules: dict[int, tuple[int, float]],
    gap: float,
    sides: tuple[float, float],
) -> list[float] | None:
    """The FEATURES of `colour` in `blob` (`rules`: the blob's counts by the rules; `gap`:
    the paint's shadow gap; `sides`: where a lone cube's silhouette centre lies from its
    top's there, px), None where it shows (almost) nothing."""
    k, c = n_colours, colour
    px = blob.class_pixels.astype(float)
    tops = px[1 : k + 1] / top_area
    top, side = tops[c - 1], px[k + c] / top_area
    if top + side < MIN_FEATURE_PIXELS:
        return None
    other = np.delete(tops, c - 1)
    mine = rules.get(c, (0, 0.0))[0]
    m = pixels.colour(c)
    pieces = m.pieces
    size = top_area**0.5
    top_left = _left_after_squares(m.top, size, top_area)
    # where a lone cube here shows its sides, and where the top one square leaves lies
    # along and across that way: a cube's own lit side lies that way, the top of a cube
    # under it anywhere
    offset = math.hypot(*sides)
    ux, uy = (sides[0] / offset, sides[1] / offset) if offset > 0 else (0.0, 0.0)
    along, across = top_left[2] * ux + top_left[3] * uy, abs(top_left[3] * ux - top_left[2] * uy)
    return [
        top,
        side,
        (px[c] + px[k + c]) / cube_area,
        m.solid_top_fifth,
        m.solid_top_half,
        m.solid_half,
        *m.top_pieces,
        m.length,
        m.top_length,
        mine,
        other.sum(),
        other.max(initial=0.0),
        blob.area / cube_area,
        px[2 * k + 2] / cube_area,
        px[2 * k + 1] / cube_area,
        float(c in dim),
        float((tops >= 0.1).sum()),
        sum(n for colour, (n, _) in rules.items() if colour != c),
        float((pieces >= 0.2).sum()),
        pieces[0] if len(pieces) else 0.0,
        pieces[1] if len(pieces) > 1 else 0.0,
        *pixels.shape,
        gap,
        *top_left[:2],
        *_left_after_squares(m.faces, cube_area**0.5, top_area)[:2],
        offset / size,
        along,
        across,
    ]


def _rule_counts(
    blob: Blob,
    pixels: BlobPixels,
    n_colours: int,
    top_area: float,
    cube_area: float,
    dim: frozenset,
) -> dict[int, tuple[int, float]]:
    """Cubes per colour (count, confidence) in one blob by the rules above."""
    k = n_colours
    px = blob.class_pixels.astype(float)
    tops = px[1 : k + 1] / top_area
    counts: dict[int, tuple[int, float]] = {}
    corners = []
    for c in range(1, k + 1):
        top = tops[c - 1]
        silhouette = (px[c] + px[k + c]) / cube_area
        # A cube shows at least its top or its silhouette in full; piles hide part of both.
        size = max(top, silhouette)
        if size < MIN_FRACTION:
            if top >= MIN_HIDDEN_CORE and c not in dim:
                corners.append(c)
            continue
        beside = np.delete(tops, c - 1).max(initial=0.0)
        if (
            c in dim
            and top < MIN_TOP_BESIDE
            and silhouette < 0.7
            and beside >= 0.6
            and pixels.colour(c).solid_half < DIM_SOLID
        ):
            continue
        n, confidence = cubes_in_area(size, 1.0)
        if top >= 2 * MIN_TOP_PIECE:
            # Separate tops of one colour are separate cubes (a cube resting on two
            # others of its colour splits their visible tops apart).
            pieces = pixels.colour(c).top_pieces[c not in dim]
            if pieces > n:
                n, confidence = pieces, min(confidence, 0.7)
        # (a region is no longer than the diagonal of the blob's box: most blobs are too short)
        if (
            n == 1
            and c not in dim
            and np.hypot(*blob.box[2:]) + 1 >= LONG_SILHOUETTE * top_area**0.5
            and pixels.colour(c).length >= LONG_SILHOUETTE
        ):
            n, confidence = 2, min(confidence, 0.6)
        counts[c] = (n, confidence)
    if counts:
        for c in corners:
            if pixels.colour(c).solid_top_fifth >= MIN_HIDDEN_CORE:
                counts[c] = (1, 0.5)
    return counts


def _parts(
    blob: Blob,
    pixels: BlobPixels,
    n_colours: int,
    cube_area: float,
    counts: dict[int, tuple[int, float]],
) -> list[Part]:
    """The cubes of each colour placed in the blob, and its unknown pixels as unknown cubes."""
    k = n_colours
    unknown, dark_part = 2 * k + 1, 2 * k + 2
    found: dict[int | None, tuple[int, float]] = dict(counts)
    px = blob.class_pixels
    rest = px[unknown] + (0 if found else px[dark_part])
    # Beside named cubes, unknown pixels are mostly their edges in half shadow: only a
    # whole cube's worth is an unknown object there.
    if rest >= (MIN_UNKNOWN_BESIDE if found else MIN_UNKNOWN_FRACTION) * cube_area:
        found[None] = cubes_in_area(rest, cube_area)
    x, y = blob.box[:2]
    inside, window = pixels.inside, pixels.window
    parts: list[Part] = []
    for cls, (n, confidence) in found.items():
        # (a colour's faces are the mask its measures were taken on)
        ys, xs = np.nonzero(
            inside & (window == unknown) if cls is None else pixels.colour(cls).faces
        )
        if len(xs) == 0:
            ys, xs = np.nonzero(inside)
        points = np.column_stack([xs + x, ys + y]).astype(np.float32)
        parts += [Part(cls, centre, confidence) for centre in _centres(points, n)]
    return parts


def _piece_areas(mask: np.ndarray) -> np.ndarray:
    """Areas (px) of the separate pieces of a mask."""
    return pieces(mask)[1][1:].astype(float)


def _top_pieces(mask: np.ndarray, top_area: float) -> tuple[int, int]:
    """Cubes counted top by top: each separate top region of the colour in the blob, by its
    area alone, and by its area and, for a piece of about one top, its length (not for dim
    colours, whose tops merge with dark edges and shadows into long strips). `mask`: the
    colour's top pixels."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    areas = stats[1:, cv2.CC_STAT_AREA] / top_area
    size = top_area**0.5
    by_area = by_length = 0
    for i, a in enumerate(areas, 1):
        if a < MIN_TOP_PIECE:
            continue
        m = cubes_in_area(a, 1.0)[0]
        by_area += m
        # (a piece is no longer than the diagonal of its box)
        if (
            m == 1
            and np.hypot(*stats[i, 2:4]) + 1 >= LONG_PIECE * size
            and _rect_sides(labels == i)[0] >= LONG_PIECE * size
        ):
            m = 2
        by_length += m
    return by_area, by_length


# Squares are tried at these angles (degrees; a square repeats every 90), on masks shrunk
# this many times (the measure is coarse, and it is taken for every colour the forest sees).
SQUARE_ANGLES = (0, 30, 60)
SQUARE_SHRINK = 2
# Less than this (in tops) left outside a square is nothing left to place a second one on.
NOTHING_LEFT = 0.05


# filter2D turns to the DFT for kernels of this many cells or more: slower on masks this
# small, and inexact, so that equal squares would be told apart by rounding noise.
DFT_CELLS = 130


@dataclass(frozen=True)
class _Square:
    """A filled square in an odd-sized box (`kernel`), and the pieces whose filter2D
    responses add up to the kernel's, each (piece, anchor) small enough to be summed
    directly: the square's own box, split at its middle row where it is too large."""

    kernel: np.ndarray
    pieces: tuple[tuple[np.ndarray, tuple[int, int]], ...]
    upright: tuple[int, int]  # height and width of the box it fills whole ((0, 0): none, turned)

    def sums(self, image: np.ndarray) -> np.ndarray:
        """The sum of `image` under the square centred on each pixel (zero outside)."""
        out = None
        for piece, anchor in self.pieces:
            r = cv2.filter2D(image, -1, piece, anchor=anchor, borderType=cv2.BORDER_CONSTANT)
            out = r if out is None else cv2.add(out, r)
        return out


@functools.cache
def _squares(side: int) -> tuple[_Square, ...]:
    """Filled squares of `side` px at SQUARE_ANGLES, each in the same odd-sized box."""
    k = int(math.ceil(side * 1.42)) | 1
    c = k // 2
    out = []
    for a in SQUARE_ANGLES:
        box = cv2.boxPoints(((k / 2 - 0.5, k / 2 - 0.5), (side, side), a))
        kernel = np.zeros((k, k), np.float32)
        cv2.fillConvexPoly(kernel, np.round(box).astype(np.int32), 1.0)
        ys, xs = np.nonzero(kernel)
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
        if (y1 - y0) * (x1 - x0) < DFT_CELLS:
            pieces = ((kernel[y0:y1, x0:x1], (c - x0, c - y0)),)
        else:
            # (an anchor lies inside its piece: the lower half keeps the middle row, emptied)
            lower = kernel[c:y1, x0:x1].copy()
            lower[0] = 0
            pieces = ((kernel[y0 : c + 1, x0:x1], (c - x0, c - y0)), (lower, (c - x0, 0)))
        whole = kernel[y0:y1, x0:x1].all()
        out.append(_Square(kernel, pieces, (y1 - y0, x1 - x0) if whole else (0, 0)))
    return tuple(out)


def _left_after_squares(
    mask: np.ndarray, side: float, top_area: float
) -> tuple[float, float, float, float]:
    """How much of a mask (in tops) lies outside the one, and the two, squares of `side` px
    placed one after the other to cover most of it: what one cube cannot explain; and
    where what the first square leaves lies from its middle (x, y in `side`s)."""
    if not mask.any():
        return 0.0, 0.0, 0.0, 0.0
    squares = _squares(max(3, int(round(side / SQUARE_SHRINK))))
    r = squares[0].kernel.shape[0] // 2
    h, w = mask.shape
    small = cv2.resize(
        mask.astype(np.float32),
        (max(1, w // SQUARE_SHRINK), max(1, h // SQUARE_SHRINK)),
        interpolation=cv2.INTER_AREA,
    )
    # (a mask an upright square covers whole leaves nothing, wherever that square lies)
    _, _, bw, bh = cv2.boundingRect((small > 0).view(np.uint8))
    if any(bh <= sh and bw <= sw for sh, sw in (square.upright for square in squares)):
        return 0.0, 0.0, 0.0, 0.0
    # (the best square's middle lies within r of a pixel: a margin of 2r keeps it whole,
    # and the squares are summed only where their middles may lie)
    left = cv2.copyMakeBorder(small, 2 * r, 2 * r, 2 * r, 2 * r, cv2.BORDER_CONSTANT, value=0)
    middles = left[r:-r, r:-r]
    # (shrunk pixel sums back to pixels, then to tops)
    scale = np.count_nonzero(mask) / float(small.sum()) / top_area
    out: list[float] = []
    away = (0.0, 0.0)
    for _ in range(2):
        if out and out[-1] < NOTHING_LEFT:
            break
        best, where, which = -1.0, (0, 0), squares[0].kernel
        for square in squares:
            _, peak, _, at = cv2.minMaxLoc(square.sums(middles))
            if peak > best:
                best, where, which = peak, at, square.kernel
        x, y = where[0] + r, where[1] + r
        left[y - r : y + r + 1, x - r : x + r + 1] *= 1 - which
        out.append(float(left.sum()) * scale)
        if len(out) == 1 and out[0] >= NOTHING_LEFT:
            m = cv2.moments(left)
            away = (
                (m["m10"] / m["m00"] - x) * SQUARE_SHRINK / side,
                (m["m01"] / m["m00"] - y) * SQUARE_SHRINK / side,
            )
    return out[0], out[-1], *away


def _solid(mask: np.ndarray, top_area: float, width: float) -> float:
    """Share of a top that an opening `width` cube edges wide keeps of a mask."""
    k = max(3, int(round(width * top_area**0.5)) | 1)
    return (
        float(np.count_nonzero(cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((k, k), np.uint8))))
        / top_area
    )


def _length(mask: np.ndarray, top_area: float) -> float:
    """Length in cube edges of the largest solid region of a mask (the long side of its
    smallest enclosing rectangle), fringes a pixel wide removed."""
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    regions, areas = pieces(mask)
    if len(areas) < 2:
        return 0.0
    return _rect_sides(regions == 1 + int(areas[1:].argmax()))[0] / top_area**0.5


def _rect_sides(mask: np.ndarray) -> tuple[float, float]:
    """Long and short side (px, counting whole pixels) of the smallest rectangle, at any
    angle, round a mask's pixels."""
    (_, _), (a, b), _ = cv2.minAreaRect(cv2.findNonZero(mask.view(np.uint8)))
    return max(a, b) + 1, min(a, b) + 1


def _centres(points: np.ndarray, n: int) -> list[tuple[float, float]]:
    if n == 1 or len(points) < 2 * n:
        c = points.mean(axis=0)
        return [(float(c[0]), float(c[1]))] * n
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 0.5)
    cv2.setRNGSeed(0)
    _, _, centres = cv2.kmeans(points, n, None, criteria, 1, cv2.KMEANS_PP_CENTERS)
    return [(float(cx), float(cy)) for cx, cy in centres]
