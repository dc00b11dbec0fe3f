"""The counter: one frame in, cubes per colour out, each with a confidence.

Read top to bottom, `Counter.count` does:
1. The canonical view (vision.canonical): the floor seen from above, a cube's top TOP_PX wide,
   each pixel's light as log2 of its ratio to this frame's floor. Light level and colour
   cancel out, and the scale is the calibrated cube's.
2. Where the cubes are (vision.centres): the peaks of the centre net's score for a cube's top
   centred at each place, each turned into the share of such peaks (over the floor, or over
   the wall round it) that were cubes on set-ups the net never saw
   (vision/models/peaks.json). A peak more likely a cube than not is one.
3. Which colour: the calibrated top colour (log ratio to the floor, clicked at calibration)
   nearest to the top's own, measured on the middle of the top. A top farther than
   UNKNOWN_DOUBLINGS from every calibrated colour is a cube of no colour known.
4. How sure: a logistic model, fitted on scenes neither the net nor anything else was tuned
   on, turns the weakest cube, the strongest peak left out and the closest call between two
   colours into the probability that the whole count is exact (vision/models/confidence.json).
5. Obstruction: a large patch of the floor that is neither floor, nor shadow, nor any cube's
   colour, far from every cube found (a hand, a card) means no count should be taken.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.canonical import TOP_PX, CanonicalView
from vision.centres import CentreNet
from vision.errors import VisionError

CONFIDENCE = Path(__file__).parent / "models" / "confidence.json"
# A peak this likely to be a cube is one (no tuning: more likely than not).
CUBE = 0.5
# Peaks down to this probability are kept as candidates: the strongest left out lowers the
# confidence and is shown as a place to check.
CANDIDATE = 0.1
# The middle of a top sampled for its colour: 5x5 view px, well inside a 12 px top.
COLOUR_PATCH = 2
# Within one tray a top's light changes by a doubling (in the tower's shadow, far from the
# lamp: a factor on all three channels), while a paint's hue and saturation change by a
# tenth of one. So a doubling of lightness weighs as much as LIGHTNESS_PER_DOUBLING doublings
# of hue: enough to tell black from white or grey, never enough to outweigh a hue.
LIGHTNESS_PER_DOUBLING = 0.3
# A top this far (colour_distance) from every calibrated colour is of a colour not known.
UNKNOWN_DOUBLINGS = 1.0
# A pixel this far from the floor, the tops and their shadows (log2 units) is unexplained ...
UNEXPLAINED_DOUBLINGS = 0.6
# ... and unexplained patches larger than this many cube tops, off the cubes, obstruct.
OBSTRUCTED_TOPS = 3.0
# A cube's own square (its top and the sides and shadow round it), in cube edges.
CUBE_REACH = 2.0
# Obstructions are looked for on the floor at this scale (a top is 3 px there).
OBSTRUCTION_SCALE = 0.25
# A count is sure when the confidence gives it this chance of being exact: then at most one
# sure count in 200 is wrong.
SURE = 0.995
# Squares drawn round places to check, in cube edges; at most this many places, the likeliest
# mistakes first.
DOUBT_SIZE = 1.6
MOST_DOUBTS = 3


@dataclass(frozen=True)
class Cube:
    centre: tuple[float, float]  # image px
    colour: str | None  # None: a cube of a colour not calibrated
    confidence: float  # 0..1
    outline: np.ndarray = field(repr=False, default=None)  # 4x2 image px: the top's square


@dataclass(frozen=True)
class FrameCount:
    counts: dict[str, int]
    unknown: int
    cubes: list[Cube]
    confidence: float  # probability that the whole count is exact (0 with unknown cubes)
    ms: float
    tray: np.ndarray = field(repr=False, default=None)  # 4x2 image px of the tray floor
    # Something big and unknown lies in the tray (a hand, a card): no count should be taken.
    obstructed: bool = False
    # Where to check a count that is not sure: Nx4x2 image px, a square round each place.
    doubts: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 4, 2)))
    features: tuple[float, ...] = ()  # what the confidence was computed from (Counter.features)

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


@dataclass(frozen=True)
class Confidence:
    """Logistic model of "the count is exact" over the features `Counter.features` gives."""

    weights: tuple[float, ...]
    bias: float

    def __call__(self, features) -> float:
        z = self.bias + float(np.dot(self.weights, features))
        return 1.0 / (1.0 + math.exp(-z))

    @classmethod
    def load(cls, path: str | Path = CONFIDENCE) -> Confidence:
        try:
            data = json.loads(Path(path).read_text())
            return cls(tuple(float(w) for w in data["weights"]), float(data["bias"]))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise VisionError(f"cannot read the confidence model {path}: {e}") from None


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def colour_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance of two log2 colours: their difference in hue and saturation (what is left
    when the mean of the three channels is taken out), and the difference in that mean
    (lightness) weighed by LIGHTNESS_PER_DOUBLING. Given rows of colours (...x3), the
    distance of each pair, broadcast."""
    d = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    m = d.mean(axis=-1, keepdims=True)
    return np.sqrt(((d - m) ** 2).sum(axis=-1) + (LIGHTNESS_PER_DOUBLING * m[..., 0]) ** 2)


def top_colour(log_ratio: np.ndarray, x: float, y: float) -> np.ndarray:
    """The median log ratio of the middle of a top centred at view (x, y)."""
    xi, yi, r = int(round(x)), int(round(y)), COLOUR_PATCH
    patch = log_ratio[max(yi - r, 0) : yi + r + 1, max(xi - r, 0) : xi + r + 1]
    return np.median(patch.reshape(-1, 3), axis=0)


class Counter:
    def __init__(
        self,
        view: CanonicalView,
        tops: dict[str, np.ndarray],
        frame_size: tuple[int, int],
        net: CentreNet | None = None,
        confidence: Confidence | None = None,
    ):
        self.view = view
        self.names = list(tops)
        # each colour's calibrated tops: Kx3 log ratios (one row per clicked cube)
        self.tops = {name: np.asarray(v, np.float32).reshape(-1, 3) for name, v in tops.items()}
        # the floor's colour and each colour's middle top: what a pixel of the floor may be
        known = np.float32([np.zeros(3)] + [np.median(t, axis=0) for t in self.tops.values()])
        # ... lit more or less: only its chroma (the log colour less its mean) is kept
        self._known = known - known.mean(axis=1, keepdims=True)
        self.frame_size = tuple(frame_size)
        self.net = net or CentreNet()
        self.confidence = confidence or Confidence.load()
        x0, y0, x1, y1 = view.floor
        self.tray = view.to_image([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])  # image px

    def count(self, frame: np.ndarray) -> FrameCount:
        start = time.perf_counter()
        if frame is None or frame.ndim != 3 or frame.shape[2] != 3:
            raise VisionError("expected a BGR colour frame")
        if (frame.shape[1], frame.shape[0]) != self.frame_size:
            raise VisionError(
                f"frame is {frame.shape[1]}x{frame.shape[0]} but the counter was made "
                f"for {self.frame_size[0]}x{self.frame_size[1]}"
            )
        log_ratio = self.view.log_ratio(frame)
        # (anywhere in the view, the band of wall round the floor too: a top is a cube edge
        # above the floor, so a cube against a wall, or leaning on it, shows its top beyond
        # the floor's edge, the farther the farther it lies from the camera)
        centres, _ = self.net.centres(log_ratio, CANDIDATE, self.view.floor)
        found = [c for c in centres if c.p >= CUBE]
        left_out = max((c.p for c in centres if c.p < CUBE), default=CANDIDATE)
        colours, margins = self.colours_of([top_colour(log_ratio, c.x, c.y) for c in found])
        n = len(found)
        # each cube's own: as if it lay alone, with nothing left out near it
        cube_conf = [
            self.confidence(self.features([c.p], CANDIDATE, [m], 1))
            for c, m in zip(found, margins, strict=True)
        ]
        unknown = sum(name is None for name in colours)
        features = self.features([c.p for c in found], left_out, margins, n)
        confidence = 0.0 if unknown else self.confidence(features)
        counts = {name: 0 for name in self.names}
        for name in colours:
            if name is not None:
                counts[name] += 1
        points = [(c.x, c.y) for c in found]
        centres_img = self.view.to_image(points) if points else np.zeros((0, 2))
        outlines = self._squares(points, TOP_PX)
        cubes = [
            Cube((float(p[0]), float(p[1])), name, conf, outlines[i])
            for i, (p, name, conf) in enumerate(zip(centres_img, colours, cube_conf, strict=True))
        ]
        doubts = []
        if confidence < SURE:
            # the likeliest mistakes first: a cube found wrongly (1 - its confidence) or a
            # candidate left out that is a cube after all (its probability)
            weak = [(1 - conf, (c.x, c.y)) for c, conf in zip(found, cube_conf, strict=True)]
            weak += [(c.p, (c.x, c.y)) for c in centres if c.p < CUBE and c.p >= 2 * CANDIDATE]
            for _, place in sorted(weak, reverse=True):
                if len(doubts) < MOST_DOUBTS and all(math.dist(place, d) > TOP_PX for d in doubts):
                    doubts.append(place)
        return FrameCount(
            counts,
            unknown,
            cubes,
            confidence,
            (time.perf_counter() - start) * 1000,
            self.tray,
            self._obstructed(log_ratio, points),
            self._squares(doubts, DOUBT_SIZE * TOP_PX),
            tuple(features),
        )

    def colours_of(self, tops: list[np.ndarray]) -> tuple[list[str | None], list[float]]:
        """Per top, the nearest calibrated colour (None if none is near) and how much nearer
        it is than the next (log2 units)."""
        if not tops:
            return [], []
        rows = np.float64(tops)[:, None]
        # distance of each top to each colour: to the nearest of its clicked tops
        d = np.stack(
            [colour_distance(rows, refs[None]).min(axis=1) for refs in self.tops.values()], axis=1
        )
        order = np.argsort(d, axis=1)
        each = np.arange(len(d))
        nearest = d[each, order[:, 0]]
        margins = d[each, order[:, 1]] - nearest if d.shape[1] > 1 else nearest
        names = [
            self.names[k] if near <= UNKNOWN_DOUBLINGS else None
            for k, near in zip(order[:, 0], nearest, strict=True)
        ]
        return names, [float(m) for m in margins]

    @staticmethod
    def features(ps: list[float], left_out: float, margins: list[float], n: int) -> list[float]:
        """The weakest cube (logit), the strongest peak left out (logit), the closest colour
        call (log2 units) and the number of cubes (log)."""
        return [
            min((_logit(p) for p in ps), default=_logit(1.0)),
            _logit(left_out),
            min(margins, default=1.0),
            math.log1p(n),
        ]

    def _squares(self, points: list[tuple[float, float]], size: float) -> np.ndarray:
        """Squares `size` view px wide round view points, as Nx4x2 image px."""
        if not points:
            return np.zeros((0, 4, 2))
        half = size / 2
        square = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        corners = np.concatenate([square + p for p in points])
        return self.view.to_image(corners).reshape(-1, 4, 2)

    def _obstructed(self, log_ratio: np.ndarray, points: list[tuple[float, float]]) -> bool:
        # (on a quarter-size floor: a cube's top is still 3 px, an obstruction far more; without
        # the floor's outer half cube, where the walls' foot and their colour show)
        inset = TOP_PX // 2
        x0, y0, x1, y1 = self.view.floor
        x0, y0, x1, y1 = x0 + inset, y0 + inset, x1 - inset, y1 - inset
        q = OBSTRUCTION_SCALE
        floor = cv2.resize(log_ratio[y0:y1, x0:x1], None, fx=q, fy=q, interpolation=cv2.INTER_AREA)
        h, w = floor.shape[:2]
        px = floor.reshape(-1, 3)
        # Squared distance to the nearest line {colour + s(1,1,1)}, a known colour lit more or
        # less: that of the chromas, as |a|^2 + |b|^2 - 2ab (one matrix product)
        chroma = px - px.mean(axis=1, keepdims=True)
        d2 = (
            (chroma**2).sum(axis=1)[:, None]
            + (self._known**2).sum(axis=1)
            - 2 * chroma @ self._known.T
        )
        mask = (d2.min(axis=1) > UNEXPLAINED_DOUBLINGS**2).reshape(h, w).astype(np.uint8)
        # (an obstruction is a patch at least half a top wide, not a line along a wall's foot)
        half_top = max(1, round(TOP_PX * q / 2))
        mask = cv2.morphologyEx(
            mask, cv2.MORPH_OPEN, np.ones((half_top, half_top), np.uint8), borderValue=0
        )
        r = round(CUBE_REACH * TOP_PX / 2 * q)
        for x, y in points:
            cx, cy = round((x - x0) * q), round((y - y0) * q)
            cv2.rectangle(mask, (cx - r, cy - r), (cx + r, cy + r), 0, -1)
        n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        largest = stats[1:, cv2.CC_STAT_AREA].max() if n > 1 else 0
        return bool(largest > OBSTRUCTED_TOPS * (TOP_PX * q) ** 2)
