"""A realistic table set-up: the tray with its tower exit, the mat, the camera, the lamps,
the paints of this table's cube sets, the sensor. Millimetres, world frame of
firmware.scene.setup: origin at the tray floor's centre, x right, y away from the player
(the tower stands at the far side), z up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from firmware.errors import FirmwareError
from firmware.scene.paints import DEFAULT_COLOURS
from firmware.scene.setup import Camera, seen_from_centre

# Paints of several cube sets per colour name: linear RGB albedo and the paint's roughness
# (GGX alpha). Each set-up picks one per colour, as a table mixes sets from different games.
PAINTS: dict[str, tuple[tuple[tuple[float, float, float], float], ...]] = {
    "red": (
        ((0.42, 0.030, 0.028), 0.35),
        ((0.52, 0.060, 0.035), 0.25),
        ((0.33, 0.022, 0.030), 0.45),
    ),
    "blue": (
        ((0.020, 0.060, 0.30), 0.35),
        ((0.035, 0.10, 0.38), 0.25),
        ((0.015, 0.035, 0.18), 0.45),
    ),
    "yellow": (((0.72, 0.50, 0.035), 0.3), ((0.80, 0.62, 0.06), 0.25), ((0.65, 0.40, 0.03), 0.4)),
    "purple": (
        ((0.15, 0.040, 0.24), 0.35),
        ((0.20, 0.055, 0.20), 0.3),
        ((0.10, 0.030, 0.20), 0.45),
    ),
    "black": (
        ((0.034, 0.034, 0.038), 0.3),
        ((0.050, 0.045, 0.045), 0.45),
        ((0.025, 0.025, 0.03), 0.2),
    ),
    "green": (((0.035, 0.24, 0.055), 0.35), ((0.09, 0.30, 0.045), 0.3), ((0.02, 0.16, 0.06), 0.45)),
    "white": (((0.78, 0.77, 0.72), 0.35), ((0.70, 0.70, 0.68), 0.3), ((0.82, 0.80, 0.74), 0.45)),
}
# Tray mats: linear RGB of the mat, and the tray walls' material.
MATS = {
    "felt": (
        (0.11, 0.11, 0.115),
        (0.13, 0.072, 0.040),
        (0.022, 0.065, 0.035),
        (0.018, 0.026, 0.085),
    ),
    "wood": ((0.45, 0.29, 0.15), (0.30, 0.17, 0.08)),
    "cardboard": ((0.40, 0.30, 0.19), (0.25, 0.24, 0.23)),
    "neoprene": ((0.03, 0.03, 0.035), (0.06, 0.08, 0.12), (0.10, 0.04, 0.04)),
}
WALLS = {
    "wood": (0.40, 0.25, 0.12),
    "cardboard": (0.22, 0.14, 0.07),
    "black card": (0.03, 0.03, 0.032),
}
TABLES = {
    "oak": (0.38, 0.22, 0.10),
    "walnut": (0.12, 0.065, 0.035),
    "white": (0.62, 0.60, 0.56),
    "grey cloth": (0.20, 0.20, 0.21),
}


@dataclass(frozen=True)
class RealTray:
    width: float  # inner floor, mm
    depth: float
    wall_height: float
    wall_thickness: float
    exit_width: float  # the gap in the far wall the cubes come out of
    mat: str  # key of MATS
    mat_rgb: tuple[float, float, float]
    wall: str  # key of WALLS
    table: str  # key of TABLES
    table_rgb: tuple[float, float, float]

    def exit_point(self, cube: float) -> tuple[float, float]:
        """Where a cube of edge `cube` leaves the tower: the middle of the far wall's gap,
        far enough inside the tray that it clears the gap however it is turned."""
        return 0.0, self.depth / 2 - 0.9 * cube

    def floor_corners(self) -> np.ndarray:
        """Floor corners (x, y, 0), clockwise seen from above starting far-left."""
        w, d = self.width / 2, self.depth / 2
        return np.array([[-w, d, 0], [w, d, 0], [w, -d, 0], [-w, -d, 0]], float)

    def boxes(self) -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
        """(half extents, centre) in mm of the floor and the walls; the far wall in two parts
        either side of the exit, and a block behind the exit (the tower's foot)."""
        w, d, h, t = self.width / 2, self.depth / 2, self.wall_height, self.wall_thickness
        g = self.exit_width / 2
        side = (w + t - g) / 2
        return [
            ((w + t, d + t, 5.0), (0.0, 0.0, -5.0)),
            ((t / 2, d + t, h / 2), (-w - t / 2, 0.0, h / 2)),
            ((t / 2, d + t, h / 2), (w + t / 2, 0.0, h / 2)),
            ((w + t, t / 2, h / 2), (0.0, -d - t / 2, h / 2)),
            ((side / 2, t / 2, h / 2), (-g - side / 2, d + t / 2, h / 2)),
            ((side / 2, t / 2, h / 2), (g + side / 2, d + t / 2, h / 2)),
            ((g + t, 20.0, h * 2), (0.0, d + t + 20.0, h * 2)),
        ]


@dataclass(frozen=True)
class Lamp:
    """A rectangle emitter: a lamp's shade or a window."""

    kelvin: float
    azimuth: float  # degrees, seen from the tray centre
    elevation: float
    distance: float  # mm
    size: float  # mm, edge of the emitting rectangle
    power: float  # irradiance it gives the tray floor, relative

    def position(self) -> np.ndarray:
        return seen_from_centre(self.azimuth, self.elevation, self.distance)


@dataclass(frozen=True)
class RealSetup:
    tray: RealTray
    camera: Camera
    lamps: tuple[Lamp, ...]
    ambient: float  # room light from everywhere, relative to the lamps' irradiance
    paints: tuple[tuple[str, tuple[float, float, float], float], ...]  # colour, albedo, roughness
    cube_size: float  # mm
    bevel: float  # mm, radius of the cubes' rounded edges
    white_balance: float  # kelvin the camera assumes (locked)
    aperture: float  # mm, lens aperture radius (focus blur)
    focus: float  # mm, distance in focus, a little off the floor's
    distortion: float  # k1 radial distortion, focal length = image width
    noise: float  # sensor noise, sigma in 8-bit levels at mid grey
    jpeg_quality: int
    seed: int  # textures

    @property
    def colours(self) -> tuple[str, ...]:
        return tuple(name for name, _, _ in self.paints)


def on_felt(setup: RealSetup, rgb: tuple[float, float, float]) -> RealSetup:
    """The set-up with its mat replaced by a felt of linear RGB `rgb` (a grey tray)."""
    return replace(setup, tray=replace(setup.tray, mat="felt", mat_rgb=tuple(rgb)))


def random_real_setup(rng: np.random.Generator, colours=DEFAULT_COLOURS) -> RealSetup:
    """A random table, drawn widely: tray 200-300 mm, mat, camera 25-60 cm up, one or two
    lamps 2700-6500 K, a paint per colour from PAINTS, cubes 8-12 mm."""
    unknown = [c for c in colours if c not in PAINTS]
    if unknown:
        raise FirmwareError(
            f"no realistic paint for {', '.join(unknown)} (known: {', '.join(PAINTS)})"
        )
    width = rng.uniform(200, 300)
    mat = str(rng.choice(sorted(MATS)))
    mats = MATS[mat]
    table = str(rng.choice(sorted(TABLES)))
    wall = "wood" if mat == "wood" else str(rng.choice(sorted(WALLS)))
    tray = RealTray(
        width=width,
        depth=width * rng.uniform(0.6, 0.8),
        wall_height=rng.uniform(22, 35),
        wall_thickness=rng.uniform(6, 12),
        exit_width=rng.uniform(50, 80),
        mat=mat,
        mat_rgb=_jitter(mats[int(rng.integers(len(mats)))], rng, 0.12),
        wall=wall,
        table=table,
        table_rgb=_jitter(TABLES[table], rng, 0.1),
    )
    height = rng.uniform(250, 600)
    camera = Camera(
        height=height,
        tilt=rng.uniform(0, 25),
        roll=rng.uniform(-6, 6),
        yaw=rng.uniform(-6, 6),
        target=(rng.uniform(-10, 10), rng.uniform(-10, 10)),
        focal=1.0,
        centre=(0.5, 0.5),
    )
    camera = frame_tray(camera, tray, rng.uniform(0.78, 0.92))
    paints = []
    for name in colours:
        albedo, rough = PAINTS[name][int(rng.integers(len(PAINTS[name])))]
        paints.append((name, _jitter(albedo, rng, 0.08), float(rough * rng.uniform(0.8, 1.25))))
    lamps = _lamps(rng)
    size = rng.uniform(8, 12)
    distance = height / math.cos(math.radians(camera.tilt))
    return RealSetup(
        tray=tray,
        camera=camera,
        lamps=lamps,
        ambient=float(rng.uniform(0.03, 0.5)),
        paints=tuple(paints),
        cube_size=size,
        bevel=size * rng.uniform(0.06, 0.12),
        white_balance=float(
            np.clip(np.mean([lp.kelvin for lp in lamps]) + rng.normal(0, 350), 2500, 7000)
        ),
        aperture=rng.uniform(0.3, 1.2),
        focus=distance * rng.uniform(0.93, 1.07),
        distortion=rng.uniform(-0.25, 0.05),
        noise=rng.uniform(1.5, 5.0),
        jpeg_quality=int(rng.integers(60, 93)),
        seed=int(rng.integers(2**31)),
    )


def _lamps(rng) -> tuple[Lamp, ...]:
    """One or two lights: a ceiling or desk lamp, perhaps a window from one side."""
    lamps = [
        Lamp(
            kelvin=rng.uniform(2700, 6500),
            azimuth=rng.uniform(0, 360),
            elevation=rng.uniform(45, 85),
            distance=rng.uniform(700, 1800),
            size=rng.uniform(60, 300),
            power=1.0,
        )
    ]
    if rng.random() < 0.5:
        lamps.append(
            Lamp(
                kelvin=rng.uniform(5000, 6500),
                azimuth=rng.uniform(0, 360),
                elevation=rng.uniform(15, 45),
                distance=rng.uniform(1200, 2500),
                size=rng.uniform(600, 1200),
                power=rng.uniform(0.3, 1.0),
            )
        )
    return tuple(lamps)


def drift(setup: RealSetup, rng: np.random.Generator) -> RealSetup:
    """The same table after calibration under changed light: lamps moved, warmer or cooler,
    dimmer or brighter; the camera's exposure and white balance stay locked."""
    lamps = []
    for lamp in setup.lamps:
        kelvin = float(
            np.clip(lamp.kelvin + rng.choice([-1, 1]) * rng.uniform(500, 1800), 2700, 6500)
        )
        lamps.append(
            replace(
                lamp,
                kelvin=kelvin,
                azimuth=(lamp.azimuth + rng.uniform(-120, 120)) % 360,
                elevation=float(np.clip(lamp.elevation + rng.uniform(-20, 20), 15, 85)),
                power=lamp.power * rng.uniform(0.6, 1.4),
            )
        )
    return replace(setup, lamps=tuple(lamps), ambient=setup.ambient * rng.uniform(0.6, 1.5))


def frame_tray(camera: Camera, tray: RealTray, fill: float) -> Camera:
    """The focal length at which the floor fills `fill` of the 4:3 frame (centred lens)."""
    R, C = camera.pose()
    cam = (tray.floor_corners() - C) @ R.T
    uv = cam[:, :2] / cam[:, 2:3]
    reach = np.abs(uv).max(0)
    return replace(camera, focal=float(fill * min(0.5 / reach[0], 0.375 / reach[1])))


def _jitter(rgb, rng, spread: float) -> tuple[float, float, float]:
    return tuple(float(np.clip(v * rng.uniform(1 - spread, 1 + spread), 0.0, 1.0)) for v in rgb)
