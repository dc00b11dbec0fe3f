"""The still part of a frame: table, tray walls and floor, lit by the lamp; plus the
per-set-up sensor tables (vignetting, a noise tile). Cached per set-up and size, so a
live frame only pays for the cubes."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from firmware.scene.setup import TABLE_DROP, TableSetup, light_rgb
from firmware.scene.textures import TEXTURES

NOISE_MARGIN = 24  # px the noise tile is shifted by, per frame


@dataclass(frozen=True, eq=False)
class Static:
    image: np.ndarray  # BGR uint8, lit table and tray, no sensor effects
    vignette: np.ndarray  # uint8 HxWx3, 255 = no loss, for cv2.multiply(scale=gain/255)
    noise: np.ndarray  # int16 tile (H + 2M) x (W + 2M) x 3
    corners: np.ndarray  # 4x2 floor corners, image px, clockwise from top-left
    front: np.ndarray  # bool HxW: walls between the camera and the floor, drawn again over cubes
    K: np.ndarray
    R: np.ndarray
    C: np.ndarray


class Lighting:
    """Radiance of surfaces under the set-up's lamp and ambient light, in camera units."""

    def __init__(self, setup: TableSetup):
        light = setup.light
        self.lamp = light.position()
        self.colour = light_rgb(setup)
        self.ambient = light.ambient * (0.5 * self.colour + 0.5)
        self.strength = light.strength
        self.distance = light.distance
        self.exposure = setup.exposure

    def irradiance(self, points: np.ndarray, normals: np.ndarray) -> np.ndarray:
        """(..., 3) linear RGB light arriving at points with the given normals."""
        to_lamp = self.lamp - points
        dist = np.linalg.norm(to_lamp, axis=-1, keepdims=True)
        cos = np.clip(np.sum(normals * to_lamp / dist, axis=-1, keepdims=True), 0, None)
        direct = self.strength * cos * (self.distance / dist) ** 2
        return (self.ambient + direct * self.colour) * self.exposure

    def shadow_ratio(self) -> float:
        """How much light a floor in a cast shadow keeps (only ambient), at the tray centre."""
        up = np.array([0, 0, 1.0])
        full = self.irradiance(np.zeros(3), up).mean()
        return float(self.ambient.mean() * self.exposure / full)


def to_srgb(linear: np.ndarray) -> np.ndarray:
    return np.clip(linear, 0, 1) ** (1 / 2.2) * 255


def rgb_to_bgr8(rgb: np.ndarray) -> np.ndarray:
    return np.clip(to_srgb(rgb)[..., ::-1] + 0.5, 0, 255).astype(np.uint8)


def plane_homography(K, R, C, z: float) -> np.ndarray:
    """Homography taking world (X, Y) on the plane Z=z to image px."""
    t = R @ (np.array([0, 0, z]) - C)
    return K @ np.column_stack([R[:, 0], R[:, 1], t])


def wall_boxes(setup: TableSetup) -> list[tuple[np.ndarray, np.ndarray]]:
    """The four tray walls as (min corner, max corner) boxes, floor base included."""
    t = setup.tray
    w, d, k, top, low = t.width / 2, t.depth / 2, t.wall_thickness, t.wall_height, -TABLE_DROP
    return [
        (np.array([-w - k, d, low]), np.array([w + k, d + k, top])),
        (np.array([-w - k, -d - k, low]), np.array([w + k, -d, top])),
        (np.array([-w - k, -d, low]), np.array([-w, d, top])),
        (np.array([w, -d, low]), np.array([w + k, d, top])),
    ]


BOX_FACES = (  # vertex indices (bit 0 = x, bit 1 = y, bit 2 = z max) and outward normal
    ((4, 5, 7, 6), (0, 0, 1)), ((0, 2, 3, 1), (0, 0, -1)),
    ((0, 4, 6, 2), (-1, 0, 0)), ((1, 3, 7, 5), (1, 0, 0)),
    ((0, 1, 5, 4), (0, -1, 0)), ((2, 6, 7, 3), (0, 1, 0)),
)


def box_vertices(lo, hi) -> np.ndarray:
    return np.array([[(hi if i & 1 else lo)[0], (hi if i & 2 else lo)[1], (hi if i & 4 else lo)[2]]
                     for i in range(8)])


def project_points(K, R, C, pts: np.ndarray) -> np.ndarray:
    cam = (pts - C) @ R.T
    return cam[..., :2] / cam[..., 2:3] * K[0, 0] + K[:2, 2]


def floor_shadow(lamp: np.ndarray, pts: np.ndarray, z: float = 0.0) -> np.ndarray:
    """Points cast by a point lamp onto the plane Z=z (points below the lamp only)."""
    s = (lamp[2] - z) / np.maximum(lamp[2] - pts[..., 2:3], 1e-3)
    return lamp + (pts - lamp) * s


@lru_cache(maxsize=16)
def static(setup: TableSetup, size: tuple[int, int]) -> Static:
    w, h = size
    rng = np.random.default_rng(setup.seed)
    R, C = setup.camera.pose()
    K = setup.camera.intrinsics(size)
    light = Lighting(setup)
    up = np.array([0, 0, 1.0], np.float32)
    image = np.zeros((h, w, 3), np.uint8)

    # The table: every image corner's ray meets it (tilt <= 25 degrees).
    Kinv = np.linalg.inv(K)
    rays = np.array([[0, 0, 1], [w, 0, 1], [w, h, 1], [0, h, 1]], float) @ Kinv.T @ R
    z0 = -TABLE_DROP
    hits = C + rays * ((z0 - C[2]) / rays[:, 2:3])
    lo, hi = hits[:, :2].min(0) - 20, hits[:, :2].max(0) + 20
    _paint_plane(image, rng, setup.tray.table, setup.tray.table_texture, lo, hi, z0, 1.2, light, K, R, C)

    tray = setup.tray
    fw, fd = tray.width / 2, tray.depth / 2
    _paint_plane(image, rng, tray.floor, tray.floor_texture, np.array([-fw, -fd]), np.array([fw, fd]),
                 0.0, 3.0, light, K, R, C, walls=True)

    # Shadows of the walls on floor and table, soft because a lamp is not a point.
    mask = np.zeros((h, w), np.uint8)
    lamp = light.lamp
    for lo3, hi3 in wall_boxes(setup):
        for z in (0.0, z0):
            cast = floor_shadow(lamp, box_vertices(lo3, hi3), z)
            pts = project_points(K, R, C, cast)
            cv2.fillConvexPoly(mask, cv2.convexHull(np.round(pts * 16).astype(np.int32)), 255, cv2.LINE_AA, 4)
    mask = cv2.GaussianBlur(mask, (0, 0), 2.5)
    darken(image, mask, light.shadow_ratio())

    # Walls, far ones first; only faces turned to the camera.
    boxes = sorted(wall_boxes(setup), key=lambda b: -np.linalg.norm((b[0] + b[1]) / 2 - C))
    grain = 1 + 0.05 * cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), 1.0)
    wall_mask = np.zeros((h, w), np.uint8)
    front = np.zeros((h, w), np.uint8)
    for lo3, hi3 in boxes:
        verts = box_vertices(lo3, hi3)
        # the camera looks over this wall into the tray: it may hide the foot of a cube
        outside = (C[0] < lo3[0] and hi3[0] <= -fw) or (C[0] > hi3[0] and lo3[0] >= fw) or (
            C[1] < lo3[1] and hi3[1] <= -fd) or (C[1] > hi3[1] and lo3[1] >= fd)
        pts = project_points(K, R, C, verts)
        for idx, normal in BOX_FACES:
            normal = np.array(normal, float)
            centre = verts[list(idx)].mean(0)
            if normal @ (C - centre) <= 0:
                continue
            rgb = np.array(tray.wall) * light.irradiance(centre, normal)
            colour = rgb_to_bgr8(rgb).tolist()
            poly = np.round(pts[list(idx)] * 16).astype(np.int32)
            cv2.fillConvexPoly(image, poly, colour, cv2.LINE_AA, 4)
            cv2.fillConvexPoly(wall_mask, poly, 255, cv2.LINE_8, 4)
            if outside:
                cv2.fillConvexPoly(front, poly, 255, cv2.LINE_8, 4)
            if normal[2] > 0:  # worn rim edge catching the light
                edge = [min(c * 1.25 + 6, 255) for c in colour]
                cv2.polylines(image, [poly], True, edge, 1, cv2.LINE_AA, 4)
    textured = (image.astype(np.float32) * grain[..., None]).clip(0, 255).astype(np.uint8)
    np.copyto(image, textured, where=wall_mask[..., None] > 0)

    corners = project_points(K, R, C, tray.floor_corners())

    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy = K[0, 2], K[1, 2]
    r2 = ((xx - cx) ** 2 + (yy - cy) ** 2) / (w ** 2 / 4 + h ** 2 / 4)
    vig = 1 - setup.vignetting * np.clip(r2, 0, 1.5) ** 1.5
    vignette = np.repeat((vig * 255).astype(np.uint8)[..., None], 3, axis=2)

    # Sensor noise: luminance noise shared by the channels plus some chroma, slightly
    # blurred as by demosaicing; shifted per frame.
    shape = (h + 2 * NOISE_MARGIN, w + 2 * NOISE_MARGIN)
    luma = rng.standard_normal(shape).astype(np.float32)
    chroma = rng.standard_normal(shape + (3,)).astype(np.float32)
    noise = luma[..., None] * 0.8 + chroma * 0.6
    noise = cv2.GaussianBlur(noise, (0, 0), 0.6)
    noise *= setup.noise / noise.std()
    return Static(image, vignette, np.round(noise).astype(np.int16), corners, front > 0, K, R, C)


def darken(image: np.ndarray, mask: np.ndarray, ratio: float) -> None:
    """Multiply image by `ratio` (a linear light ratio) where mask is 255, blended by mask."""
    keep = ratio ** (1 / 2.2)
    factor = cv2.convertScaleAbs(mask, alpha=-(1 - keep), beta=255)
    cv2.multiply(image, cv2.merge([factor, factor, factor]), image, scale=1 / 255)


def _paint_plane(image, rng, albedo, texture, lo, hi, z, px_per_mm, light, K, R, C, walls=False) -> None:
    """Warp a lit, textured rectangle [lo, hi] of the plane Z=z into the image."""
    tw = int(math.ceil((hi[0] - lo[0]) * px_per_mm))
    th = int(math.ceil((hi[1] - lo[1]) * px_per_mm))
    tex = TEXTURES[texture](rng, (th, tw), px_per_mm)
    X = lo[0] + (np.arange(tw, dtype=np.float32) + 0.5) / px_per_mm
    Y = hi[1] - (np.arange(th, dtype=np.float32) + 0.5) / px_per_mm
    step = 8  # light varies slowly: compute it on a coarse grid
    gx, gy = np.meshgrid(X[::step], Y[::step])
    pts = np.stack([gx, gy, np.full_like(gx, z)], -1)
    irr = light.irradiance(pts, np.array([0, 0, 1.0])).astype(np.float32)
    irr = cv2.resize(irr, (tw, th), interpolation=cv2.INTER_LINEAR)
    rgb = tex[..., None] * np.asarray(albedo, np.float32) * irr
    if walls:  # less light reaches the floor right next to a wall
        dx = np.minimum(X - lo[0], hi[0] - X)[None, :]
        dy = np.minimum(Y - lo[1], hi[1] - Y)[:, None]
        rgb *= (1 - 0.3 * np.exp(-np.minimum(dx, dy) / 4.0))[..., None]
    bgr = rgb_to_bgr8(rgb)
    A = np.array([[1 / px_per_mm, 0, lo[0] + 0.5 / px_per_mm], [0, -1 / px_per_mm, hi[1] - 0.5 / px_per_mm],
                  [0, 0, 1]])
    H = plane_homography(K, R, C, z) @ A
    cv2.warpPerspective(bgr, H, (image.shape[1], image.shape[0]), dst=image, flags=cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_TRANSPARENT)
