"""The still part of a frame: table, tray walls and floor, lit by the lamp; plus the
per-set-up sensor tables (vignetting, a noise tile). Cached per set-up and size, so a
live frame only pays for the cubes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from firmware.scene import cubes
from firmware.scene.layout import CubePose, footprint, overlap
from firmware.scene.lighting import Lighting, darken, floor_shadow, project_points, rgb_to_bgr8
from firmware.scene.setup import TABLE_DROP, TableSetup
from firmware.scene.textures import TEXTURES, smooth_noise

NOISE_MARGIN = 24  # px the noise tile is shifted by, per frame
VIGNETTE_ONE = 232  # the vignette map's value for "no change" (headroom for the mottling)


@dataclass(frozen=True, eq=False)
class Static:
    image: np.ndarray  # BGR uint8, lit table and tray, no sensor effects
    vignette: (
        np.ndarray
    )  # uint8 HxWx3, VIGNETTE_ONE = no loss, for cv2.multiply(scale=gain/VIGNETTE_ONE)
    noise: np.ndarray  # int16 tile (H + 2M) x (W + 2M) x 3
    corners: np.ndarray  # 4x2 floor corners, image px, clockwise from top-left
    front: np.ndarray  # bool HxW: walls between the camera and the floor, drawn again over cubes
    K: np.ndarray
    R: np.ndarray
    C: np.ndarray


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
    ((4, 5, 7, 6), (0, 0, 1)),
    ((0, 2, 3, 1), (0, 0, -1)),
    ((0, 4, 6, 2), (-1, 0, 0)),
    ((1, 3, 7, 5), (1, 0, 0)),
    ((0, 1, 5, 4), (0, -1, 0)),
    ((2, 6, 7, 3), (0, 1, 0)),
)


def box_vertices(lo, hi) -> np.ndarray:
    return np.array(
        [
            [(hi if i & 1 else lo)[0], (hi if i & 2 else lo)[1], (hi if i & 4 else lo)[2]]
            for i in range(8)
        ]
    )


@lru_cache(maxsize=16)
def static(setup: TableSetup, size: tuple[int, int]) -> Static:
    w, h = size
    rng = np.random.default_rng(setup.seed)
    R, C = setup.camera.pose()
    K = setup.camera.intrinsics(size)
    light = Lighting(setup)
    image = np.zeros((h, w, 3), np.uint8)

    # The table: every image corner's ray meets it (tilt <= 25 degrees).
    Kinv = np.linalg.inv(K)
    rays = np.array([[0, 0, 1], [w, 0, 1], [w, h, 1], [0, h, 1]], float) @ Kinv.T @ R
    z0 = -TABLE_DROP
    hits = C + rays * ((z0 - C[2]) / rays[:, 2:3])
    lo, hi = hits[:, :2].min(0) - 20, hits[:, :2].max(0) + 20
    _paint_plane(
        image, rng, setup.tray.table, setup.tray.table_texture, lo, hi, z0, 1.2, light, K, R, C
    )

    tray = setup.tray
    fw, fd = tray.width / 2, tray.depth / 2
    clutter = np.random.default_rng([setup.seed, 1])
    outer = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [
        fw + tray.wall_thickness,
        fd + tray.wall_thickness,
    ]
    cards = _cards(clutter, setup.cards, outer, lo, hi)
    for card in cards:
        _paint_card(image, clutter, card, z0, light, K, R, C)
    loose = _table_cubes(setup, clutter, outer, cards, lo, hi, z0)
    loose_verts, loose_rot = cubes.vertices(loose)
    _paint_plane(
        image,
        rng,
        tray.floor,
        tray.floor_texture,
        np.array([-fw, -fd]),
        np.array([fw, fd]),
        0.0,
        3.0,
        light,
        K,
        R,
        C,
        walls=True,
    )

    # Shadows of the walls on floor and table, soft because a lamp is not a point.
    mask = np.zeros((h, w), np.uint8)
    lamp = light.lamp
    for lo3, hi3 in wall_boxes(setup):
        for z in (0.0, z0):
            cast = floor_shadow(lamp, box_vertices(lo3, hi3), z)
            pts = project_points(K, R, C, cast)
            cv2.fillConvexPoly(
                mask, cv2.convexHull(np.round(pts * 16).astype(np.int32)), 255, cv2.LINE_AA, 4
            )
    cubes.cast_shadows(mask, loose_verts, light, K, R, C, 1.0, floor=z0)
    mask = cv2.GaussianBlur(mask, (0, 0), 2.5 * setup.light.softness * w / 640)
    darken(image, mask, light.shadow_ratio())

    # Cubes on the table (a player's supply): those beyond a wall are partly hidden by it.
    behind = np.array(
        [
            (p.x > outer[1, 0] and C[0] < outer[1, 0])
            or (p.x < outer[0, 0] and C[0] > outer[0, 0])
            or (p.y > outer[2, 1] and C[1] < outer[2, 1])
            or (p.y < outer[0, 1] and C[1] > outer[0, 1])
            for p in loose
        ],
        bool,
    )
    _paint_some(image, setup, loose, loose_verts, loose_rot, behind, light, K, R, C)

    # Walls, far ones first; only faces turned to the camera.
    boxes = sorted(wall_boxes(setup), key=lambda b: -np.linalg.norm((b[0] + b[1]) / 2 - C))
    grain = 1 + 0.05 * cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), 1.0)
    wall_mask = np.zeros((h, w), np.uint8)
    front = np.zeros((h, w), np.uint8)
    for lo3, hi3 in boxes:
        verts = box_vertices(lo3, hi3)
        # the camera looks over this wall into the tray: it may hide the foot of a cube
        outside = (
            (C[0] < lo3[0] and hi3[0] <= -fw)
            or (C[0] > hi3[0] and lo3[0] >= fw)
            or (C[1] < lo3[1] and hi3[1] <= -fd)
            or (C[1] > hi3[1] and lo3[1] >= fd)
        )
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
    _paint_some(image, setup, loose, loose_verts, loose_rot, ~behind, light, K, R, C)

    corners = project_points(K, R, C, tray.floor_corners())

    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy = K[0, 2], K[1, 2]
    r2 = ((xx - cx) ** 2 + (yy - cy) ** 2) / (w**2 / 4 + h**2 / 4)
    vig = 1 - setup.vignetting * np.clip(r2, 0, 1.5) ** 1.5
    # Faint mottling fixed in the picture (paint, dust, uneven pixels): no face is one flat colour.
    mottle = (
        1
        + 0.02 * smooth_noise(rng, (h, w), (h // 6, w // 6))[..., None]
        + 0.01 * np.stack([smooth_noise(rng, (h, w), (h // 3, w // 3)) for _ in range(3)], axis=-1)
    )
    vignette = np.clip(vig[..., None] * mottle * VIGNETTE_ONE, 0, 255).astype(np.uint8)

    # Sensor noise: luminance noise shared by the channels plus some chroma, slightly
    # blurred as by demosaicing; shifted per frame.
    shape = (h + 2 * NOISE_MARGIN, w + 2 * NOISE_MARGIN)
    luma = rng.standard_normal(shape).astype(np.float32)
    chroma = rng.standard_normal(shape + (3,)).astype(np.float32)
    noise = luma[..., None] * 0.8 + chroma * 0.6
    noise = cv2.GaussianBlur(noise, (0, 0), 0.6)
    noise *= setup.noise / noise.std()
    return Static(image, vignette, np.round(noise).astype(np.int16), corners, front > 0, K, R, C)


def _paint_some(image, setup, poses, verts, rot, which, light, K, R, C) -> None:
    if which.any():
        cubes.paint(
            image,
            setup,
            [p for p, k in zip(poses, which, strict=True) if k],
            verts[which],
            rot[which],
            light,
            K,
            R,
            C,
        )


def _cards(rng, count: int, outer: np.ndarray, lo, hi) -> list[np.ndarray]:
    """Playing cards (63 x 88 mm) on the table round the tray, as floor polygons."""
    out: list[np.ndarray] = []
    for _ in range(count * 20):
        if len(out) == count:
            break
        c = rng.uniform(lo, hi)
        a = math.radians(rng.uniform(0, 180))
        u, v = (
            np.array([math.cos(a), math.sin(a)]) * 31.5,
            np.array([-math.sin(a), math.cos(a)]) * 44,
        )
        card = np.array([c + u + v, c - u + v, c - u - v, c + u - v])
        if not overlap(card, outer, 3.0) and not any(overlap(card, o, 1.0) for o in out):
            out.append(card)
    return out


def _paint_card(image, rng, card: np.ndarray, z: float, light, K, R, C) -> None:
    up = np.array([0, 0, 1.0])
    centre = np.array([*card.mean(0), z])
    irr = light.irradiance(centre, up)
    inset = card.mean(0) + (card - card.mean(0)) * 0.86
    ink = np.array(
        [
            (0.35, 0.05, 0.04),
            (0.04, 0.08, 0.30),
            (0.20, 0.13, 0.06),
            (0.05, 0.15, 0.06),
            (0.05, 0.05, 0.06),
        ][rng.integers(5)]
    ) * rng.uniform(0.7, 1.3)
    for poly, albedo in ((card, np.array([0.70, 0.68, 0.62])), (inset, ink)):
        pts = project_points(K, R, C, np.column_stack([poly, np.full(4, z + 0.3)]))
        colour = rgb_to_bgr8(albedo * irr).tolist()
        cv2.fillConvexPoly(image, np.round(pts * 16).astype(np.int32), colour, cv2.LINE_AA, 4)


def _table_cubes(
    setup: TableSetup, rng, outer: np.ndarray, cards, lo, hi, z: float
) -> list[CubePose]:
    """Loose cubes lying on the table outside the tray: in view, never counted."""
    out: list[CubePose] = []
    feet: list[np.ndarray] = []
    s = setup.cube_size
    for _ in range(setup.table_cubes * 30):
        if len(out) == setup.table_cubes:
            break
        x, y = rng.uniform(lo + 5, hi - 5)
        yaw = rng.uniform(0, 90)
        foot = footprint(x, y, yaw, s)
        if overlap(foot, outer, 8.0) or any(overlap(foot, f, 1.0) for f in feet + cards):
            continue
        colour = setup.colours[int(rng.integers(len(setup.colours)))]
        out.append(CubePose(colour, float(x), float(y), z + s / 2, float(yaw), size=s))
        feet.append(foot)
    return out


def _paint_plane(
    image, rng, albedo, texture, lo, hi, z, px_per_mm, light, K, R, C, walls=False
) -> None:
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
    A = np.array(
        [
            [1 / px_per_mm, 0, lo[0] + 0.5 / px_per_mm],
            [0, -1 / px_per_mm, hi[1] - 0.5 / px_per_mm],
            [0, 0, 1],
        ]
    )
    H = plane_homography(K, R, C, z) @ A
    cv2.warpPerspective(
        bgr,
        H,
        (image.shape[1], image.shape[0]),
        dst=image,
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_TRANSPARENT,
    )
