"""Light and camera arithmetic shared by the background and the cubes: how much light a
surface gets, gamma, projecting world points into the image, cast shadows."""

from __future__ import annotations

import cv2
import numpy as np

from firmware.scene.setup import TableSetup, light_rgb


class Lighting:
    """Radiance of surfaces under the set-up's lamp and ambient light, in camera units."""

    def __init__(self, setup: TableSetup):
        light = setup.light
        self.lamp = light.position()
        self.colour = light_rgb(setup)
        self.ambient = light.ambient * (0.5 * self.colour + 0.5)
        self.strength = light.strength
        self.distance = light.distance
        self.softness = light.softness
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


def project_points(K, R, C, pts: np.ndarray) -> np.ndarray:
    cam = (pts - C) @ R.T
    return cam[..., :2] / cam[..., 2:3] * K[0, 0] + K[:2, 2]


def floor_shadow(lamp: np.ndarray, pts: np.ndarray, z: float = 0.0) -> np.ndarray:
    """Points cast by a point lamp onto the plane Z=z (points below the lamp only)."""
    s = (lamp[2] - z) / np.maximum(lamp[2] - pts[..., 2:3], 1e-3)
    return lamp + (pts - lamp) * s


def darken(image: np.ndarray, mask: np.ndarray, ratio: float) -> None:
    """Multiply image by `ratio` (a linear light ratio) where mask is 255, blended by mask."""
    keep = ratio ** (1 / 2.2)
    factor = cv2.convertScaleAbs(mask, alpha=-(1 - keep), beta=255)
    cv2.multiply(image, cv2.merge([factor, factor, factor]), image, scale=1 / 255)
