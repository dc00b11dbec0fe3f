"""A table set-up: the tray, the camera over it, the room light, the paints, the sensor.

World frame in millimetres: origin at the centre of the tray floor, x to the right,
y away from the player (up in the image), z up. A set-up does not depend on the image
size: focal length and principal point are fractions of the image width/height.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from firmware.errors import FirmwareError
from firmware.scene.paints import (
    DEFAULT_COLOURS,
    DEFAULT_PAINTS,
    FLOORS,
    TABLES,
    WALLS,
    Paint,
    kelvin_rgb,
    paint_from_dict,
)

FLOOR_TEXTURES = ("felt", "felt", "wood")
TABLE_TEXTURES = ("wood", "cloth")
TABLE_DROP = 5.0  # mm from the tray floor down to the table top (the tray's base)


@dataclass(frozen=True)
class Camera:
    height: float  # mm above the tray floor
    tilt: float  # degrees of the optical axis from straight down
    roll: float  # degrees about the optical axis
    yaw: float  # degrees the camera is turned about the vertical
    target: tuple[float, float]  # floor point (mm) the optical axis passes through
    focal: float  # focal length / image width
    centre: tuple[float, float]  # principal point / image size

    def pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(R, C): world->camera rotation (rows: image right, image down, forward) and centre."""
        t, r, y = (math.radians(v) for v in (self.tilt, self.roll, self.yaw))
        fwd = np.array([0.0, math.sin(t), -math.cos(t)])
        down = np.array([0.0, -1.0, 0.0])
        down = down - down.dot(fwd) * fwd
        down /= np.linalg.norm(down)
        right = np.cross(down, fwd)
        right, down = (
            math.cos(r) * right + math.sin(r) * down,
            -math.sin(r) * right + math.cos(r) * down,
        )
        rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1.0]])
        R = np.stack([rz @ right, rz @ down, rz @ fwd])
        target = np.array([self.target[0], self.target[1], 0.0])
        C = target - (rz @ fwd) * (self.height / math.cos(t))
        return R, C

    def intrinsics(self, size: tuple[int, int]) -> np.ndarray:
        w, h = size
        f = self.focal * w
        return np.array([[f, 0, self.centre[0] * w], [0, f, self.centre[1] * h], [0, 0, 1.0]])


@dataclass(frozen=True)
class Tray:
    width: float  # inner floor size, mm
    depth: float
    wall_height: float  # above the floor
    wall_thickness: float
    floor: tuple[float, float, float]  # linear RGB
    floor_texture: str  # "felt" | "wood"
    wall: tuple[float, float, float]
    table: tuple[float, float, float]
    table_texture: str  # "wood" | "cloth"

    def floor_corners(self) -> np.ndarray:
        """Floor corners (x, y, 0), clockwise seen from above starting far-left."""
        w, d = self.width / 2, self.depth / 2
        return np.array([[-w, d, 0], [w, d, 0], [w, -d, 0], [-w, -d, 0]], float)


def seen_from_centre(azimuth: float, elevation: float, distance: float) -> np.ndarray:
    """The point (mm) at this azimuth and elevation (degrees) and distance from the tray centre."""
    a, e = math.radians(azimuth), math.radians(elevation)
    return distance * np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])


@dataclass(frozen=True)
class Light:
    kelvin: float  # colour temperature of the lamp
    azimuth: float  # degrees, direction of the lamp seen from the tray centre
    elevation: float  # degrees above the table
    distance: float  # mm from the tray centre (a lamp, so light falls off across the tray)
    strength: float  # direct light on a floor facing it, relative to the camera's exposure
    ambient: float  # room fill light
    softness: float = 1.0  # shadow penumbra: small bulb ~0.6, shaded or diffuse lamp ~2.5

    def position(self) -> np.ndarray:
        return seen_from_centre(self.azimuth, self.elevation, self.distance)


@dataclass(frozen=True)
class TableSetup:
    camera: Camera
    tray: Tray
    light: Light
    paints: tuple[
        tuple[str, Paint], ...
    ]  # (colour name, paint), hashable so backgrounds can be cached
    cube_size: float  # mm, edge of a cube
    white_balance: float  # kelvin the camera's locked white balance assumes
    exposure: float  # linear gain of the locked exposure
    noise: float  # sensor noise, sigma in 8-bit levels
    vignetting: float  # brightness lost in the image corners, 0..1
    jpeg_quality: int
    seed: int  # textures and the noise pattern
    blur: float = 0.7  # lens softness, Gaussian sigma in px at 640x480
    table_cubes: int = 0  # loose cubes on the table outside the tray (in view, never counted)
    cards: int = 0  # playing cards on the table round the tray

    @property
    def colours(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.paints)

    def paint(self, colour: str) -> Paint:
        for name, paint in self.paints:
            if name == colour:
                return paint
        raise FirmwareError(
            f"colour {colour!r} has no paint in this set-up (it has {', '.join(self.colours)})"
        )


def _paints(
    colours: Sequence[str], paints: Mapping[str, dict] | None, rng
) -> tuple[tuple[str, Paint], ...]:
    known = {**DEFAULT_PAINTS, **(paints or {})}
    out = []
    for name in colours:
        if name not in known:
            raise FirmwareError(
                f"unknown colour {name!r}: give its paint, e.g. paints={{{name!r}: "
                "{'albedo': (r, g, b)}}"
            )
        base = paint_from_dict(name, known[name])
        # Each set of cubes is its own paint batch: a little off the nominal colour.
        albedo = tuple(float(np.clip(v * rng.uniform(0.88, 1.12), 0.0, 1.0)) for v in base.albedo)
        out.append((name, replace(base, albedo=albedo)))
    return tuple(out)


def random_setup(
    rng: np.random.Generator,
    colours: Sequence[str] = DEFAULT_COLOURS,
    paints: Mapping[str, dict] | None = None,
) -> TableSetup:
    """A random table: tray, camera 25-45 cm above it, lamp, paints for `colours`.

    `paints` adds or overrides paint dicts (see DEFAULT_PAINTS) for any colour name.
    """
    if not colours:
        raise FirmwareError("a set-up needs at least one colour")
    width = rng.uniform(150, 200)
    floor_name = rng.choice(sorted(FLOORS))
    tray = Tray(
        width=width,
        depth=width * rng.uniform(0.68, 0.80),
        wall_height=rng.uniform(16, 28),
        wall_thickness=rng.uniform(6, 12),
        floor=_jitter(FLOORS[floor_name], rng, 0.12),
        floor_texture="wood" if floor_name == "light wood" else str(rng.choice(FLOOR_TEXTURES)),
        wall=_jitter(WALLS[rng.choice(sorted(WALLS))], rng, 0.1),
        table=_jitter(TABLES[rng.choice(sorted(TABLES))], rng, 0.12),
        table_texture=str(rng.choice(TABLE_TEXTURES)),
    )
    camera = Camera(
        height=rng.uniform(250, 450),
        tilt=rng.uniform(0, 25),
        roll=rng.uniform(-10, 10),
        yaw=rng.uniform(-8, 8),
        target=(rng.uniform(-8, 8), rng.uniform(-8, 8)),
        focal=1.0,
        centre=(0.5, 0.5),
    )
    camera = _frame_tray(
        camera, tray, fill=rng.uniform(0.74, 0.86), shift=rng.uniform(-0.03, 0.03, 2)
    )
    light = Light(
        kelvin=rng.uniform(2700, 6500),
        azimuth=rng.uniform(0, 360),
        elevation=rng.uniform(35, 80),
        distance=rng.uniform(600, 1600),
        strength=1.0,
        ambient=rng.uniform(0.25, 0.6),
        softness=rng.uniform(0.6, 2.5),
    )
    # Auto exposure was locked with the tray in view: the floor centre lands near mid-grey.
    lit = light.ambient + light.strength * math.sin(math.radians(light.elevation))
    exposure = rng.uniform(0.8, 1.25) / lit
    return TableSetup(
        camera=camera,
        tray=tray,
        light=light,
        paints=_paints(colours, paints, rng),
        cube_size=rng.uniform(9.2, 10.5),
        white_balance=float(np.clip(light.kelvin + rng.normal(0, 700), 2500, 7000)),
        exposure=exposure,
        noise=rng.uniform(1.5, 4.0),
        vignetting=rng.uniform(0.08, 0.35),
        jpeg_quality=int(rng.integers(55, 93)),
        seed=int(rng.integers(2**31)),
        blur=rng.uniform(0.45, 1.1),
        table_cubes=int(rng.choice([0, 0, 2, 4, 6])),
        cards=int(rng.choice([0, 0, 1, 2])),
    )


def drift_light(setup: TableSetup, rng: np.random.Generator) -> TableSetup:
    """The same table and camera (exposure and white balance locked) under a changed room
    light: a warmer or cooler bulb, from elsewhere, 15-40% dimmer or brighter on the floor."""
    old = setup.light
    kelvin = old.kelvin + rng.choice([-1, 1]) * rng.uniform(700, 2000)
    if not 2500 <= kelvin <= 7000:
        kelvin = old.kelvin - (kelvin - old.kelvin)
    light = replace(
        old,
        kelvin=float(np.clip(kelvin, 2500, 7000)),
        azimuth=(old.azimuth + rng.uniform(40, 140) * rng.choice([-1, 1])) % 360,
        elevation=float(np.clip(old.elevation + rng.uniform(-20, 20), 30, 85)),
        ambient=old.ambient * rng.uniform(0.7, 1.3),
        softness=rng.uniform(0.6, 2.5),
    )
    drifted = replace(setup, light=light)
    target = 1 + rng.choice([-1, 1]) * rng.uniform(0.15, 0.4)
    scale = target * _floor_light(setup) / _floor_light(drifted)
    return replace(
        drifted,
        light=replace(light, strength=light.strength * scale, ambient=light.ambient * scale),
    )


def _floor_light(setup: TableSetup) -> float:
    """Mean light on the floor centre, camera units (see the renderer's lighting)."""
    colour = light_rgb(setup)
    light = setup.light
    return float(
        np.mean(
            light.ambient * (0.5 * colour + 0.5)
            + light.strength * math.sin(math.radians(light.elevation)) * colour
        )
    )


def _jitter(rgb, rng, spread: float) -> tuple[float, float, float]:
    return tuple(float(np.clip(v * rng.uniform(1 - spread, 1 + spread), 0.0, 1.0)) for v in rgb)


def _frame_tray(camera: Camera, tray: Tray, fill: float, shift) -> Camera:
    """Choose focal length and principal point so the floor fills `fill` of the frame (4:3)."""
    R, C = camera.pose()
    cam = (tray.floor_corners() - C) @ R.T
    uv = cam[:, :2] / cam[:, 2:3]
    lo, hi = uv.min(0), uv.max(0)
    # image width units: x spans 1, y spans 0.75
    focal = fill * min(1.0 / (hi[0] - lo[0]), 0.75 / (hi[1] - lo[1]))
    mid = (lo + hi) / 2 * focal
    return replace(
        camera,
        focal=float(focal),
        centre=(float(0.5 - mid[0] + shift[0]), float(0.5 - mid[1] / 0.75 + shift[1])),
    )


def light_rgb(setup: TableSetup) -> np.ndarray:
    """Lamp colour as the camera records it (after its locked white balance)."""
    return np.array(kelvin_rgb(setup.light.kelvin)) / np.array(kelvin_rgb(setup.white_balance))


def project(setup: TableSetup, points: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """World points (..., 3) in mm -> image pixels (..., 2)."""
    R, C = setup.camera.pose()
    K = setup.camera.intrinsics(size)
    cam = (points - C) @ R.T
    uv = cam[..., :2] / cam[..., 2:3]
    return uv * K[0, 0] + K[:2, 2]
