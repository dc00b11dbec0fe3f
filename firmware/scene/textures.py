"""Procedural surface textures (multiplicative, around 1.0) for felt, wood and cloth."""

from __future__ import annotations

import cv2
import numpy as np


def smooth_noise(
    rng: np.random.Generator, shape: tuple[int, int], cells: tuple[int, int]
) -> np.ndarray:
    """Smooth noise of unit-ish amplitude: random cells blown up with bicubic interpolation."""
    small = rng.standard_normal((max(cells[0], 2), max(cells[1], 2))).astype(np.float32)
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)


def felt(rng, shape, px_per_mm: float) -> np.ndarray:
    h, w = shape
    mm = (h / px_per_mm, w / px_per_mm)
    blotch = smooth_noise(rng, shape, (int(mm[0] / 40) + 2, int(mm[1] / 40) + 2))
    mottle = smooth_noise(rng, shape, (int(mm[0] / 4) + 2, int(mm[1] / 4) + 2))
    fibre = cv2.GaussianBlur(
        rng.standard_normal(shape).astype(np.float32), (0, 0), 0.6 * px_per_mm / 3
    )
    fibre /= fibre.std() + 1e-6
    return 1 + 0.035 * blotch + 0.03 * mottle + 0.04 * fibre


def wood(rng, shape, px_per_mm: float) -> np.ndarray:
    """Grain running along x: growth rings warped by smooth noise, plus long fibres."""
    h, w = shape
    mm_h, mm_w = h / px_per_mm, w / px_per_mm
    y = np.arange(h, dtype=np.float32)[:, None] / px_per_mm
    warp = smooth_noise(rng, shape, (int(mm_h / 30) + 2, int(mm_w / 90) + 2)) * 6.0
    period = rng.uniform(3.0, 7.0)
    rings = np.sin(2 * np.pi * (y + warp) / period)
    rings = np.sign(rings) * np.abs(rings) ** 0.5
    fibres = smooth_noise(rng, shape, (int(mm_h * 2) + 2, int(mm_w / 12) + 2))
    planks = smooth_noise(rng, shape, (3, 3))
    return 1 + 0.07 * rings + 0.04 * fibres + 0.05 * planks


def cloth(rng, shape, px_per_mm: float) -> np.ndarray:
    h, w = shape
    weave = (
        np.sin(np.arange(w) * 2 * np.pi / max(px_per_mm * 1.1, 2))[None, :]
        * np.sin(np.arange(h) * 2 * np.pi / max(px_per_mm * 1.1, 2))[:, None]
    ).astype(np.float32)
    return felt(rng, shape, px_per_mm) + 0.015 * weave


TEXTURES = {"felt": felt, "wood": wood, "cloth": cloth}
