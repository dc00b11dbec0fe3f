"""The canonical view of the tray: its floor seen from straight above, at the scale where one
cube's top face is TOP_PX wide, each pixel's light given as its ratio to the floor's.

Both choices make a tray look the same whatever the camera and the lamp: the calibrated
cube size fixes the scale, and a ratio to the floor does not change when the light gets
brighter, dimmer, warmer or cooler (the floor and the cubes are lit by the same light).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from vision.geometry import transform

TOP_PX = 12  # edge of a cube's top face in the view, px
MARGIN = 1.5  # cube edges of wall kept round the floor: a cube leaning there shows over it
STRIDE = 8  # the centre net halves the view three times: sizes are multiples of this
# uint8 encoding of the log ratio (training sets are stored so): 128 is the floor's light,
# ENCODE_SCALE steps per doubling.
ENCODE_SCALE = 40.0


# log2(level + 1) of each 8-bit level (+1: a black pixel stays finite)
_LOG2 = np.log2(np.arange(1, 257, dtype=np.float32)).reshape(1, 256)


@dataclass(frozen=True)
class CanonicalView:
    matrix: np.ndarray  # 3x3, image px -> view px
    size: tuple[int, int]  # (width, height) of the view, multiples of STRIDE
    floor: tuple[int, int, int, int]  # x0, y0, x1, y1 of the floor inside the view

    def warp(self, frame: np.ndarray) -> np.ndarray:
        return cv2.warpPerspective(
            frame, self.matrix, self.size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )

    def floor_light(self, view: np.ndarray) -> np.ndarray:
        """The floor's colour (BGR levels): the floor's median per channel (cubes cover less
        than half of it)."""
        x0, y0, x1, y1 = self.floor
        floor = np.ascontiguousarray(view[y0:y1, x0:x1])
        half = floor.shape[0] * floor.shape[1] / 2
        return np.float32(
            [
                np.searchsorted(np.cumsum(cv2.calcHist([floor], [c], None, [256], [0, 256])), half)
                for c in range(3)
            ]
        )

    def log_ratio(self, frame: np.ndarray) -> np.ndarray:
        """HxWx3 float32: log2 of each pixel's light over the floor's in this frame."""
        view = self.warp(frame)
        return cv2.LUT(view, _LOG2) - np.log2(self.floor_light(view) + 1)

    def to_view(self, points) -> np.ndarray:
        return transform(points, self.matrix)

    def to_image(self, points) -> np.ndarray:
        return transform(points, self.inverse)

    @cached_property
    def inverse(self) -> np.ndarray:
        return np.linalg.inv(self.matrix)


def canonical_view(corners, rect_size: tuple[int, int], cube_size: float) -> CanonicalView:
    """The view of a tray whose floor, rectified to `rect_size`, shows a cube's top
    `cube_size` wide."""
    scale = TOP_PX / cube_size
    w, h = rect_size[0] * scale, rect_size[1] * scale
    m = MARGIN * TOP_PX
    width = int(np.ceil((w + 2 * m) / STRIDE)) * STRIDE
    height = int(np.ceil((h + 2 * m) / STRIDE)) * STRIDE
    dst = np.float32([[m, m], [m + w, m], [m + w, m + h], [m, m + h]])
    matrix = cv2.getPerspectiveTransform(np.float32(corners), dst)
    floor = (round(m), round(m), round(m + w), round(m + h))
    return CanonicalView(matrix, (width, height), floor)


def encode(log_ratio: np.ndarray) -> np.ndarray:
    return np.clip(128 + ENCODE_SCALE * log_ratio, 0, 255).astype(np.uint8)


def decode(encoded: np.ndarray) -> np.ndarray:
    return (encoded.astype(np.float32) - 128) / ENCODE_SCALE
