"""Building a profile from one frame, the tray's corners and a click on a cube of each colour.

1. The corners give the floor seen from above (vision.geometry checks them).
2. The cube size: the centre net (vision.centres) is shown the tray at a range of scales; the
   middle of the scales at which it is surest of a cube under every click is the cube's. No
   colour, light or tray is assumed: only that the clicks are on cubes.
3. Each click must then be on a cube the net finds, by the counter's own rule: a peak more
   likely a cube than not, at the cube's size and the sizes round it (a click on the floor,
   or on a black cube's shadow, is refused); the colour of that cube's top, relative to the
   floor, is the colour's (vision.counter.top_colour).
"""

from __future__ import annotations

import math

import numpy as np

from calibration.errors import CalibrationError
from calibration.profile import Profile
from calibration.quality import QualityReport, quality_report
from vision.canonical import TOP_PX, canonical_view
from vision.centres import OUTPUT_STRIDE, CentreNet
from vision.counter import CUBE, Confidence, Counter, top_colour
from vision.errors import VisionError
from vision.geometry import check_corners, floor_rect

# The cube sizes tried, as a share of the floor's shorter side: a tray is 12 to 40 cubes
# across (8-12 mm cubes in trays of 120-320 mm).
SMALLEST, LARGEST = 1 / 40, 1 / 6
# Step between sizes tried: the net was trained on cube sizes off by up to 15%.
SIZE_STEP = 1.06
# The net's score counts as flat at sizes where it is within 10% of its best (chosen on the
# tuning set-ups among 50%, 80% and 90%: all three steadier than the best size alone).
NEAR_BEST = 0.9
# So a cube's top is found at every size within two steps (12%) of its own; a shadow or a
# fleck of the floor that looks like one at one size does not.
STEADY_STEPS = 2
# A click is on a cube when it lies on the square of the top the net finds: within half a
# cube edge of its centre along both axes (a click beside a top, on its shadow, is not).
ON_TOP = 0.5


def _check_frame(frame) -> tuple[int, int]:
    if (
        not isinstance(frame, np.ndarray)
        or frame.ndim != 3
        or frame.shape[2] != 3
        or frame.size == 0
    ):
        raise CalibrationError("calibration needs a BGR colour frame")
    return frame.shape[1], frame.shape[0]


def _clicks(samples, size: tuple[int, int]) -> dict[str, np.ndarray]:
    if not samples:
        raise CalibrationError("no colour samples: click at least one cube of each colour")
    points = {}
    for name, pts in samples.items():
        if not name or not name.replace("-", "").replace("_", "").isalnum():
            raise CalibrationError(f"colour name {name!r}: use letters, digits, - or _")
        pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
        if len(pts) == 0:
            raise CalibrationError(f"colour {name}: no click given")
        for x, y in pts:
            if not (0 <= x < size[0] and 0 <= y < size[1]):
                raise CalibrationError(
                    f"click for {name} at ({x:g},{y:g}) is outside the {size[0]}x{size[1]} frame"
                )
        points[name] = pts
    return points


def _click_sureness(net: CentreNet, frame, corners, rect_size, cube_size, clicks) -> np.ndarray:
    """How sure the net is of a cube under each click at this size: its score, not its odds,
    which level off at 1 for every size near the right one."""
    view = canonical_view(corners, rect_size, cube_size)
    p = net.scores(view.log_ratio(frame))
    reach = ON_TOP * TOP_PX / OUTPUT_STRIDE  # output cells
    sure = []
    for x, y in view.to_view(clicks) / OUTPUT_STRIDE:
        i0, i1 = max(0, math.floor(y - reach)), math.ceil(y + reach) + 1
        j0, j1 = max(0, math.floor(x - reach)), math.ceil(x + reach) + 1
        near = p[i0:i1, j0:j1]
        sure.append(float(near.max()) if near.size else 0.0)
    return np.array(sure)


def _sureness(net: CentreNet, frame, corners, rect_size, cube_size, clicks) -> float:
    """How sure the net is, on average over the clicks, of a cube under each at this size."""
    return float(_click_sureness(net, frame, corners, rect_size, cube_size, clicks).mean())


def cube_size_of(net: CentreNet, frame, corners, rect_size, clicks) -> float:
    """The cube's top edge on the floor view of `rect_size`: the middle, on a log scale, of
    the run of sizes round the best at which the net is about as sure as it can be."""
    short = min(rect_size)
    n = math.ceil(math.log(LARGEST / SMALLEST) / math.log(SIZE_STEP))
    sizes = [short * SMALLEST * SIZE_STEP**k for k in range(n + 1)]
    scores = np.array([_sureness(net, frame, corners, rect_size, s, clicks) for s in sizes])
    # The net was trained to find a cube at any size within 15% of its own, so its score is
    # flat over that range and the single best size falls anywhere on it; the middle of the
    # flat run does not.
    best = int(np.argmax(scores))
    lo = hi = best
    while lo > 0 and scores[lo - 1] >= NEAR_BEST * scores[best]:
        lo -= 1
    while hi + 1 < len(sizes) and scores[hi + 1] >= NEAR_BEST * scores[best]:
        hi += 1
    run = slice(lo, hi + 1)
    return float(np.exp(np.average(np.log(sizes[run]), weights=scores[run])))


def build_profile(
    frame: np.ndarray,
    corners_px,
    samples: dict[str, list[tuple[float, float]]],
    camera_controls: dict | None = None,
    net: CentreNet | None = None,
) -> tuple[Profile, QualityReport]:
    """Profile and quality report from one frame; CalibrationError names any bad input."""
    size = _check_frame(frame)
    try:
        corners = check_corners(corners_px, size)
    except VisionError as e:
        raise CalibrationError(str(e)) from None
    points = _clicks(samples, size)
    rect_size = floor_rect(corners)
    all_clicks = np.concatenate(list(points.values()))
    net = net or CentreNet()
    cube_size = cube_size_of(net, frame, corners, rect_size, all_clicks)
    view = canonical_view(corners, rect_size, cube_size)
    log_ratio = view.log_ratio(frame)
    centres, _ = net.centres(log_ratio, CUBE)
    steady = iter(  # per click, in the order of `points`: the net's sureness over sizes
        np.mean(
            [
                _click_sureness(
                    net, frame, corners, rect_size, cube_size * SIZE_STEP**k, all_clicks
                )
                for k in range(-STEADY_STEPS, STEADY_STEPS + 1)
            ],
            axis=0,
        )
    )
    tops = {}
    for name, pts in points.items():
        tops[name] = []
        for (x, y), (vx, vy) in zip(pts, view.to_view(pts), strict=True):
            # (the net's score is not a probability: its peak odds are, as in the counter)
            sure = float(net.odds(next(steady)))
            x0, y0, x1, y1 = view.floor
            if not (x0 <= vx <= x1 and y0 <= vy <= y1):
                raise CalibrationError(
                    f"click for {name} at ({x:g},{y:g}) is outside the tray corners: click "
                    f"the top of a cube on the tray floor"
                )
            near = [c for c in centres if max(abs(c.x - vx), abs(c.y - vy)) <= ON_TOP * TOP_PX]
            if not near or sure < CUBE:
                raise CalibrationError(
                    f"click for {name} at ({x:g},{y:g}) is not on a cube: no cube's top was "
                    f"found there; click on the middle of a cube's top"
                )
            c = min(near, key=lambda c: math.hypot(c.x - vx, c.y - vy))
            tops[name].append(tuple(float(v) for v in top_colour(log_ratio, c.x, c.y)))
    w, h = size
    profile = Profile(
        frame_size=size,
        corners=tuple((float(x) / w, float(y) / h) for x, y in corners),
        rect_size=rect_size,
        cube_size=cube_size,
        tops={name: tuple(t) for name, t in tops.items()},
        clicks={n: tuple((float(x) / w, float(y) / h) for x, y in p) for n, p in points.items()},
        camera_controls=dict(camera_controls or {}),
    )
    return profile, quality_report(profile)


def make_counter(
    profile: Profile,
    frame_size: tuple[int, int],
    net: CentreNet | None = None,
    confidence: Confidence | None = None,
) -> Counter:
    """A counter for frames of `frame_size` (width, height), at any resolution; `net` and
    `confidence`: models to use instead of the shipped ones."""
    corners = profile.corners_px(frame_size)
    try:
        corners = check_corners(corners, frame_size)
    except VisionError as e:
        raise CalibrationError(
            f"calibration does not fit a {frame_size[0]}x{frame_size[1]} frame: {e}"
        ) from None
    # (the view depends on the cube's share of the floor, not on the frame's resolution)
    view = canonical_view(corners, profile.rect_size, profile.cube_size)
    return Counter(view, profile.tops, frame_size, net, confidence)
