"""Training the counter's models on built scene folders (`companion train`; the `train` extra).

1. Examples: each set-up's canonical view is made from its clicked tray corners at its true
   cube size (the truth's, so the net learns what a cube of the calibrated size looks like,
   not an earlier net's guess of it); each scene becomes that view of its log ratio (uint8,
   vision.canonical.encode) and the view points to mark: every cube not fully hidden, where
   it is seen (its top's middle, or for a cube mostly under another, the middle of what
   shows of it).
2. The centre net (PyTorch) learns a heatmap of those points on random crops, drawn equally
   from each folder given, under changes no scene source should matter for: light level and
   colour, a gradient across the tray, contrast, blur, noise, the cube size off by up to 15%,
   rotation and mirroring; with things that are no cube laid over some crops (a flat shape of
   any colour, wider than two cubes: a card, a hand) and with cast shadows (less light, soft
   edges) over others. The loss is CenterNet's focal loss (Zhou et al., 2019).
3. Exported to ONNX, and checked to give PyTorch's answers through onnxruntime.
4. The peak odds: on the scenes of other folders (set-ups the net never saw, each folder
   weighing the same), which share of the net's peaks at each score lay on a cube; an isotonic
   regression (scikit-learn) makes that a rising curve (vision/models/peaks.json), one for
   the peaks over the floor and one for those over the wall round it.
5. The confidence: the counter with the new net and its odds counts the scenes of those
   folders and a logistic regression (scikit-learn) learns, from the counter's features,
   whether a count was exact.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import time
from dataclasses import dataclass

import cv2
import numpy as np

from calibration import build_profile, make_counter
from calibration.errors import CalibrationError
from companion.errors import CompanionError
from vision.canonical import TOP_PX, CanonicalView, canonical_view, decode, encode
from vision.centres import (
    FLOOR,
    OUTPUT_STRIDE,
    PEAK_ODDS,
    RAW_SCORE,
    WALL,
    CentreNet,
    PeakOdds,
)
from vision.counter import Counter
from vision.errors import VisionError
from vision.geometry import check_corners, floor_rect

CROP = 96  # view px per training crop (8 cubes)
SPREAD = 1.0  # Gaussian spread of a mark on the net's output, cells
BATCH = 16
# Share of crops centred on a cube another rests on (they are rare, and the hardest).
COVERED_CROPS = 0.35
CUBE_CROPS = 0.7  # share of the other crops centred on some cube
# Share of crops with a thing that is no cube laid over them, and its least and largest
# extent in cube edges (a hand is 3-6 cubes wide, a card 6 by 9).
NOT_CUBE_CROPS = 0.25
NOT_CUBE_EDGES = (2.5, 9.0)
# Share of crops with a cast shadow laid over them, how much light it takes away (doublings)
# and its penumbra's width (a Gaussian's sigma, in top edges).
SHADOW_CROPS = 0.3
SHADOW_DOUBLINGS = (0.3, 2.0)
PENUMBRA_TOPS = (0.03, 0.25)
# Peaks scored this low are left out of the odds' fit: (nearly) every place is such a peak.
ODDS_FROM = 0.01
# While the odds are fitted, calibration takes a click wherever the net has a peak where the
# counter looks (scored about ODDS_FROM or more): the odds that will judge clicks are what is
# being fitted, and the raw score, not a probability, would refuse the set-ups of a net that
# scores low and leave them out of the fit.
ANY_PEAK = PeakOdds((0.0, ODDS_FROM), (0.0, 1.0))


@dataclass(frozen=True)
class Example:
    view: np.ndarray  # HxWx3 uint8, encoded log ratio
    marks: np.ndarray  # Nx2 view px
    covered: np.ndarray  # N bools: the cube has another resting on it


def _setups(folder: pathlib.Path):
    setups = sorted(folder.glob("setup-*"))
    if not setups:
        raise CompanionError(f"{folder}: no set-up folders (setup-NNNNNN) in it")
    for d in setups:
        try:
            yield d, json.loads((d / "truth.json").read_text())
        except (OSError, ValueError) as e:
            raise CompanionError(f"{d}: cannot read truth.json: {e}") from None


def _calibrated(d: pathlib.Path, truth: dict, net: CentreNet, clicks_by: CentreNet) -> Counter:
    """The set-up's counter with `net`, calibrated from its clicks as a user's would be, each
    click judged by the odds of `clicks_by`."""
    cal = truth["calibration"]
    frame = cv2.imread(str(d / cal["file"]))
    profile, _ = build_profile(frame, cal["corners"], cal["clicks"], net=clicks_by)
    return make_counter(profile, (frame.shape[1], frame.shape[0]), net)


def true_view(truth: dict, frame_size: tuple[int, int]) -> CanonicalView:
    """The set-up's canonical view at its true cube size: its floor from the clicked tray
    corners, a cube's edge (the truth's, in mm on a tray of the truth's size) TOP_PX wide."""
    corners = check_corners(truth["calibration"]["corners"], frame_size)
    rect = floor_rect(corners)
    tray_w, tray_d = truth["setup"]["tray_mm"]
    cube = truth["setup"]["cube_mm"] * (rect[0] / tray_w + rect[1] / tray_d) / 2
    return canonical_view(corners, rect, cube)


def marks(view: CanonicalView, truth: dict, cubes: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """The view points to mark for `cubes` (none fully hidden): where each is seen (the
    truth's `top`: the middle of its top face's visible part, or of whatever shows of a cube
    mostly under another), and which cubes have another resting on them."""
    edge = truth["setup"]["cube_mm"]
    covered = [
        any(
            o is not c
            and o["on"] == "cube"
            and abs(o["position"][2] - c["position"][2] - edge) < 0.4 * edge
            and math.hypot(o["position"][0] - c["position"][0], o["position"][1] - c["position"][1])
            < 0.7 * edge
            for o in cubes
        )
        for c in cubes
    ]
    points = view.to_view([c["top"] for c in cubes]) if cubes else np.zeros((0, 2))
    return np.array(points, np.float32).reshape(-1, 2), np.array(covered, bool)


def _calibrated_setups(folder: pathlib.Path, net: CentreNet, say, clicks_by=None):
    """(folder, truth, counter) of each set-up calibration accepts (clicks judged by
    `clicks_by`, by default `net`); the others are named."""
    for d, truth in _setups(folder):
        try:
            yield d, truth, _calibrated(d, truth, net, clicks_by or net)
        except CalibrationError as e:
            say(f"{d.name}: calibration refused, left out: {e}")


def examples(folder: pathlib.Path) -> list[Example]:
    out = []
    for d, truth in _setups(folder):
        view = None
        for scene in [*truth["scenes"], truth["calibration"]]:
            frame = cv2.imread(str(d / scene["file"]))
            if frame is None:
                raise CompanionError(f"{d / scene['file']}: not an image")
            if view is None:
                try:
                    view = true_view(truth, (frame.shape[1], frame.shape[0]))
                except VisionError as e:
                    raise CompanionError(f"{d}: {e}") from None
            cubes = [c for c in scene["cubes"] if not c["hidden"]]
            points, covered = marks(view, truth, cubes)
            out.append(Example(encode(view.log_ratio(frame)), points, covered))
    return out


def _heatmap(size: int, points: np.ndarray) -> np.ndarray:
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    m = np.zeros((size, size), np.float32)
    for x, y in points:
        m = np.maximum(m, np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * SPREAD**2)))
        i, j = int(round(y)), int(round(x))
        if 0 <= i < size and 0 <= j < size:
            m[i, j] = 1.0  # the focal loss's positives: exactly one cell per mark
    return m


def crop(example: Example, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One augmented training crop: the net's input (3xCROPxCROP) and target heatmap."""
    scale = rng.uniform(0.85, 1.18)  # the calibrated cube size off by up to 15%
    view = cv2.resize(decode(example.view), None, fx=scale, fy=scale)
    points = example.marks * scale
    h, w = view.shape[:2]
    if h < CROP or w < CROP:
        view = cv2.copyMakeBorder(
            view, 0, max(0, CROP - h), 0, max(0, CROP - w), cv2.BORDER_REPLICATE
        )
        h, w = view.shape[:2]
    centre = None
    if example.covered.any() and rng.random() < COVERED_CROPS:
        centre = points[rng.choice(np.flatnonzero(example.covered))]
    elif len(points) and rng.random() < CUBE_CROPS:
        centre = points[rng.integers(len(points))]
    if centre is None:
        x0, y0 = int(rng.integers(0, w - CROP + 1)), int(rng.integers(0, h - CROP + 1))
    else:
        x0 = int(np.clip(centre[0] - rng.integers(16, CROP - 16), 0, w - CROP))
        y0 = int(np.clip(centre[1] - rng.integers(16, CROP - 16), 0, h - CROP))
    x = view[y0 : y0 + CROP, x0 : x0 + CROP]
    points = points - [x0, y0]
    if rng.random() < NOT_CUBE_CROPS:
        x, points = not_a_cube(x, points, rng)
    if rng.random() < SHADOW_CROPS:
        x = cast_shadow(x, points, rng)
    # light: contrast, a colour cast, a gradient across the crop, blur, sensor noise
    x = x * rng.uniform(0.8, 1.2) + rng.normal(0, 0.08, 3).astype(np.float32)
    gy, gx = np.mgrid[0:CROP, 0:CROP].astype(np.float32) / CROP - 0.5
    x = x + (rng.normal(0, 0.15) * gx + rng.normal(0, 0.15) * gy)[..., None]
    if rng.random() < 0.4:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.3, 1.0))
    x = x + rng.normal(0, rng.uniform(0, 0.06), x.shape).astype(np.float32)
    # output cell i covers view px s*i .. s*i+s-1
    target = _heatmap(CROP // OUTPUT_STRIDE, (points - 0.5) / OUTPUT_STRIDE)
    if rng.random() < 0.5:
        x, target = x[:, ::-1], target[:, ::-1]
    k = int(rng.integers(4))
    x, target = np.rot90(x, k), np.rot90(target, k)
    return np.ascontiguousarray(x.transpose(2, 0, 1)), np.ascontiguousarray(target)[None]


def not_a_cube(x: np.ndarray, points: np.ndarray, rng: np.random.Generator):
    """A thing that is no cube (a card or a hand: a flat rectangle or oval of any colour, a
    little shaded) laid over the crop `x` (log ratio); the marks it covers are dropped."""
    lo, hi = NOT_CUBE_EDGES
    size = tuple(float(v) for v in rng.uniform(lo, hi, 2) * TOP_PX)
    box = (tuple(float(v) for v in rng.uniform(0, CROP, 2)), size, float(rng.uniform(0, 180)))
    mask = np.zeros(x.shape[:2], np.uint8)
    if rng.random() < 0.5:
        cv2.fillConvexPoly(mask, np.int32(np.round(cv2.boxPoints(box) * 16)), 255, cv2.LINE_AA, 4)
    else:
        cv2.ellipse(mask, box, 255, -1, cv2.LINE_AA)
    alpha = (mask.astype(np.float32) / 255)[..., None]
    # its light against the floor's: from a black card to a white one, any hue
    colour = rng.uniform(-3.0, 1.5) + rng.normal(0, 0.5, 3)
    gy, gx = np.mgrid[0 : x.shape[0], 0 : x.shape[1]].astype(np.float32) / CROP - 0.5
    shade = (rng.normal(0, 0.3) * gx + rng.normal(0, 0.3) * gy)[..., None]
    x = x * (1 - alpha) + (colour + shade).astype(np.float32) * alpha
    inside = [
        0 <= int(py) < CROP and 0 <= int(px) < CROP and mask[int(py), int(px)] > 127
        for px, py in points
    ]
    return x, points[~np.array(inside, bool)].reshape(-1, 2)


def cast_shadow(x: np.ndarray, points: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A shadow laid over the crop `x` (log ratio), soft-edged: less light, by the same share
    in the three channels but for a slight tint (the sky's light fills it). Cast by one of the
    cubes at `points` (from it, away from the light, its own top left lit) or by something
    beyond the crop (a wall, the tower, a hand). Every cube stays a cube, shaded or not."""
    foot = None
    if len(points) and rng.random() < 0.5:
        # a cube's: about its width, and as long as its height over the light's tangent
        foot = points[rng.integers(len(points))]
        angle = rng.uniform(0, 2 * np.pi)
        length = rng.uniform(0.5, 3.0) * TOP_PX
        middle = foot + (length / 2) * np.array([np.cos(angle), np.sin(angle)])
        size = (length + TOP_PX, rng.uniform(1.0, 1.4) * TOP_PX)
        box = (tuple(float(v) for v in middle), size, float(np.degrees(angle)))
    else:
        edges = rng.uniform(1.0, 8.0, 2) * TOP_PX
        box = (tuple(float(v) for v in rng.uniform(0, CROP, 2)), tuple(edges), rng.uniform(0, 180))
    mask = np.zeros(x.shape[:2], np.float32)
    cv2.fillConvexPoly(mask, np.int32(np.round(cv2.boxPoints(box) * 16)), 1.0, cv2.LINE_AA, 4)
    if foot is not None:
        # (its top, of any turn, lies within the circle through its corners)
        centre = tuple(int(round(v)) for v in foot)
        cv2.circle(mask, centre, int(round(TOP_PX / math.sqrt(2))), 0.0, -1, cv2.LINE_AA)
    mask = cv2.GaussianBlur(mask, (0, 0), rng.uniform(*PENUMBRA_TOPS) * TOP_PX)
    less = rng.uniform(*SHADOW_DOUBLINGS) + rng.normal(0, 0.05, 3)
    return (x - mask[..., None] * less).astype(np.float32)


def centre_net(width: int = 16):
    """The net (PyTorch): three halvings, two skip joins, output at half resolution."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    def conv(i, o, s=1):
        return nn.Sequential(
            nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)
        )

    w = width

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.s2 = nn.Sequential(conv(3, w, 2), conv(w, w))
            self.s4 = nn.Sequential(conv(w, 2 * w, 2), conv(2 * w, 2 * w))
            self.s8 = nn.Sequential(conv(2 * w, 3 * w, 2), conv(3 * w, 3 * w), conv(3 * w, 3 * w))
            self.u4 = nn.Sequential(conv(5 * w, 2 * w), conv(2 * w, 2 * w))
            self.u2 = nn.Sequential(conv(3 * w, w), conv(w, w))
            self.head = nn.Conv2d(w, 1, 1)
            self.head.bias.data.fill_(-4.0)  # start sure of no cube anywhere

        def forward(self, x):
            a = self.s2(x)
            b = self.s4(a)
            c = self.s8(b)
            up = F.interpolate(c, scale_factor=2.0, mode="nearest")
            d = self.u4(torch.cat([up, b], 1))
            return self.head(self.u2(torch.cat([F.interpolate(d, scale_factor=2.0), a], 1)))

    torch.manual_seed(0)
    return Net()


def focal_loss(logits, target):
    import torch

    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    positive = target.ge(0.999).float()
    lp = -torch.log(p) * (1 - p) ** 2 * positive
    ln = -torch.log(1 - p) * p**2 * (1 - target) ** 4 * (1 - positive)
    return (lp.sum() + ln.sum()) / positive.sum().clamp(min=1)


def train_centres(sets: list[list[Example]], steps: int, seed: int = 0, say=print):
    import torch

    rng = np.random.default_rng(seed)
    # the cores this process may use (taskset, a container's limit; where the system cannot
    # say, as on macOS, all of them): PyTorch may default to one
    if hasattr(os, "sched_getaffinity"):
        torch.set_num_threads(len(os.sched_getaffinity(0)))
    else:
        torch.set_num_threads(os.cpu_count() or 1)
    net = centre_net()
    opt = torch.optim.AdamW(net.parameters(), 2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 4e-3, total_steps=steps, pct_start=0.15)
    start, running = time.time(), None
    for step in range(steps):
        batch = [
            crop(sets[i % len(sets)][rng.integers(len(sets[i % len(sets)]))], rng)
            for i in range(BATCH)
        ]
        x = torch.tensor(np.stack([b[0] for b in batch]))
        y = torch.tensor(np.stack([b[1] for b in batch]))
        loss = focal_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        running = loss.item() if running is None else 0.98 * running + 0.02 * loss.item()
        if step % 500 == 0 or step == steps - 1:
            say(f"step {step + 1}/{steps}: loss {running:.3f}, {time.time() - start:.0f} s")
    return net.eval()


def export_onnx(net, path: pathlib.Path) -> None:
    """Write the net as ONNX and check onnxruntime gives PyTorch's answers on a test view."""
    import torch

    probe = torch.randn(1, 3, 64, 96)
    torch.onnx.export(
        net,
        probe,
        str(path),
        input_names=["view"],
        output_names=["centres"],
        dynamic_axes={"view": {2: "height", 3: "width"}, "centres": {2: "h", 3: "w"}},
        opset_version=17,
        dynamo=False,
    )
    with torch.no_grad():
        want = torch.sigmoid(net(probe)).numpy()[0, 0]
    got = CentreNet(path, RAW_SCORE).scores(probe.numpy()[0].transpose(1, 2, 0))
    if float(np.abs(got - want).max()) > 1e-3:
        raise CompanionError(f"{path}: onnxruntime does not give PyTorch's answers")


def peak_rows(folder: pathlib.Path, raw: CentreNet, any_peak: CentreNet, say=print):
    """Per peak of the net's score (at least ODDS_FROM, anywhere in the view as the counter
    looks) in the scenes of `folder`: its score, whether it lay on a cube (each cube's mark
    matched to one peak at most, within half a top's edge) and whether it lay over the wall
    round the floor. `raw` is the net with RAW_SCORE odds, `any_peak` the same net with
    ANY_PEAK odds: each set-up is calibrated from its clicks as the counter's is, a click taken
    wherever the net has a peak."""
    from scipy.optimize import linear_sum_assignment  # (scikit-learn's own dependency)

    scores, hits, wall = [], [], []
    for d, truth, counter in _calibrated_setups(folder, raw, say, any_peak):
        for scene in truth["scenes"]:
            frame = cv2.imread(str(d / scene["file"]))
            peaks, _ = counter.net.centres(
                counter.view.log_ratio(frame), ODDS_FROM, counter.view.floor
            )
            cubes = [c for c in scene["cubes"] if not c["hidden"]]
            points, _ = marks(counter.view, truth, cubes)
            hit = np.zeros(len(peaks), bool)
            if len(peaks) and len(points):
                at = np.array([(c.x, c.y) for c in peaks])
                apart = np.hypot(*(at[:, None] - points[None]).transpose(2, 0, 1))
                rows, cols = linear_sum_assignment(apart)
                hit[rows[apart[rows, cols] <= TOP_PX / 2]] = True
            scores += [c.score for c in peaks]
            hits += list(hit)
            wall += [c.wall for c in peaks]  # (judged as the counter judges it)
    return np.array(scores), np.array(hits, bool), np.array(wall, bool)


def fit_peak_odds(folders: list[tuple[np.ndarray, np.ndarray]], where: str = FLOOR) -> dict:
    """The rising curve from a peak's score to the share of such peaks that were cubes, from
    (scores, hits) of the peaks `where` (FLOOR or WALL) per folder, each folder weighing the
    same."""
    from sklearn.isotonic import IsotonicRegression

    folders = [(s, h) for s, h in folders if len(s)]
    if not folders:
        raise CompanionError(
            f"no peak was found over the {where}: every set-up's calibration was refused"
        )
    scores = np.concatenate([s for s, _ in folders])
    hits = np.concatenate([h for _, h in folders])
    # (over the wall, in a few set-ups, no peak may have been a cube: then none is taken for one)
    if hits.all() or (not hits.any() and where == FLOOR):
        raise CompanionError(
            f"the peak odds over the {where} need peaks both on cubes and off them to learn from"
        )
    weights = np.concatenate([np.full(len(s), 1 / len(s)) for s, _ in folders])
    fit = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    fit.fit(scores, hits.astype(float), sample_weight=weights)
    return {
        "scores": [round(float(v), 6) for v in fit.X_thresholds_],
        "odds": [round(float(v), 6) for v in fit.y_thresholds_],
    }


def confidence_rows(folder: pathlib.Path, net: CentreNet, say=print):
    """The counter's features and whether its count was exact, per scene of `folder`."""
    rows, exact = [], []
    for d, truth, counter in _calibrated_setups(folder, net, say):
        for scene in truth["scenes"]:
            result = counter.count(cv2.imread(str(d / scene["file"])))
            want = {c: n for c, n in scene["visible_counts"].items() if n}
            got = {c: n for c, n in result.counts.items() if n}
            rows.append(result.features)
            exact.append(got == want and not result.unknown)
    return np.array(rows), np.array(exact)


def fit_confidence(rows: np.ndarray, exact: np.ndarray) -> dict:
    from sklearn.linear_model import LogisticRegression

    if not len(exact):
        raise CompanionError("no scene was counted: every set-up's calibration was refused")
    if exact.all() or not exact.any():
        raise CompanionError("the confidence needs both exact and wrong counts to learn from")
    model = LogisticRegression(C=1.0, max_iter=1000).fit(rows, exact)
    return {"weights": [float(w) for w in model.coef_[0]], "bias": float(model.intercept_[0])}


def train(
    scenes: list[pathlib.Path],
    calibrate_on: list[pathlib.Path],
    steps: int,
    output: pathlib.Path,
    say=print,
) -> None:
    """Train the net on `scenes` into `output` (with no `scenes`, keep the net there), then
    fit its peak odds and the confidence on `calibrate_on`."""
    try:
        import sklearn  # noqa: F401

        if scenes:
            import torch  # noqa: F401
    except ImportError:
        raise CompanionError(
            "training needs the train extra: pip install -e '.[train]' (PyTorch, scikit-learn)"
        ) from None
    model = output / "centres.onnx"
    if scenes:
        sets = []
        for folder in scenes:
            sets.append(examples(folder))
            say(f"{folder}: {len(sets[-1])} scenes")
        net = train_centres(sets, steps, say=say)
        output.mkdir(parents=True, exist_ok=True)
        export_onnx(net, model)
    raw, any_peak = CentreNet(model, RAW_SCORE), CentreNet(model, ANY_PEAK)
    peaks = [peak_rows(folder, raw, any_peak, say) for folder in calibrate_on]
    odds = {
        where: fit_peak_odds([(s[w == on], h[w == on]) for s, h, w in peaks], where)
        for where, on in ((FLOOR, False), (WALL, True))
    }
    (output / PEAK_ODDS).write_text(json.dumps(odds, indent=1) + "\n")
    trained = CentreNet(model)  # with the odds just written beside it
    rows, exact = [], []
    for folder in calibrate_on:
        r, e = confidence_rows(folder, trained, say)
        rows.append(r)
        exact.append(e)
    fitted = fit_confidence(np.concatenate(rows).reshape(-1, 4), np.concatenate(exact))
    (output / "confidence.json").write_text(json.dumps(fitted, indent=1) + "\n")
    say(f"wrote {model}, {output / PEAK_ODDS} and {output / 'confidence.json'}")
