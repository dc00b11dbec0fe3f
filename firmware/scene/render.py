"""Drawing cubes (and a hand) over the cached background, then the camera's own marks:
lens softness, vignetting, brightness flicker, sensor noise, JPEG loss."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from firmware.scene import cubes
from firmware.scene.background import NOISE_MARGIN, VIGNETTE_ONE, static
from firmware.scene.layout import CubePose
from firmware.scene.lighting import Lighting, darken, floor_shadow, project_points, rgb_to_bgr8
from firmware.scene.setup import TableSetup


@dataclass
class CubeTruth:
    colour: str
    centre: tuple[float, float]  # image px, centre of the visible part of the cube's top face
    level: int  # 1 on the floor, 2 resting on other cubes
    leaning: bool
    visible: float  # share of the top face in view, 0..1


@dataclass
class Scene:
    image: np.ndarray  # BGR uint8
    counts: dict[str, int]  # ground truth per colour (zeros omitted)
    corners: np.ndarray  # 4x2 float, tray floor corners in image px, clockwise from top-left
    cubes: list[CubeTruth]
    clicks: dict[
        str, list[tuple[float, float]]
    ]  # per colour present: points on clearly visible tops
    poses: list[CubePose] = field(default_factory=list)

    def bare_floor(self) -> tuple[float, float]:
        """Where a click misses every cube: the point farthest from all cubes on a grid
        over the tray, 30 px or more inside its corners."""
        c = np.asarray(self.corners, np.float32)
        grid = np.stack(
            np.meshgrid(
                np.linspace(c[:, 0].min() + 40, c[:, 0].max() - 40, 25),
                np.linspace(c[:, 1].min() + 40, c[:, 1].max() - 40, 25),
            ),
            -1,
        ).reshape(-1, 2)
        grid = grid[[cv2.pointPolygonTest(c, (float(x), float(y)), True) > 30 for x, y in grid]]
        centres = np.array([cube.centre for cube in self.cubes]).reshape(-1, 2)
        far = np.linalg.norm(grid[:, None] - centres[None], axis=2).min(axis=1, initial=np.inf)
        x, y = grid[np.argmax(far)]
        return float(x), float(y)


@dataclass(frozen=True)
class Hand:
    """A hand and forearm as 3D capsules (world mm): (start, end, radius) each."""

    capsules: tuple[tuple[tuple[float, float, float], tuple[float, float, float], float], ...]
    skin: tuple[float, float, float] = (0.45, 0.27, 0.19)


def counts_of(poses: Sequence[CubePose]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in poses:
        out[p.colour] = out.get(p.colour, 0) + 1
    return dict(sorted(out.items()))


def render(
    setup: TableSetup,
    poses: Sequence[CubePose],
    rng: np.random.Generator,
    size: tuple[int, int] = (640, 480),
) -> Scene:
    """A camera frame of the tray with these cubes, and its ground truth."""
    size = (int(size[0]), int(size[1]))
    image, labels, tops = draw(setup, poses, rng, size, labels=True)
    truth = _truth(poses, labels, tops)
    return Scene(
        image,
        counts_of(poses),
        static(setup, size).corners.copy(),
        truth,
        _clicks(truth, poses, labels, tops),
        list(poses),
    )


def draw(
    setup: TableSetup,
    poses: Sequence[CubePose],
    rng: np.random.Generator,
    size: tuple[int, int],
    gain: float = 1.0,
    hand: Hand | None = None,
    labels: bool = False,
):
    """The camera frame: `gain` scales brightness (flicker), `hand` is drawn over the tray.

    With labels=True returns (image, labels, tops): an int32 image of cube*8+face+1 and
    each cube's (top-face polygon, face index), for the truth.
    """
    st = static(setup, size)
    w, h = size
    image = st.image.copy()
    light = Lighting(setup)
    label_img = np.zeros((h, w), np.int32) if labels else None
    verts, rot = cubes.vertices(poses)
    if len(poses) or hand:
        _shadows(image, verts, hand, light, st)
    tops = cubes.paint(image, setup, poses, verts, rot, light, st.K, st.R, st.C, label_img)
    if len(poses):
        np.copyto(image, st.image, where=st.front[..., None])
        if labels:
            label_img[st.front] = 0
    if hand is not None:
        _draw_hand(image, hand, light, st)
    image = _camera(image, setup, rng, gain, st)
    return (image, label_img, tops) if labels else image


def _shadows(image, verts: np.ndarray, hand, light, st) -> None:
    h, w = image.shape[:2]
    scale = 0.5  # shadows are soft: draw them at half resolution
    mask = np.zeros((h // 2, w // 2), np.uint8)
    cubes.cast_shadows(mask, verts, light, st.K, st.R, st.C, scale)
    if hand is not None:
        for a, b, r in hand.capsules:
            ends = floor_shadow(light.lamp, np.array([a, b], float))
            px = project_points(st.K, st.R, st.C, ends) * scale
            thick = _radius_px(st, np.array(b, float) * [1, 1, 0], r * 1.1) * scale
            cv2.line(
                mask,
                tuple(np.round(px[0]).astype(int)),
                tuple(np.round(px[1]).astype(int)),
                255,
                max(1, int(2 * thick)),
                cv2.LINE_AA,
            )
    mask = cv2.GaussianBlur(mask, (0, 0), 1.2 * light.softness * w / 640)
    mask = cv2.resize(mask, (w, h), interpolation=cv2.INTER_LINEAR)
    darken(image, mask, light.shadow_ratio())


def _radius_px(st, point: np.ndarray, radius: float) -> float:
    depth = ((point - st.C) @ st.R.T)[2]
    return radius * st.K[0, 0] / max(depth, 1.0)


def _draw_hand(image, hand: Hand, light: Lighting, st) -> None:
    up = np.array([0.2, -0.3, 1.0])
    base = np.array(hand.skin) * light.irradiance(np.zeros(3), up / np.linalg.norm(up))
    colour = rgb_to_bgr8(base).tolist()
    dark = rgb_to_bgr8(base * 0.7).tolist()
    for a, b, r in hand.capsules:
        ends = project_points(st.K, st.R, st.C, np.array([a, b], float))
        thick = max(2, int(2 * _radius_px(st, np.array(b, float), r)))
        p0, p1 = (tuple(np.round(e).astype(int)) for e in ends)
        cv2.line(image, p0, p1, dark, thick + 2, cv2.LINE_AA)
        cv2.line(image, p0, p1, colour, thick, cv2.LINE_AA)


def _camera(image, setup: TableSetup, rng, gain: float, st) -> np.ndarray:
    h, w = image.shape[:2]
    sigma = setup.blur * w / 640
    image = cv2.GaussianBlur(image, (0, 0), sigma) if sigma > 0.05 else image
    cv2.multiply(image, st.vignette, image, scale=gain / VIGNETTE_ONE)
    dy, dx = rng.integers(0, 2 * NOISE_MARGIN + 1, 2)
    image = cv2.add(image, st.noise[dy : dy + h, dx : dx + w], dtype=cv2.CV_8U)
    quality = int(np.clip(setup.jpeg_quality + rng.integers(-3, 4), 30, 100))
    _, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def _truth(poses, labels: np.ndarray, tops) -> list[CubeTruth]:
    if not poses:
        return []
    count = np.bincount(labels.ravel(), minlength=len(poses) * 8 + 1)
    out = []
    for i, p in enumerate(poses):
        poly, f = tops[i]
        code = i * 8 + f + 1
        area = max(cv2.contourArea(poly.astype(np.float32)), 1.0)
        visible = min(count[code] / area, 1.0)
        # top mostly hidden: the middle of what is seen of the cube instead
        codes = (code, code) if visible >= 0.15 else (i * 8 + 1, i * 8 + 6)
        out.append(
            CubeTruth(
                p.colour, _inner_point(labels, codes, poly), p.level, p.leaning, float(visible)
            )
        )
    return out


def _inner_point(
    labels: np.ndarray, codes: tuple[int, int], poly: np.ndarray
) -> tuple[float, float]:
    """The centroid of the pixels labelled codes[0]..codes[1] if it lies well inside them,
    else the pixel deepest inside them (a partly covered face need not be convex)."""
    h, w = labels.shape
    x0, y0 = np.maximum(np.floor(poly.min(0)).astype(int) - 30, 0)
    x1, y1 = np.minimum(np.ceil(poly.max(0)).astype(int) + 30, (w, h))
    window = labels[y0:y1, x0:x1]
    mask = ((window >= codes[0]) & (window <= codes[1])).astype(np.uint8)
    ys, xs = np.nonzero(mask)
    if not len(xs):
        return (float(poly[:, 0].mean()), float(poly[:, 1].mean()))
    cx, cy = xs.mean(), ys.mean()
    ix, iy = int(round(cx)), int(round(cy))
    if mask[max(iy - 2, 0) : iy + 3, max(ix - 2, 0) : ix + 3].sum() == 25:
        return (float(cx + x0), float(cy + y0))
    depth = cv2.distanceTransform(np.pad(mask, 1), cv2.DIST_L2, 3)[1:-1, 1:-1]
    iy, ix = np.unravel_index(np.argmax(depth), depth.shape)
    return (float(ix + x0), float(iy + y0))


def _clicks(cubes: list[CubeTruth], poses, labels: np.ndarray, tops, per_colour: int = 3):
    """Points a user would tap: centres of fully visible, flat top faces, a few per colour."""
    h, w = labels.shape
    clicks: dict[str, list[tuple[float, float]]] = {}
    ranked = sorted(range(len(cubes)), key=lambda i: (poses[i].leaning, -cubes[i].visible))
    for i in ranked:
        cube = cubes[i]
        chosen = clicks.setdefault(cube.colour, [])
        if len(chosen) >= per_colour:
            continue
        x, y = (int(round(v)) for v in cube.centre)
        code = i * 8 + tops[i][1] + 1
        y0, y1, x0, x1 = max(y - 2, 0), min(y + 3, h), max(x - 2, 0), min(x + 3, w)
        clear = cube.visible >= 0.85 and np.all(labels[y0:y1, x0:x1] == code)
        if clear or not chosen and cube.visible >= 0.4:
            chosen.append(cube.centre)
    return {colour: pts for colour, pts in sorted(clicks.items()) if pts}
