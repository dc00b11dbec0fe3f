"""Procedural textures of the tray mat, the walls and the table (multiplicative, around 1),
from the generator's felt, wood and cloth plus cardboard and neoprene."""

from __future__ import annotations

import cv2
import numpy as np

from firmware.scene.realistic.setup import WALLS, RealTray
from firmware.scene.textures import cloth, felt, smooth_noise, wood

PX_PER_MM = 4.0  # texture resolution: finer than the camera sees (2-3 px per mm at most)


def cardboard(rng, shape, px_per_mm: float) -> np.ndarray:
    """Pressed paper: faint fibres and blotches, a little speckle."""
    speckle = (rng.random(shape) < 0.004).astype(np.float32) * rng.uniform(-0.3, 0.3)
    return felt(rng, shape, px_per_mm) * 0.6 + 0.4 + cv2.GaussianBlur(speckle, (0, 0), 0.8)


def neoprene(rng, shape, px_per_mm: float) -> np.ndarray:
    """A mouse-mat's fabric top: a fine, even weave over a slight mottle."""
    return cloth(rng, shape, px_per_mm * 0.5) * 0.5 + 0.5 + 0.02 * smooth_noise(rng, shape, (6, 6))


TEXTURES = {"felt": felt, "wood": wood, "cardboard": cardboard, "neoprene": neoprene}


def mat_texture(tray: RealTray, rng: np.random.Generator) -> np.ndarray:
    shape = (int(tray.depth * PX_PER_MM), int(tray.width * PX_PER_MM))
    return TEXTURES[tray.mat](rng, shape, PX_PER_MM).astype(np.float32)


def wall_texture(tray: RealTray, rng: np.random.Generator, table: bool = False):
    """(texture, linear RGB) of the walls, or of the table round the tray."""
    shape = (512, 512)
    if table:
        return (cloth if tray.table == "grey cloth" else wood)(rng, shape, 2.0), tray.table_rgb
    return (wood if tray.wall == "wood" else felt)(rng, shape, 2.0), WALLS[tray.wall]
