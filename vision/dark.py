"""Cubes of a paint that passes for the floor in shadow (black on a grey tray), judged.

On such a tray the counter has three kinds of candidates for a cube of that paint: cubes
found in the blobs of its pixels (vision.split), solid dark patches away from other cubes
(lone cubes), and squares with a sharp outline all round (vision.tops). Each alone is
wrong too often: a cast shadow beside a cube is as dark as the paint, the paint's top as
light as the floor in shadow, and a top's colour tells it from a shadow by a hair. So a
small forest (vision.forest), grown by `companion train --model dark` on generated trays
whose every cube is known, looks at each candidate's measures together (DARK_FEATURES)
and keeps those it finds to be a cube. Where it is unsure, a small net (vision.net, grown
by `companion train --model darknet`) that looks at the candidate itself, in a patch of
DARK_CHANNELS, decides with it (vision.split.decide): a top's rim of sharp edges and its
shade against the floor round it are easier to see there than to measure.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.forest import Forest, shipped
from vision.net import LIGHT_SPAN, PATCH, PATCH_EDGES, Net
from vision.split import Part

# Without a judge, outlines count from this score on (in the clicked tops' edge strength).
TOP_OUTLINE = 0.8
# Where each candidate came from.
PIXELS, LONE, OUTLINE = 0, 1, 2
# What the forest sees of a candidate, in this order: its source and its confidence there;
# the outline score (in the clicked tops' edge strength) at it; the light (relative to the
# lit floor) in its middle, the darkest and lightest within a cube and a half, the middle
# above the paint's top and below this frame's shadows; its middle colour's distance to
# the paint, the floor (lit or shaded) and the nearest other paint, and paint minus floor;
# the shares of floor, the paint's tops, its sides, unknown and other colours within half
# a cube edge and within a cube edge and a quarter; the nearest other named cube and the
# number of other candidates within a cube and a half (in cube edges); the paint's shadow
# gap (vision.split); the frame's edge noise over the clicked tops' edge strength; the
# distance to the tray's edge (cube edges); the sharp edges inside the middle; the darkest
# tenth and the spread of the light within a cube and a half.
DARK_FEATURES = (
    "source",
    "confidence",
    "outline",
    "level",
    "darkest",
    "lightest",
    "above_paint",
    "below_shadow",
    "paint_distance",
    "floor_distance",
    "other_distance",
    "paint_minus_floor",
    "near_floor",
    "near_top",
    "near_side",
    "near_unknown",
    "near_other",
    "around_floor",
    "around_top",
    "around_side",
    "around_unknown",
    "around_other",
    "nearest_cube",
    "neighbours",
    "shadow_gap",
    "noise",
    "edge",
    "inner_edges",
    "darkest_tenth",
    "spread",
)
# Candidates farther than this (cube edges) from everything count as this far.
FAR = 5.0
# Half sides (cube edges) of the middle, of the near and of the around windows.
MIDDLE, NEAR, AROUND = 0.3, 0.5, 1.25
# The light is read within this (cube edges) of the candidate.
REACH = 0.8
# Other candidates within this (cube edges) are its neighbours.
NEIGHBOURS = 1.5
# A kept candidate of the paint's pixels within this (cube edges) of a kept top is that top.
SAME_CUBE = 0.8
# The net's patch (PATCH px square over PATCH_EDGES cube edges, centred on the candidate)
# has these channels, in this order: the paint's pixels (tops, sides, dark cube parts),
# floor or shadow, other colours and unknown (the tray's outside too), each the share of
# the px; the light relative to the lit floor over LIGHT_SPAN (as the count net's), and
# the sharp edges (in the clicked tops' edge strength) over EDGE_SPAN.
DARK_CHANNELS = ("paint", "floor", "others", "light", "edges")
EDGE_SPAN = 2.0
# The forest and the net the counter ships with (companion.training).
DARK_FOREST = Path(__file__).with_name("models") / "dark.npz"
DARK_NET = Path(__file__).with_name("models") / "darknet.npz"


@functools.cache
def dark_forest() -> Forest:
    """The shipped judge, read once."""
    return shipped(DARK_FOREST, DARK_FEATURES, "dark")


@functools.cache
def dark_net() -> Net:
    """The shipped judge's net, read once."""
    return shipped(DARK_NET, DARK_FEATURES, "darknet", Net.load)


@dataclass(frozen=True)
class DarkView:
    """What the candidates of one frame are measured on. Rectified (counter) px unless
    said: `coarse` labels (vision.counter.Counter.resolve); on the fine view (vision.tops),
    `level` the light relative to the lit floor, `edges` the sharp edges over the clicked
    tops' edge strength and `outline` the outline score (see vision.counter); `scale` fine
    px per rectified px; `paint_level` the paint's tops and `shadow_level` this frame's
    shadows (relative to the lit floor); `noise` the frame's edge noise."""

    coarse: np.ndarray
    level: np.ndarray
    edges: np.ndarray
    outline: np.ndarray
    scale: tuple[float, float]
    colour: int
    n_colours: int
    cube_size: float
    paint_level: float
    shadow_level: float
    noise: float


def features(
    view: DarkView, candidates: list[tuple[Part, int]], distances: np.ndarray, named: np.ndarray
) -> np.ndarray:
    """DARK_FEATURES of each (part, source) candidate. `distances`: the candidates' middle
    colours' class distances (vision.colour.ColourModel.class_distances); `named`: the
    centres of the other colours' cubes."""
    v = view
    c, k, edge = v.colour, v.n_colours, v.cube_size
    h, w = v.coarse.shape
    centres = np.array([p.centre for p, _ in candidates]).reshape(-1, 2)
    rows = []
    for (part, source), (x, y), d in zip(candidates, centres, distances, strict=True):
        fx, fy = x * v.scale[0], y * v.scale[1]
        middle = _window(v.level, fx, fy, MIDDLE * edge * v.scale[0])
        light = _window(v.level, fx, fy, REACH * edge * v.scale[0])
        level = float(middle.mean())
        others = np.delete(d[1:], c - 1)
        apart = np.hypot(*(named - (x, y)).T) / edge if len(named) else np.array([FAR])
        neighbours = np.count_nonzero(np.hypot(*(centres - (x, y)).T) < NEIGHBOURS * edge) - 1
        rows.append(
            [
                source,
                part.confidence,
                float(_window(v.outline, fx, fy, 3).max()),
                level,
                float(light.min()),
                float(light.max()),
                level - v.paint_level,
                v.shadow_level - level,
                d[c],
                d[0],
                others.min(initial=FAR),
                d[c] - d[0],
                *_shares(_window(v.coarse, x, y, NEAR * edge), c, k),
                *_shares(_window(v.coarse, x, y, AROUND * edge), c, k),
                min(float(apart.min(initial=FAR)), FAR),
                neighbours,
                v.shadow_level - v.paint_level,
                v.noise,
                min(x, y, w - x, h - y, FAR * edge) / edge,
                float(_window(v.edges, fx, fy, MIDDLE * edge * v.scale[0]).mean()),
                float(np.percentile(light, 10)),
                float(light.std()),
            ]
        )
    return np.array(rows, dtype=np.float64).reshape(-1, len(DARK_FEATURES))


def patches(view: DarkView, centres: list[tuple[float, float]]) -> np.ndarray:
    """The net's patch (DARK_CHANNELS, uint8) round each candidate centre (rectified px)."""
    k, c, coarse = view.n_colours, view.colour, view.coarse
    paint = (coarse == c) | (coarse == k + c) | (coarse == 2 * k + 2)
    floor = coarse == 0
    layers = [
        (paint, 1.0, 0.0),
        (floor, 1.0, 0.0),
        (~paint & ~floor, 1.0, 1.0),
        (view.level / LIGHT_SPAN, view.scale[0], 1.0 / LIGHT_SPAN),
        (view.edges / EDGE_SPAN, view.scale[0], 0.0),
    ]
    layers = [(image.astype(np.float32), scale, border) for image, scale, border in layers]
    step = PATCH / (PATCH_EDGES * view.cube_size)  # patch px per rectified px
    out = np.zeros((len(centres), PATCH, PATCH, len(DARK_CHANNELS)), np.uint8)
    for i, (x, y) in enumerate(centres):
        for j, (image, scale, border) in enumerate(layers):
            s = step / scale
            move = np.float32([[s, 0, PATCH / 2 - x * step], [0, s, PATCH / 2 - y * step]])
            got = cv2.warpAffine(
                image,
                move,
                (PATCH, PATCH),
                flags=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_CONSTANT,
                borderValue=border,
            )
            out[i, :, :, j] = np.clip(got * 255, 0, 255)
    return out


def _window(image: np.ndarray, x: float, y: float, half: float) -> np.ndarray:
    """The square of `half` px round (x, y), cut to the image (at least its nearest pixel)."""
    h, w = image.shape[:2]
    xi, yi, r = (
        min(max(int(round(x)), 0), w - 1),
        min(max(int(round(y)), 0), h - 1),
        max(0, int(half)),
    )
    return image[max(0, yi - r) : yi + r + 1, max(0, xi - r) : xi + r + 1]


def _shares(window: np.ndarray, colour: int, n_colours: int) -> list[float]:
    """Shares of floor, the paint's tops, its sides, unknown and other colours' pixels."""
    counts = np.bincount(window.ravel(), minlength=2 * n_colours + 3) / window.size
    mine = counts[0] + counts[colour] + counts[n_colours + colour] + counts[2 * n_colours + 1]
    return [
        counts[0],
        counts[colour],
        counts[n_colours + colour],
        counts[2 * n_colours + 1],
        1 - mine,
    ]


def rule_keeps(rows: np.ndarray) -> np.ndarray:
    """What is kept without a judge: the candidates of the paint's pixels and the lone
    ones, and the outlines of at least TOP_OUTLINE whose middle is no nearer the floor's
    colour than the paint's (a sharp cast shadow has a square's outline too, but keeps
    the floor's colour)."""
    f = {name: rows[:, i] for i, name in enumerate(DARK_FEATURES)}
    return (f["source"] != OUTLINE) | (
        (f["confidence"] >= TOP_OUTLINE) & (f["paint_distance"] <= f["floor_distance"])
    )


def merged(pixels: list[Part], tops: list[Part], cube_size: float) -> list[Part]:
    """The tops found by outline, and the cubes found by pixels farther than SAME_CUBE from
    all of them (a lower cube in a pile shows no whole outline)."""
    near = (SAME_CUBE * cube_size) ** 2
    return [
        p
        for p in pixels
        if all(
            (p.centre[0] - t.centre[0]) ** 2 + (p.centre[1] - t.centre[1]) ** 2 > near for t in tops
        )
    ] + tops
