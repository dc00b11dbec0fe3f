"""A photo-like frame drawn with OpenCV, unlike the scene generator's: a plain floor with
sensor noise, felt grain and a lamp's fall-off, cubes with sharp edges and darker side
faces toward the camera, soft cast shadows beside them, JPEG-compressed."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

SIZE = (640, 480)
CORNERS = np.float32([[64, 48], [584, 40], [604, 440], [44, 448]])
CUBE = 24  # a cube's edge on the floor, px
# Tops lie farther from the frame's middle than their feet: the camera looks down on the
# middle, so a cube shows the sides that face it.
LEAN = 0.045
SIDE_SHADES = (0.62, 0.45)  # light the side faces get, relative to the top
# A cube's shadow on the floor: its foot moved by this (the lamp is up and to the left).
SHADOW_SHIFT = np.float32([12, 8])
SHADOW_LIGHT = 0.55  # light a floor in a cast shadow keeps


@dataclass
class Photo:
    image: np.ndarray
    corners: np.ndarray
    clicks: dict[str, list[tuple[float, float]]]  # the middle of each cube's top
    floor: tuple[float, float]  # bare floor, far from every cube
    shadow: tuple[float, float]  # in the deepest part of a cube's shadow


def _square(centre, side: float) -> np.ndarray:
    h = side / 2
    return np.float32(centre) + np.float32([[-h, -h], [h, -h], [h, h], [-h, h]])


def photo(
    floor_bgr,
    cubes: list[tuple[str, tuple, tuple]],
    seed: int = 0,
    noise: float = 3.0,
    grain: float = 4.0,
) -> Photo:
    """`cubes`: (colour name, its top's BGR in the open light, centre of its foot); `noise`:
    the sensor's (sigma, levels); `grain`: the felt's (sigma of its fibres' levels, before
    they are blurred to about a pixel)."""
    rng = np.random.default_rng(seed)
    w, h = SIZE
    image = np.empty((h, w, 3), np.float32)
    image[:] = (60, 90, 120)  # a wooden table round the tray
    floor = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(floor, np.int32(CORNERS), 1)
    rim = cv2.dilate(floor, np.ones((15, 15), np.uint8)) - floor
    image[rim > 0] = (35, 35, 38)  # the walls' dark tops
    yy, xx = np.mgrid[:h, :w].astype(np.float32)
    falloff = 1.06 - 0.12 * (xx / w + yy / h) / 2  # brighter near the lamp
    fibres = cv2.GaussianBlur(rng.normal(0, grain, (h, w)).astype(np.float32), (0, 0), 0.6)
    lit = np.float32(floor_bgr)[None, None] * falloff[..., None] + fibres[..., None]
    image = np.where(floor[..., None] > 0, lit, image)

    shadow = np.zeros((h, w), np.float32)
    middle = np.float32([w / 2, h / 2])
    feet, tops = [], []
    for _, _, centre in cubes:
        foot = _square(centre, CUBE)
        top = foot + (np.float32(centre) - middle) * LEAN
        feet.append(foot)
        tops.append(top)
        hull = cv2.convexHull(np.vstack([foot, foot + SHADOW_SHIFT]))
        cv2.fillConvexPoly(shadow, np.int32(np.round(hull)), 1.0)
    shadow = cv2.GaussianBlur(shadow, (0, 0), 3.0)
    image *= (1 - (1 - SHADOW_LIGHT) * shadow * (floor > 0))[..., None]

    clicks: dict[str, list[tuple[float, float]]] = {}
    for (name, top_bgr, _), foot, top in zip(cubes, feet, tops, strict=True):
        top_bgr = np.float32(top_bgr)
        for i in range(4):
            j = (i + 1) % 4
            face = np.int32(np.round(np.vstack([foot[i], foot[j], top[j], top[i]]) * 4))
            shade = SIDE_SHADES[i % 2]
            colour = tuple(float(v) for v in top_bgr * shade)
            cv2.fillConvexPoly(image, face, colour, cv2.LINE_AA, 2)
        cv2.fillConvexPoly(
            image, np.int32(np.round(top * 4)), tuple(float(v) for v in top_bgr), cv2.LINE_AA, 2
        )
        clicks.setdefault(name, []).append(tuple(float(v) for v in top.mean(axis=0)))

    image = cv2.GaussianBlur(image, (0, 0), 0.7)
    image += rng.normal(0, noise, image.shape).astype(np.float32)
    image = np.clip(image, 0, 255).astype(np.uint8)
    _, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])

    centres = np.float32([c for _, _, c in cubes])
    grid = np.stack(np.meshgrid(np.arange(120, 540, 8), np.arange(100, 400, 8)), -1).reshape(-1, 2)
    far = np.linalg.norm(grid[:, None] - centres[None], axis=2).min(axis=1)
    bare = tuple(float(v) for v in grid[np.argmax(far)])
    # the deepest shadow: beside the first cube's foot, away from the lamp (the first cube
    # must lean away from it: up and to the left of the frame's middle)
    deep = np.float32(cubes[0][2]) + [0.5 * CUBE + 0.5 * SHADOW_SHIFT[0], SHADOW_SHIFT[1]]
    return Photo(
        cv2.imdecode(jpeg, cv2.IMREAD_COLOR),
        CORNERS.copy(),
        clicks,
        bare,
        tuple(float(v) for v in deep),
    )
