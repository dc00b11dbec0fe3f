"""The counter: one frame in, cubes per colour out, with unknown blobs and confidences."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.colour import (
    DARK_BASE,
    DARK_LEVELS,
    FLOOR,
    SIDE_BASE,
    UNKNOWN,
    ColourModel,
    FloorField,
    floor_labels,
    segment_distance,
)
from vision.dark import (
    DARK_FEATURES,
    LONE,
    OUTLINE,
    PIXELS,
    TOP_OUTLINE,
    DarkView,
    features,
    merged,
    patches,
    rule_keeps,
)
from vision.errors import VisionError
from vision.forest import Forest
from vision.geometry import TrayGeometry, inset_mask
from vision.net import Net
from vision.segment import Blob, find_blobs
from vision.split import Decision, Part, cubes_in_area, decide, split_blobs
from vision.tops import FINE, outline_score, peaks, sharp_edges

# The floor field is refitted and the frame classified again when the light moved by more
# than this (relative), so a single photograph gets the same correction as a live stream.
REFIT_TOLERANCE = 0.03
# Floor-coloured pixels this much darker than the cast shadows of this frame are not
# shadow: a black cube on a grey tray, or the dark side of a cube.
SHADOW_MARGIN = 0.07
# Below this share of lit floor the light has changed too much to find the floor by its
# colour; the correction restarts from the tray's median colour.
REBASE_BELOW = 0.4
# A colour this close (tolerance units) to the floor in shadow can pass for shadow.
DARK_COLOUR_DISTANCE = 0.8
# Paints whose brightest channel stays below this (normalised levels) are dim (black).
DIM_LEVEL = 100
# ... or whose mean stays below this with channels within DIM_CHROMA of each other (a
# black with a tint).
DIM_MEAN = 100
DIM_CHROMA = 50
# A frame's confidence is the product of the shares of its decisions (the forests' vote
# shares, averaged with the net's where it is asked) raised to this power: the shares are
# low for many counts that are right, and so raised, the confidence follows how often
# counts given it are exact. On the tuning tables (seeds 300000-300047) a fit by likelihood
# gives 0.33; 0.42 keeps confidences a little lower (mean 0.918 against 0.928 exact), which
# doubts a few more miscounts.
CONFIDENCE_POWER = 0.42
# A count whose confidence is below this is not sure: the table should check the tray.
# On the tuning tables a sixth of the scenes fall below it, two thirds of the miscounted
# ones among them, and 97% of the others are exact.
SURE = 0.86
# In a count that is not sure, the places of the decisions with less than this vote share
# (at least the weakest one) are shown as the places to check (a single decision below 0.7
# makes a count not sure).
DOUBT_BELOW = 0.95
# ... as squares this many cube edges wide.
DOUBT_SIZE = 1.6
# A patch darker than halfway from the lit floor to a floor-coloured paint's top, wider
# than half a cube, touching no other cube nor the tray's edge, is cubes of that paint
# (with their own shadows): at least this many tops large, one cube with its shadow
# covering this many silhouettes, at most this many such cubes (more is a shadow band),
# and its mean darkness within this of the paint's.
LONE_DARK_TOPS = 0.6
LONE_DARK_SHADOW = 1.5
LONE_DARK_MOST = 3.5
LONE_DARK_SPREAD = 0.2
# Tops of a floor-coloured paint found by their outline (vision.tops): the weakest side of
# the square is measured in the clicked tops' edge strength, or in this many times the
# frame's median edge strength over TOP_OUTLINE where that is more (a dim frame's noise
# makes edges everywhere), and needs this much to be a candidate; tops are at least this
# many cube edges apart (less than one: the centres of two touching tops, as found, may
# lie a little closer, and a stronger false outline beside a top, along its shaded side,
# must not hide it: on the tuning tables 727, 731, 735, 733 and 731 scenes are exact at
# 0.75, 0.8, 0.85, 0.92 and 1.0, before the judge was grown again); the middle of the
# square (this share of its edge) must be at least this share floor, shadow or that paint.
TOP_NOISE = 2.0
JUDGE_OUTLINE = 0.45
TOP_SPACING = 0.85
TOP_MIDDLE = 0.7
TOP_ALLOWED = 0.9
# Unknown pixels covering more than this many cubes are a hand or an object in the tray.
OBSTRUCTED_CUBES = 3.0
# Width of the tray's edge ignored: clicked corners are a pixel or two off, and the
# outermost pixels mix the floor with the foot of the wall.
EDGE_PIXELS = 2
# Cast shadows keep at least this much of the floor's light when no shadow is seen.
DEFAULT_SHADOW = 0.5


@dataclass(frozen=True)
class Cube:
    centre: tuple[float, float]  # image px
    colour: str | None  # None: a blob the counter cannot explain
    confidence: float  # 0..1
    outline: np.ndarray = field(
        repr=False, default=None
    )  # 4x2 image px: one cube's square on the floor


@dataclass(frozen=True)
class FrameCount:
    counts: dict[str, int]
    unknown: int
    cubes: list[Cube]
    # How likely the whole count is exact, from the vote shares of the forests' decisions
    # (each count of a colour in a blob, each dark candidate kept or dropped; see
    # CONFIDENCE_POWER); 0 with unknown blobs.
    confidence: float
    ms: float
    tray: np.ndarray = field(repr=False, default=None)  # 4x2 image px of the tray floor
    # Something big and unknown lies in the tray (a hand, a card): no count should be taken.
    obstructed: bool = False
    # Where to check a count that is not sure: Nx4x2 image px, a square round each place.
    doubts: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 4, 2)))

    @property
    def sure(self) -> bool:
        return self.confidence >= SURE

    @property
    def places_to_check(self) -> list[list[float]]:
        """The middles of the doubts' squares (image px, to a tenth)."""
        return [[round(float(x), 1), round(float(y), 1)] for x, y in self.doubts.mean(axis=1)]

    def to_dict(self) -> dict:
        return {
            "counts": dict(self.counts),
            "unknown": self.unknown,
            "confidence": round(self.confidence, 3),
            "sure": self.sure,
            "doubts": self.places_to_check,
            "ms": round(self.ms, 2),
            "obstructed": self.obstructed,
            "cubes": [
                {
                    "centre": [round(c.centre[0], 1), round(c.centre[1], 1)],
                    "colour": c.colour,
                    "confidence": round(c.confidence, 3),
                }
                for c in self.cubes
            ],
        }


# Light of the floor per fine label: 1 lit, the bin's darkness for DARK labels, 0 otherwise.
_LEVELS = np.zeros(256, np.float32)


@dataclass(frozen=True)
class Survey:
    """What one frame holds before the judge: its blobs, the cubes found in them, and the
    `decisions` behind their counts (vision.split.split_blobs). On a tray where a paint
    passes for the floor in shadow, that paint's cubes are left out of `parts`: they are
    among its `candidates` to judge, as (part, source), with their DARK_FEATURES `rows`
    and the `view` they were measured on (vision.dark)."""

    blobs: list[Blob]
    parts: list[Part]
    decisions: list[Decision]
    candidates: list[tuple[Part, int]]
    rows: np.ndarray
    view: DarkView | None = None


def dark_level(label: int) -> float:
    """Darkness (fraction of the lit floor) at the middle of a DARK label's bin."""
    i = label - DARK_BASE
    return float((DARK_LEVELS[i] + DARK_LEVELS[i + 1]) / 2)


_LEVELS[FLOOR] = 1.0
_LEVELS[DARK_BASE : DARK_BASE + len(DARK_LEVELS) - 1] = [
    dark_level(v) for v in range(DARK_BASE, DARK_BASE + len(DARK_LEVELS) - 1)
]


def _dim(colour: np.ndarray) -> bool:
    return colour.max() < DIM_LEVEL or (colour.mean() < DIM_MEAN and np.ptp(colour) < DIM_CHROMA)


class Counter:
    def __init__(
        self,
        geometry: TrayGeometry,
        model: ColourModel,
        cube_area: float,
        cube_size: float,
        frame_size: tuple[int, int],
        floor_field: np.ndarray | None = None,
        shadow_level: float | None = None,
        insets: tuple[int, ...] | None = None,
        area_field: tuple[float, ...] | None = None,
        side_field: tuple[float, ...] | None = None,
        outline_strength: float | None = None,
        forest: Forest | None = None,
        judge: Forest | None = None,
        net: Net | None = None,
        dark_net: Net | None = None,
    ):
        self.geometry = geometry
        self.model = model
        self.cube_area = cube_area  # one lone cube's silhouette, rectified px
        self.cube_size = cube_size  # edge of its top face, rectified px
        self.top_area = cube_size**2
        self.area_field = tuple(area_field) if area_field else (cube_area, 0.0, 0.0, 0.0)
        # (without one, no side is expected anywhere: the features that need it read 0)
        self.side_field = tuple(side_field) if side_field else (0.0, 0.0, 0.0)
        self.frame_size = tuple(frame_size)
        self.field = FloorField(geometry.rect_size, model.floor_reference)
        if floor_field is not None:
            self.field.coef = np.asarray(floor_field, dtype=np.float64)
        self.shadow_level = shadow_level if shadow_level is not None else DEFAULT_SHADOW
        # Paints dark enough to pass for the shaded side or shadow of another cube.
        self.dim_colours = frozenset(
            k + 1
            for k, name in enumerate(model.names)
            if _dim(np.median(model.colour_protos[name], axis=0))
        )
        # The visible floor: without the band the near walls hide, nor the outermost
        # pixels (clicked corners are a pixel or two off and mix in the foot of the wall).
        w, h = geometry.rect_size
        visible = inset_mask((w, h), insets) if insets else np.ones((h, w), np.uint8)
        k = 2 * EDGE_PIXELS + 1
        self.visible = cv2.erode(np.pad(visible, 1), np.ones((k, k), np.uint8))[1:-1, 1:-1]
        self.visible_area = int(np.count_nonzero(self.visible))
        self.edge = (cv2.dilate(1 - self.visible, np.ones((5, 5), np.uint8)) > 0) & (
            self.visible > 0
        )
        self.edge_pixels = np.flatnonzero(self.edge)
        # Cube colours whose lit faces look like floor in shadow (black paint on a grey
        # tray), or that the colour model takes for floor anyway (dark grey on a dark
        # felt): the darkness of their tops, relative to the lit floor. Their cubes are
        # found by their outlines, as colour cannot find them.
        self.dark_colours = {}
        for k, name in enumerate(model.names):
            d, level = segment_distance(
                np.median(model.colour_protos[name], axis=0)[None].astype(np.float64),
                model.floor_protos,
                (DARK_LEVELS[0], DARK_LEVELS[-1]),
            )
            as_floor = np.mean(floor_labels(model.labels_of(model.colour_protos[name])))
            if d[0] < DARK_COLOUR_DISTANCE or as_floor >= 0.5:
                self.dark_colours[k + 1] = float(level[0])
        # Edge strength of the clicked tops' outlines (calibration), and a finer view to
        # measure outlines on.
        self.outline_strength = outline_strength
        self.forest = forest  # decides counts per blob (vision.split); None: rules alone
        self.net = net  # ... with the forest (vision.net); None: the forest alone
        self.judge = judge  # keeps the floor-coloured paint's cubes (vision.dark); None: rules
        self.dark_net = dark_net  # ... with the judge; None: the judge alone
        self.fine = TrayGeometry(geometry.corners, (round(w * FINE), round(h * FINE)))

    def outlines(self, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Brightness relative to the lit floor and its sharp edges, both on the fine view
        (see vision.tops)."""
        fine = self.fine.rectify(frame).astype(np.float32)
        scale = cv2.resize(self.field.scale(), self.fine.rect_size, interpolation=cv2.INTER_LINEAR)
        level = self._floor_level(cv2.multiply(fine, scale))
        return level, sharp_edges(level)

    def light(self, rect: np.ndarray) -> np.ndarray:
        """Light relative to the lit floor of a rectified frame, after correcting it toward
        calibration (float32)."""
        return self._floor_level(self.field.normalise(rect))

    def _floor_level(self, normalised: np.ndarray) -> np.ndarray:
        """Brightness relative to the lit floor, along the floor's colour (float32)."""
        ref = self.model.floor_reference.astype(np.float32)
        return cv2.transform(normalised.astype(np.float32), (ref / float(ref @ ref))[None])

    def _may_be_paint(self, coarse: np.ndarray, colour: int) -> np.ndarray:
        """Where a cube of a floor-coloured paint may lie: pixels the counter saw as floor or
        shadow, as that paint, or as a dark cube part."""
        n = len(self.model.names)
        return (
            (coarse == FLOOR) | (coarse == colour) | (coarse == n + colour) | (coarse == 2 * n + 2)
        )

    def _dark_candidates(
        self,
        frame: np.ndarray,
        rect: np.ndarray,
        coarse: np.ndarray,
        pixels: list[Part],
        lone: list[Part],
        named: np.ndarray,
    ) -> tuple[list[tuple[Part, int]], np.ndarray, DarkView]:
        """The candidate cubes of the floor-coloured paint as (part, source) (vision.dark)
        with their DARK_FEATURES, and the view they were measured on. The candidates: the
        cubes found in its pixels, the lone dark cubes, and the squares with sharp edges
        all round, darker inside than halfway from the lit floor to the paint (or lighter by
        as much), where the counter saw floor, shadow or that paint. `named`: the centres
        of the other colours' cubes."""
        colour = min(self.dark_colours)
        level, edges = self.outlines(frame)
        side = self.cube_size * FINE
        # (up to the visible floor's edge: the top of a cube against the far wall lies
        # over it, and the judge weighs how near the edge a candidate is)
        mine = self._may_be_paint(coarse, colour) & (self.visible > 0)
        allowed = cv2.resize(
            mine.astype(np.float32), self.fine.rect_size, interpolation=cv2.INTER_NEAREST
        )
        # the whole middle of the square, not just its centre (a square offset from another
        # colour's top still sees that top's sharp outline)
        k = max(3, int(TOP_MIDDLE * side) | 1)
        # a top is darker than halfway from the lit floor to the paint or, where a changed
        # light made the paint's tops lighter than the floor, lighter by as much
        shade = cv2.blur(level, (k, k))
        half = (1 + self.dark_colours[colour]) / 2
        allowed = (cv2.blur(allowed, (k, k)) >= TOP_ALLOWED) & ((shade < half) | (shade > 2 - half))
        scale = tuple(
            f / r for f, r in zip(self.fine.rect_size, self.geometry.rect_size, strict=True)
        )
        # the outline pass is the costly part: only where a top may lie, and round the
        # other candidates (their outline is measured too), a window round each group of
        # such pixels (shadows lie apart, in different corners of the tray)
        asked = allowed.astype(np.uint8)
        for p in pixels + lone:
            cv2.circle(
                asked,
                (int(round(p.centre[0] * scale[0])), int(round(p.centre[1] * scale[1]))),
                3,
                1,
                -1,
            )
        m = int(side) + 2
        groups, grouped, boxes, _ = cv2.connectedComponentsWithStats(
            cv2.dilate(asked, np.ones((m, m), np.uint8))
        )
        score = np.zeros_like(edges)
        for g in range(1, groups):
            x, y, w, h, _ = boxes[g]
            x0, y0, x1, y1 = max(0, x - m), max(0, y - m), x + w + m, y + h + m
            where = (asked[y0:y1, x0:x1] > 0) & (grouped[y0:y1, x0:x1] == g)
            score[y0:y1, x0:x1] = np.maximum(
                score[y0:y1, x0:x1], outline_score(edges[y0:y1, x0:x1], side, where)
            )
        # a dim frame's noise makes edges everywhere: the outline must also stand out from them
        noise = TOP_NOISE * float(np.median(edges[::3, ::3])) / TOP_OUTLINE
        score /= max(self.outline_strength, noise)
        tops = [
            Part(colour, (x / scale[0], y / scale[1]), s)
            for x, y, s in peaks(np.where(allowed, score, 0), JUDGE_OUTLINE, TOP_SPACING * side)
        ]
        candidates = (
            [(p, PIXELS) for p in pixels] + [(p, LONE) for p in lone] + [(p, OUTLINE) for p in tops]
        )
        view = DarkView(
            coarse,
            level,
            edges / self.outline_strength,
            score,
            scale,
            colour,
            len(self.model.names),
            self.cube_size,
            self.dark_colours[colour],
            self.shadow_level,
            noise / self.outline_strength,
        )
        if not candidates:
            return [], np.zeros((0, len(DARK_FEATURES))), view
        middle = cv2.blur(self.field.normalise(rect), (k // 2 | 1, k // 2 | 1))
        h, w = middle.shape[:2]
        d = self.model.class_distances(
            np.array(
                [
                    middle[
                        min(max(int(p.centre[1]), 0), h - 1), min(max(int(p.centre[0]), 0), w - 1)
                    ]
                    for p, _ in candidates
                ]
            )
        )
        return candidates, features(view, candidates, d, named), view

    def _judged(self, survey: Survey) -> tuple[list[Part], list[Decision]]:
        """The candidates kept as cubes, by the judge (with its net where it is unsure)
        or, without one, by the rules, and the judge's decision on each (a candidate
        dropped by a narrow vote may be a cube missed)."""
        candidates, rows = survey.candidates, survey.rows
        if not candidates:
            return [], []
        if self.judge is not None:
            kept, share = decide(
                self.judge,
                self.dark_net,
                rows,
                lambda ask: patches(survey.view, [candidates[i][0].centre for i in ask]),
            )
        else:
            kept, share = rule_keeps(rows), np.ones(len(rows))
        judged = [
            (Part(p.colour, p.centre, min(1.0, p.confidence, s)), source)
            for (p, source), keep, s in zip(candidates, kept, share, strict=True)
            if keep
        ]
        return merged(
            [p for p, source in judged if source != OUTLINE],
            [p for p, source in judged if source == OUTLINE],
            self.cube_size,
        ), [Decision(float(s), p.centre) for (p, _), s in zip(candidates, share, strict=True)]

    def labels(self, rect: np.ndarray) -> np.ndarray:
        """Fine labels of a rectified frame, after correcting the light toward calibration."""
        labels = self.model.classify(self.field.normalise(rect))
        if (
            np.count_nonzero((labels == FLOOR) & (self.visible > 0))
            < REBASE_BELOW * self.visible_area
        ):
            self.field.rebase(rect, self.visible)
            labels = self.model.classify(self.field.normalise(rect))
        before = self.field.coef[0] / self.field.gains
        if self.field.fit(rect, labels == FLOOR):
            change = np.abs(self.field.coef[0] / self.field.gains / before - 1).max()
            if change > REFIT_TOLERANCE:
                labels = self.model.classify(self.field.normalise(rect))
        return self._lift_wall_shadows(rect, labels)

    def _lift_wall_shadows(self, rect: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Light cubes lying in the shadow of a tray wall as if they were in the open.

        Wall shadows are the large shadowed floor regions touching the visible floor's edge
        (a cube's own shadow is small and lies inside). The light there is interpolated
        smoothly from the floor around (lit floor 1, wall shadow its darkness), leaving
        the cubes' own shadows out, so a cube next to its shadow keeps the open light.
        """
        dark = ((labels >= DARK_BASE) & (labels != UNKNOWN)).astype(np.uint8)
        # (areas by bincount: OpenCV's statistics cost more than the labelling)
        n, comps = cv2.connectedComponents(dark, connectivity=8)
        at_edge = np.zeros(n, bool)
        at_edge[comps.take(self.edge_pixels)] = True
        walls = np.nonzero(
            at_edge & (np.bincount(comps.ravel(), minlength=n) >= 2 * self.cube_area)
        )[0]
        walls = walls[walls > 0]
        if len(walls) == 0:
            return labels
        is_wall = np.zeros(n, bool)
        is_wall[walls] = True
        shadow = is_wall.take(comps)
        levels = cv2.LUT(labels, _LEVELS)
        # (every 7th shadow pixel, taken by index: a mask's selection costs three times more)
        self.shadow_level = float(np.median(levels.ravel().take(np.flatnonzero(shadow)[::7])))
        weight = ((labels == FLOOR) | shadow).astype(np.float32)
        # The light varies over cube sizes: interpolate it at half resolution.
        h, w = labels.shape
        half = (max(2, w // 2), max(2, h // 2))
        sigma = 0.4 * self.cube_size
        light = cv2.GaussianBlur(
            cv2.resize(levels * weight, half, interpolation=cv2.INTER_AREA), (0, 0), sigma
        )
        total = cv2.GaussianBlur(
            cv2.resize(weight, half, interpolation=cv2.INTER_AREA), (0, 0), sigma
        )
        light = np.where(total > 0.05, light / np.maximum(total, 1e-6), 1.0)
        light = cv2.resize(np.clip(light, 0.3, 1.0), (w, h), interpolation=cv2.INTER_LINEAR)
        scale = self.field.scale() / cv2.merge([light, light, light])
        lifted = self.model.classify(self.field.normalise(rect, scale))
        # The light is smooth, so near a shadow's edge a cube in the open is lifted too,
        # and so is a pile's lit top above its own shadow: where the lift makes a cube's
        # colour unknown, or turns a top of a paint into that paint's side (too bright
        # for a top) or into floor (a lit red top lifted past its paint's range, its
        # channels clipped, reads as a light brown floor), the open light's label stands.
        tops = (labels >= 1) & (labels <= len(self.model.names))
        overlit = tops & ((lifted == labels + SIDE_BASE) | (lifted == FLOOR))
        return np.where(
            overlit | (lifted == UNKNOWN) & (labels != FLOOR) & (labels < DARK_BASE), labels, lifted
        )

    def resolve(self, labels: np.ndarray) -> np.ndarray:
        """Coarse labels: FLOOR (lit or shadow), 1..K tops of colour k, K+k its other faces,
        2K+1 unknown, 2K+2 dark cube part (a face too dark to name)."""
        n = len(self.model.names)
        remap = np.full(256, 2 * n + 1, np.uint8)
        remap[FLOOR] = FLOOR
        remap[1 : n + 1] = np.arange(1, n + 1)
        remap[SIDE_BASE + 1 : SIDE_BASE + n + 1] = np.arange(n + 1, 2 * n + 1)
        # Shadow ends halfway down to a floor-coloured paint darker than the shadows.
        darker = [v for v in self.dark_colours.values() if v < self.shadow_level]
        limit = (
            max(self.shadow_level - SHADOW_MARGIN, (self.shadow_level + max(darker)) / 2)
            if darker
            else self.shadow_level - SHADOW_MARGIN
        )
        for label in range(DARK_BASE, DARK_BASE + len(DARK_LEVELS) - 1):
            level = dark_level(label)
            if level >= limit:
                remap[label] = FLOOR
            elif self.dark_colours:
                c = min(self.dark_colours, key=lambda c: abs(self.dark_colours[c] - level))
                remap[label] = c if abs(self.dark_colours[c] - level) < 0.06 else n + c
            else:
                remap[label] = 2 * n + 2
        return remap[labels] * self.visible

    def _lone_dark_cubes(
        self, rect: np.ndarray, coarse: np.ndarray, found: list[Part]
    ) -> list[Part]:
        """Cubes of a floor-coloured paint (black on a grey tray) whose tops pass for floor.

        Their top is a little darker than the lit floor and their sides much darker, so a
        solid patch darker than halfway to the paint's top, as wide as half a cube, is
        such a cube with its shadow. A cube's cast shadow touches the cube that casts it
        and a wall's shadow touches the tray's edge: patches touching either are left out,
        and so are patches holding a cube of the paint already counted.
        """
        if not self.dark_colours:
            return []
        colour = min(self.dark_colours)
        level = cv2.blur(self.light(rect), (3, 3))
        mine = self._may_be_paint(coarse, colour)
        dark = ((level < (1 + self.dark_colours[colour]) / 2) & mine & (self.visible > 0)).astype(
            np.uint8
        )
        # an opening with half a cube removes the thin dark edges around other cubes
        k = max(3, int(round(self.cube_size / 2)) | 1)
        dark = cv2.morphologyEx(
            dark, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        )
        count, comps, stats, centroids = cv2.connectedComponentsWithStats(dark, connectivity=8)
        if count <= 1:
            return []
        near = np.zeros(count, bool)
        others = cv2.dilate((~mine).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
        near[comps[others | self.edge]] = True
        mean = np.bincount(comps.ravel(), weights=level.ravel(), minlength=count) / np.maximum(
            stats[:, 4], 1
        )
        for p in found:
            if p.colour == colour:
                x, y = int(p.centre[0]), int(p.centre[1])
                near[comps[min(y, comps.shape[0] - 1), min(x, comps.shape[1] - 1)]] = True
        parts = []
        for i in range(1, count):
            area = stats[i, cv2.CC_STAT_AREA]
            centre = (float(centroids[i, 0]), float(centroids[i, 1]))
            unit = LONE_DARK_SHADOW * self.silhouette(centre)
            if (
                near[i]
                or area < LONE_DARK_TOPS * self.top_area
                or area > LONE_DARK_MOST * unit
                or abs(mean[i] - self.dark_colours[colour]) > LONE_DARK_SPREAD
            ):
                continue
            c, confidence = cubes_in_area(area, unit)
            parts += [Part(colour, centre, min(confidence, 0.6))] * c
        return parts

    def silhouette(self, centre: tuple[float, float]) -> float:
        """Expected silhouette area of one lone cube at a rectified position."""
        w, h = self.geometry.rect_size
        x, y = centre[0] / w - 0.5, centre[1] / h - 0.5
        c = self.area_field
        area = c[0] + c[1] * x + c[2] * y + c[3] * (x * x + y * y)
        return float(np.clip(area, 0.6 * self.cube_area, 1.6 * self.cube_area))

    def sides(self, centre: tuple[float, float]) -> tuple[float, float]:
        """Where a lone cube's silhouette centre lies from its top's at a rectified
        position (px): toward the floor below the camera, farther away from it."""
        w, h = self.geometry.rect_size
        cx, cy, k = self.side_field
        return cx - k * (centre[0] - w / 2), cy - k * (centre[1] - h / 2)

    def shadow_gaps(self) -> dict[int, float]:
        """For each paint that passes for the floor in shadow: how much darker than this
        frame's cast shadows its tops are (relative to the lit floor; negative: lighter)."""
        return {c: self.shadow_level - level for c, level in self.dark_colours.items()}

    def blobs(self, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Blob]]:
        """The rectified frame, its coarse labels (see `resolve`), and its blobs of cube
        pixels with their component image."""
        # Averaging 3x3 pixels brings sensor noise and JPEG blocks well below the
        # difference between a cube's top and its sides, even for black.
        rect = cv2.blur(self.geometry.rectify(frame), (3, 3))
        coarse = self.resolve(self.labels(rect))
        comps, blobs = find_blobs(coarse, len(self.model.names), self.cube_area, self.cube_size)
        return rect, coarse, comps, blobs

    def count(self, frame: np.ndarray) -> FrameCount:
        start = time.perf_counter()
        if frame is None or frame.ndim != 3 or frame.shape[2] != 3:
            raise VisionError("expected a BGR colour frame")
        if (frame.shape[1], frame.shape[0]) != self.frame_size:
            raise VisionError(
                f"frame is {frame.shape[1]}x{frame.shape[0]} but the counter was made "
                f"for {self.frame_size[0]}x{self.frame_size[1]}"
            )
        survey = self.survey(frame)
        judged, decisions = self._judged(survey)
        n = len(self.model.names)
        unknown_area = sum(int(b.class_pixels[2 * n + 1]) for b in survey.blobs)
        return self._result(
            survey.parts + judged,
            survey.decisions + decisions,
            start,
            unknown_area > OBSTRUCTED_CUBES * self.cube_area,
        )

    def survey(self, frame: np.ndarray) -> Survey:
        """The frame's blobs and the cubes found in them (see Survey)."""
        rect, coarse, comps, blobs = self.blobs(frame)
        n = len(self.model.names)
        parts, decisions = split_blobs(
            blobs,
            comps,
            coarse,
            n,
            self.top_area,
            [self.silhouette(b.centre) for b in blobs],
            self.dim_colours,
            self.forest,
            self.shadow_gaps(),
            [self.sides(b.centre) for b in blobs],
            self.net,
            lambda: self.light(rect),
        )
        lone = self._lone_dark_cubes(rect, coarse, parts)
        if not (self.dark_colours and self.outline_strength):
            return Survey(blobs, parts + lone, decisions, [], np.zeros((0, len(DARK_FEATURES))))
        colour = min(self.dark_colours)
        rest = [p for p in parts if p.colour != colour]
        named = np.array([p.centre for p in rest if p.colour is not None]).reshape(-1, 2)
        candidates, rows, view = self._dark_candidates(
            frame, rect, coarse, [p for p in parts if p.colour == colour], lone, named
        )
        return Survey(blobs, rest, decisions, candidates, rows, view)

    def _squares(self, centres: list[tuple[float, float]], size: float) -> np.ndarray:
        """Squares `size` rectified px wide round rectified points, as Nx4x2 image px."""
        if not centres:
            return np.zeros((0, 4, 2))
        half = size / 2
        square = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        return self.geometry.to_image(np.concatenate([square + c for c in centres])).reshape(
            -1, 4, 2
        )

    def _result(self, parts, decisions: list[Decision], start, obstructed: bool) -> FrameCount:
        names = self.model.names
        counts = {name: 0 for name in names}
        unknown = 0
        centres = self.geometry.to_image([p.centre for p in parts]) if parts else np.zeros((0, 2))
        outlines = self._squares([p.centre for p in parts], self.cube_size)
        cubes = []
        for i, part in enumerate(parts):
            colour = names[part.colour - 1] if part.colour is not None else None
            if colour is None:
                unknown += 1
            else:
                counts[colour] += 1
            cubes.append(
                Cube(
                    (float(centres[i, 0]), float(centres[i, 1])),
                    colour,
                    part.confidence,
                    outlines[i],
                )
            )
        confidence = 0.0 if unknown else math.prod(d.share for d in decisions) ** CONFIDENCE_POWER
        doubts: list[tuple[float, float]] = []
        if confidence < SURE and decisions:
            weak = [d for d in decisions if d.share < DOUBT_BELOW] or [
                min(decisions, key=lambda d: d.share)
            ]
            # one square per place: a blob's colours are decided at its centre, and a
            # dark cube's candidates (pixels, outline) lie close together
            for d in sorted(weak, key=lambda d: d.share):
                if all(math.dist(d.centre, c) > self.cube_size for c in doubts):
                    doubts.append(d.centre)
        return FrameCount(
            counts,
            unknown,
            cubes,
            confidence,
            (time.perf_counter() - start) * 1000,
            self.geometry.corners,
            obstructed,
            self._squares(doubts, DOUBT_SIZE * self.cube_size),
        )
