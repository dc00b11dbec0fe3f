"""Lightness (CIE L*) of the tray floor and the calibrated colours.

Black, grey and white paints differ from a grey floor in lightness, not in hue, and the
colour model lets a floor-coloured pixel be anything from the floor in deep shadow to a
little lighter than the lit floor (vision.colour). So a black top on a light grey floor
passes for floor by colour; its lightness tells it apart when it is darker than any shadow
the floor shows, by clearly more than the floor's own spread.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

# A lightness is told apart from another when it differs by this many times the larger of
# their own spreads (robust standard deviations of L*), and by at least MIN_APART units:
# a measured spread can be tiny on a smooth floor, and an L* unit is barely visible.
SPREADS = 4.0
MIN_APART = 5.0


def lab(colours) -> np.ndarray:
    """CIE L*a*b* (..., 3; L* 0 black to 100 white) of BGR colours (..., 3), in 8-bit levels."""
    bgr = np.asarray(colours, np.float32)
    out = cv2.cvtColor(bgr.reshape(-1, 1, 3) / np.float32(255), cv2.COLOR_BGR2Lab)
    return out.reshape(bgr.shape)


def lightness(colours) -> np.ndarray:
    """CIE L* of BGR colours (..., 3), in 8-bit levels."""
    return lab(colours)[..., 0]


def spread(values: np.ndarray) -> float:
    """Robust standard deviation (from the median absolute deviation): a few stray pixels
    (a cube's edge, a speck) do not widen it."""
    values = np.asarray(values, np.float64).ravel()
    return float(1.4826 * np.median(np.abs(values - np.median(values)))) if len(values) else 0.0


def needed(*spreads: float) -> float:
    """The lightness difference that tells apart classes of these spreads."""
    return max(SPREADS * max(spreads), MIN_APART)


@dataclass(frozen=True)
class FloorLightness:
    lit: float  # median L* of the lit floor
    spread: float  # its robust standard deviation
    shadow: float  # L* of the floor in the deepest cast shadow the counter expects

    @classmethod
    def measure(cls, floor_pixels: np.ndarray, reference, shadow_level: float) -> FloorLightness:
        """From the lit floor's pixels (normalised BGR) and how much of the floor's light a
        cast shadow keeps (vision.counter's shadow level, along the floor's colour)."""
        values = lightness(np.asarray(floor_pixels).reshape(-1, 3))
        shadow = float(lightness(np.asarray(reference, np.float32) * np.float32(shadow_level)))
        return cls(float(np.median(values)), spread(values), shadow)

    @property
    def needed(self) -> float:
        return needed(self.spread)

    def apart(self, value: float) -> float:
        """How far a lightness lies outside the floor's, lit or in shadow (0: within)."""
        return max(value - self.lit, self.shadow - value, 0.0)
