"""Cube paints, floor and table materials, and light colours.

Colours are linear RGB reflectances (0..1), so lighting multiplies them before the
camera's gamma; the renderer converts to sRGB/BGR only at the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from firmware.errors import FirmwareError

# A paint dict: "albedo" linear RGB, "variation" per-cube spread of the albedo
# (batches and brush strokes differ), "gloss" strength of a broad highlight,
# "wear" how much bare wood shows along the edges.
DEFAULT_PAINTS: dict[str, dict] = {
    "red": {"albedo": (0.42, 0.030, 0.028), "variation": 0.06, "gloss": 0.05, "wear": 0.25},
    "blue": {"albedo": (0.020, 0.060, 0.30), "variation": 0.06, "gloss": 0.05, "wear": 0.25},
    "yellow": {"albedo": (0.72, 0.50, 0.035), "variation": 0.05, "gloss": 0.04, "wear": 0.15},
    "purple": {"albedo": (0.15, 0.040, 0.24), "variation": 0.07, "gloss": 0.05, "wear": 0.25},
    "black": {"albedo": (0.034, 0.034, 0.038), "variation": 0.08, "gloss": 0.07, "wear": 0.35},
    "green": {"albedo": (0.035, 0.24, 0.055), "variation": 0.06, "gloss": 0.05, "wear": 0.25},
    "orange": {"albedo": (0.78, 0.20, 0.020), "variation": 0.05, "gloss": 0.04, "wear": 0.15},
    "white": {"albedo": (0.72, 0.71, 0.66), "variation": 0.03, "gloss": 0.04, "wear": 0.15},
}
# The Shogun set: five player colours and the green farmers.
DEFAULT_COLOURS: tuple[str, ...] = ("red", "blue", "yellow", "purple", "black", "green")

# Bare wood showing through worn paint on cube edges.
BARE_WOOD = (0.50, 0.33, 0.17)

# Felt-like tray floors (linear RGB) and the table materials around the tray.
FLOORS: dict[str, tuple[float, float, float]] = {
    "grey": (0.11, 0.11, 0.115),
    "brown": (0.13, 0.072, 0.040),
    "dark green": (0.022, 0.065, 0.035),
    "beige": (0.42, 0.35, 0.24),
    "navy": (0.018, 0.026, 0.085),
    "light wood": (0.45, 0.29, 0.15),
}
TABLES: dict[str, tuple[float, float, float]] = {
    "oak": (0.38, 0.22, 0.10),
    "walnut": (0.12, 0.065, 0.035),
    "white laminate": (0.62, 0.60, 0.56),
    "grey cloth": (0.20, 0.20, 0.21),
    "green mat": (0.06, 0.16, 0.08),
}
WALLS: dict[str, tuple[float, float, float]] = {
    "black card": (0.030, 0.030, 0.032),
    "printed card": (0.22, 0.14, 0.07),
    "wood": (0.40, 0.25, 0.12),
    "dark plastic": (0.05, 0.05, 0.06),
}


@dataclass(frozen=True)
class Paint:
    albedo: tuple[float, float, float]
    variation: float = 0.06
    gloss: float = 0.05
    wear: float = 0.25


def paint_from_dict(name: str, spec: dict) -> Paint:
    """A Paint from a paint dict; a wrong dict names the colour and the problem."""
    try:
        albedo = tuple(float(v) for v in spec["albedo"])
    except (KeyError, TypeError, ValueError):
        raise FirmwareError(
            f"paint {name!r} needs 'albedo': three linear RGB numbers 0..1"
        ) from None
    if len(albedo) != 3 or not all(0.0 <= v <= 1.0 for v in albedo):
        raise FirmwareError(
            f"paint {name!r}: albedo must be three numbers 0..1, got {spec['albedo']!r}"
        )
    return Paint(
        albedo,
        float(spec.get("variation", 0.06)),
        float(spec.get("gloss", 0.05)),
        float(spec.get("wear", 0.25)),
    )


def kelvin_rgb(kelvin: float) -> tuple[float, float, float]:
    """Linear RGB of a black-body-like lamp, scaled to luminance 1 (Tanner Helland's fit)."""
    t = kelvin / 100.0
    r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
    g = (
        99.4708025861 * math.log(t) - 161.1195681661
        if t <= 66
        else 288.1221695283 * (t - 60) ** -0.0755148492
    )
    if t >= 66:
        b = 255.0
    elif t <= 19:
        b = 0.0
    else:
        b = 138.5177312231 * math.log(t - 10) - 305.0447927307
    rgb = [(min(max(c, 0.0), 255.0) / 255.0) ** 2.2 for c in (r, g, b)]
    lum = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
    return (rgb[0] / lum, rgb[1] / lum, rgb[2] / lum)
