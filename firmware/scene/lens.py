"""What a real camera's lens does that the renderer does not draw: it bends straight lines
(radial distortion) and may be out of focus. Applied to a rendered scene, picture and
truth alike, to measure how the counter copes with a real camera (`companion bench vision
--camera`); the renderer's own camera is a pinhole with a little blur (TableSetup.blur).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import cv2
import numpy as np

from firmware.scene.render import Scene


@dataclass(frozen=True)
class Lens:
    """`bend`: radial distortion k1 with the focal length the picture's width (negative:
    barrel, straight lines bow outward; -0.2 moves the picture's corners 8% toward its
    middle); `blur`: Gaussian sigma (px) of a lens out of focus."""

    bend: float = 0.0
    blur: float = 0.0

    def scene(self, scene: Scene) -> Scene:
        """The scene as this lens shows it: its picture, and every point of its truth moved
        where the picture puts it."""
        moved = functools.partial(self.points, size=scene.image.shape[1::-1])
        return replace(
            scene,
            image=self.image(scene.image),
            corners=moved(scene.corners),
            cubes=[replace(c, centre=tuple(moved([c.centre])[0])) for c in scene.cubes],
            clicks={
                name: [tuple(p) for p in moved(points)] for name, points in scene.clicks.items()
            },
        )

    def image(self, image: np.ndarray) -> np.ndarray:
        if self.bend:
            xs, ys = _bent_from(self.bend, image.shape[1], image.shape[0])
            image = cv2.remap(image, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        if self.blur:
            image = cv2.GaussianBlur(image, (0, 0), self.blur)
        return image

    def points(self, points, size: tuple[int, int]) -> np.ndarray:
        """Where points (Nx2 px) of a straight picture of `size` (width, height) land."""
        points = np.asarray(points, np.float64).reshape(-1, 2)
        middle = np.array(size, np.float64) / 2
        r = (points - middle) / size[0]
        return middle + r * (1 + self.bend * (r**2).sum(axis=1, keepdims=True)) * size[0]


@functools.lru_cache(maxsize=4)
def _bent_from(bend: float, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """For each px of the bent picture, the px of the straight one it shows (x and y maps)."""
    camera = np.array([[width, 0, width / 2], [0, width, height / 2], [0, 0, 1]], np.float64)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    bent = np.stack([xs.ravel(), ys.ravel()], axis=1)[:, None, :]
    straight = cv2.undistortPoints(bent, camera, np.array([bend, 0, 0, 0], np.float64), P=camera)
    straight = straight.reshape(height, width, 2)
    return straight[..., 0].copy(), straight[..., 1].copy()
