"""Tray geometry: the four floor corners give a top-down (rectified) view of the tray floor.

Everything outside the floor quadrilateral (walls, table) is cut away by the warp itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.errors import VisionError


def check_corners(corners, frame_size: tuple[int, int]) -> np.ndarray:
    """The corners as a 4x2 float32 array, or a VisionError naming what is wrong with them.

    `frame_size` is (width, height); corners must lie inside the frame or on its edge (a
    tray that fills the frame has its corners on the outer edge of the last pixel row or
    column, x = width or y = height), be given clockwise from top-left and enclose a convex
    area of real size.
    """
    pts = np.asarray(corners, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise VisionError(f"tray corners must be x,y points, got {np.asarray(corners).tolist()!r}")
    if len(pts) != 4:
        raise VisionError(
            f"the tray needs exactly 4 corners (clockwise from top-left), got {len(pts)}"
        )
    if not np.all(np.isfinite(pts)):
        raise VisionError("tray corners must be finite numbers")
    w, h = frame_size
    for i, (x, y) in enumerate(pts):
        if not (0 <= x <= w and 0 <= y <= h):
            raise VisionError(
                f"tray corner {i + 1} ({x:g},{y:g}) is outside the {w}x{h} frame "
                f"(x from 0 to {w}, y from 0 to {h})"
            )
    # Clockwise in image coordinates (y down) means every cross product is positive.
    edges = np.roll(pts, -1, axis=0) - pts
    cross = (
        edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1]
        - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    )
    if not all(c > 0 for c in cross):
        raise VisionError("tray corners must form a convex shape given clockwise from top-left")
    if cv2.contourArea(pts.astype(np.float32)) < 0.01 * w * h:
        raise VisionError(
            "tray corners enclose almost nothing: the tray must fill more of the frame"
        )
    return pts.astype(np.float32)


def natural_size(corners: np.ndarray) -> tuple[float, float]:
    """Width and height of the floor in image pixels (mean of opposite sides)."""
    c = np.asarray(corners, dtype=np.float64)
    side = lambda a, b: float(np.linalg.norm(c[a] - c[b]))  # noqa: E731
    return (side(0, 1) + side(3, 2)) / 2, (side(0, 3) + side(1, 2)) / 2


def floor_rect(corners: np.ndarray) -> tuple[int, int]:
    """The size (width, height) of the floor seen from above: its natural size, whole px."""
    w, h = natural_size(corners)
    return max(8, round(w)), max(8, round(h))


@dataclass(frozen=True)
class TrayGeometry:
    """Maps frames of one size to a rectified floor image of `rect_size` (width, height)."""

    corners: np.ndarray  # 4x2 image pixels, clockwise from top-left
    rect_size: tuple[int, int]

    def __post_init__(self):
        w, h = self.rect_size
        dst = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        object.__setattr__(
            self, "matrix", cv2.getPerspectiveTransform(np.float32(self.corners), dst)
        )
        object.__setattr__(self, "inverse", np.linalg.inv(self.matrix))

    def rectify(self, frame: np.ndarray) -> np.ndarray:
        # INTER_AREA is not supported by warpPerspective; linear with a shrink this
        # mild keeps cube edges clean.
        return cv2.warpPerspective(
            frame,
            self.matrix,
            self.rect_size,
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REPLICATE,
        )

    def to_rect(self, points) -> np.ndarray:
        return transform(points, self.matrix)

    def to_image(self, points) -> np.ndarray:
        return transform(points, self.inverse)


def transform(points, matrix: np.ndarray) -> np.ndarray:
    """Nx2 points through a 3x3 perspective matrix (any sequence of x,y pairs, even none)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
    if len(pts) == 0:
        return np.zeros((0, 2))
    return cv2.perspectiveTransform(pts, matrix).reshape(-1, 2)


def floor_insets(floor_like: np.ndarray, share: float = 0.6) -> tuple[int, ...]:
    """How far the visible floor starts inside each edge of the rectified tray.

    The near walls hide a band of the floor next to them; the band is found as the rows
    (columns) next to each edge, at each end of it, where less than `share` of the pixels
    look like floor. Returns 8 values: top (left, right half), right (top, bottom),
    bottom (left, right), left (top, bottom).
    """
    h, w = floor_like.shape
    views = [
        floor_like[:, : w // 2],
        floor_like[:, w // 2 :],  # from the top
        floor_like[: h // 2, ::-1].T,
        floor_like[h // 2 :, ::-1].T,  # from the right
        floor_like[::-1, : w // 2],
        floor_like[::-1, w // 2 :],  # from the bottom
        floor_like[: h // 2, :].T,
        floor_like[h // 2 :, :].T,
    ]  # from the left
    out = []
    for v in views:
        rows = v[: max(1, v.shape[0] // 3)].mean(axis=1)
        inside = np.nonzero(rows >= share)[0]
        out.append(int(inside[0]) if len(inside) else 0)
    return tuple(out)


def inset_mask(size: tuple[int, int], insets) -> np.ndarray:
    """The visible floor (uint8 0/1) of a rectified tray of `size` given `floor_insets`."""
    w, h = size
    t0, t1, r0, r1, b0, b1, l0, l1 = insets
    quad = np.float32([[l0, t0], [w - 1 - r0, t1], [w - 1 - r1, h - 1 - b1], [l1, h - 1 - b0]])
    mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(mask, np.int32(np.round(quad)), 1)
    return mask
