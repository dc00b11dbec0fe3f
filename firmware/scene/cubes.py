"""Painting cubes into an image: 3D boxes in perspective, each visible face lit by the
lamp and the room, worn darker edges, a lighter rim round the top, a darker foot."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from firmware.scene.layout import CubePose, rotation
from firmware.scene.lighting import Lighting, floor_shadow, project_points, rgb_to_bgr8
from firmware.scene.paints import BARE_WOOD
from firmware.scene.setup import TableSetup

# Cube corners: index bits are x, y, z (1 = +half); faces with outward local normals.
LOCAL = (
    np.array(
        [[(1 if i & 1 else -1), (1 if i & 2 else -1), (1 if i & 4 else -1)] for i in range(8)],
        float,
    )
    / 2
)
FACES = np.array(
    [(4, 5, 7, 6), (0, 2, 3, 1), (0, 4, 6, 2), (1, 3, 7, 5), (0, 1, 5, 4), (2, 6, 7, 3)]
)
NORMALS = np.array([(0, 0, 1), (0, 0, -1), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0)], float)
SHIFT = 4  # sub-pixel bits for OpenCV drawing
# Per side face, positions in FACES of its two bottom corners and the corners above them
# (for an upright cube): the foot band of the face is drawn darker.
_FOOT = np.zeros((6, 4), int)
for _f, _face in enumerate(FACES[2:], start=2):
    _low = [k for k in range(4) if _face[k] < 4]
    _up = [list(_face).index(_face[k] + 4) for k in _low]
    _FOOT[_f] = _low + _up


def vertices(poses: Sequence[CubePose]) -> tuple[np.ndarray, np.ndarray]:
    """(corners (n, 8, 3) in world mm, rotations (n, 3, 3))."""
    if not poses:
        return np.zeros((0, 8, 3)), np.zeros((0, 3, 3))
    rot = np.stack([rotation(p.yaw, p.pitch, p.roll) for p in poses])
    sizes = np.array([p.size for p in poses])[:, None, None]
    centres = np.array([[p.x, p.y, p.z] for p in poses])
    return np.einsum("nij,kj->nki", rot, LOCAL) * sizes + centres[:, None, :], rot


def cast_shadows(
    mask: np.ndarray, verts: np.ndarray, light: Lighting, K, R, C, scale: float, floor: float = 0.0
) -> None:
    """Draw cast and contact shadows of cubes lying on the plane Z=floor into a mask."""
    if not len(verts):
        return
    k = (1 << SHIFT) * scale
    cast = np.round(project_points(K, R, C, floor_shadow(light.lamp, verts, floor)) * k).astype(
        np.int32
    )
    centre = verts.mean(1)
    base = (
        (verts[:, :4] - centre[:, None]) * [1.3, 1.3, 0]
        + centre[:, None] * [1, 1, 0]
        + [0, 0, floor]
    )
    base = np.round(project_points(K, R, C, base) * k).astype(np.int32)
    on_floor = verts[:, :, 2].min(1) < floor + 1.0
    for i in range(len(verts)):
        if on_floor[i]:  # contact shadow: little sky light reaches the floor round the base
            cv2.fillConvexPoly(mask, cv2.convexHull(base[i]), 150, cv2.LINE_8, SHIFT)
        cv2.fillConvexPoly(mask, cv2.convexHull(cast[i]), 255, cv2.LINE_8, SHIFT)


def paint(
    image: np.ndarray,
    setup: TableSetup,
    poses: Sequence[CubePose],
    verts: np.ndarray,
    rot: np.ndarray,
    light: Lighting,
    K,
    R,
    C,
    labels: np.ndarray | None = None,
) -> list:
    """Paint the cubes far to near. With `labels`, also fill it with cube*8+face+1 and
    return each cube's (top-face polygon in px, top-face index)."""
    n = len(poses)
    if not n:
        return []
    normals = np.einsum("nij,fj->nfi", rot, NORMALS)
    face_centres = verts[:, FACES].mean(2)
    view = C - face_centres
    facing = np.sum(normals * view, -1) > 0
    irr = light.irradiance(face_centres, normals)
    paints = [setup.paint(p.colour) for p in poses]
    albedo = np.array([[np.multiply(q.albedo, p.tint)] for q, p in zip(paints, poses, strict=True)])
    gloss = np.array([q.gloss for q in paints])[:, None, None]
    wear = np.array([q.wear for q in paints])[:, None, None]
    # broad highlight of a semi-matte paint (Blinn-Phong, one value per face)
    to_lamp = light.lamp - face_centres
    half = to_lamp / np.linalg.norm(to_lamp, axis=-1, keepdims=True) + view / np.linalg.norm(
        view, axis=-1, keepdims=True
    )
    half /= np.linalg.norm(half, axis=-1, keepdims=True)
    spec = (
        gloss
        * np.clip(np.sum(normals * half, -1, keepdims=True), 0, None) ** 12
        * light.colour
        * light.exposure
    )
    rgb = albedo * irr + spec
    colours = rgb_to_bgr8(rgb)
    # less light reaches the foot of a side face (the floor and neighbours block it)
    foot = rgb_to_bgr8(rgb * 0.8)
    # edges: rounded and worn, darker on the sides, catching light round the top
    wood = np.array(BARE_WOOD) * irr * wear
    edges = rgb_to_bgr8(rgb * (1 - wear) * 0.72 + wood * 0.6)
    rims = rgb_to_bgr8(rgb * (1 - wear) * 1.15 + wood * 0.9 + 0.01 * light.exposure)
    pts = np.round(project_points(K, R, C, verts) * (1 << SHIFT)).astype(np.int32)
    order = np.argsort(-np.linalg.norm(verts.mean(1) - C, axis=1))
    top_face = np.argmax(normals[..., 2], axis=1)
    upright = normals[:, 0, 2] > 0.95  # feet shading only for cubes standing square
    a, b, ua, ub = (pts[:, _FOOT[:, k]] for k in range(4))
    bands = np.stack([a, b, b + (ub - b) // 3, a + (ua - a) // 3], axis=2)
    tops = [None] * n
    for i in order:
        for f in sorted(
            np.nonzero(facing[i])[0], key=lambda f: f == top_face[i]
        ):  # top last: its rim stays
            poly = pts[i, FACES[f]]
            cv2.fillConvexPoly(image, poly, colours[i, f].tolist(), cv2.LINE_AA, SHIFT)
            if labels is not None:
                cv2.fillConvexPoly(labels, poly, int(i * 8 + f + 1), cv2.LINE_8, SHIFT)
            if f == top_face[i]:
                cv2.polylines(image, [poly], True, rims[i, f].tolist(), 1, cv2.LINE_AA, SHIFT)
                continue
            if upright[i] and f >= 2:
                cv2.fillConvexPoly(image, bands[i, f], foot[i, f].tolist(), cv2.LINE_AA, SHIFT)
            cv2.polylines(image, [poly], True, edges[i, f].tolist(), 1, cv2.LINE_AA, SHIFT)
        tops[i] = (pts[i, FACES[top_face[i]]] / (1 << SHIFT), int(top_face[i]))
    return tops
