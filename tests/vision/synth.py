"""Tiny hand-made tray images for unit tests of single steps (the scene generator covers the rest)."""
from __future__ import annotations

import cv2
import numpy as np

FLOOR = (90, 110, 120)
PAINTS = {"red": (40, 40, 200), "blue": (190, 90, 30), "black": (22, 22, 24)}
CORNERS = [(80, 60), (560, 60), (560, 420), (80, 420)]


def tray_image(cubes=(), shadows=(), size=(640, 480), seed=0, gain=(1.0, 1.0, 1.0)):
    """A flat tray with square cubes ((x, y, colour) at 24 px, a shaded side each) and shadows."""
    w, h = size
    rng = np.random.default_rng(seed)
    img = np.zeros((h, w, 3), np.float32)
    img[:] = (40, 60, 40)
    x0, y0 = CORNERS[0]
    x1, y1 = CORNERS[2]
    img[y0:y1, x0:x1] = FLOOR
    for (x, y, wd, ht) in shadows:
        img[y:y + ht, x:x + wd] = np.float32(FLOOR) * 0.45
    for x, y, colour in cubes:
        paint = np.float32(PAINTS[colour])
        img[y - 12:y + 12, x - 12:x + 12] = paint
        img[y + 8:y + 12, x - 12:x + 12] = paint * 0.55   # shaded front side
    img *= np.float32(gain)
    img += rng.normal(0, 2.0, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def clicks(cubes):
    out = {}
    for x, y, colour in cubes:
        out.setdefault(colour, []).append((x, y - 3))
    return out
