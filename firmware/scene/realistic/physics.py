"""Thrown cubes as rigid bodies (pybullet, DIRECT mode): out of the tower's exit, bouncing
off the tray's floor and walls and off each other, until everything rests.

pybullet works in metres and kilograms here (its collision margins are tuned for bodies of
centimetres and up; a cube of 10 mm is at the small end, so the step is short and the
solver does more iterations). Poses are returned in the scene's millimetres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from firmware.errors import FirmwareError
from firmware.scene.realistic.setup import RealSetup

STEP = 1 / 960  # s
WOOD_DENSITY = 650.0  # kg/m^3 (beech, maple)
# Wood on wood or felt: sliding friction and the bounce of a hard, light cube.
FRICTION = 0.45
RESTITUTION = 0.35
STILL_SPEED = 0.004  # m/s: a cube slower than this (and not turning) is at rest
STILL_SPIN = 0.15  # rad/s
MAX_TIME = 8.0  # s of simulation before a throw is given up as never settling
MM = 1000.0
# A top face with less than this share of it in view is mostly hidden (as in the generator).
MOSTLY_HIDDEN = 0.15


@dataclass(frozen=True)
class Body:
    """A cube at one instant: centre (mm), orientation quaternion (x, y, z, w)."""

    colour: str
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)

    def rotation(self) -> np.ndarray:
        x, y, z, w = self.orientation
        return np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
            ]
        )


@dataclass(frozen=True)
class Throw:
    """Cubes leaving the tower: colour and the time (s after the throw starts) each emerges."""

    cubes: tuple[tuple[str, float], ...]
    speed: float  # m/s, mean speed out of the exit
    spread: float  # radians, spread of the directions round straight into the tray


@dataclass
class Simulation:
    """The tray and its cubes in pybullet; `bodies()` gives the state, `run()` moves it."""

    setup: RealSetup
    rng: np.random.Generator
    client: int = -1
    ids: list[int] = field(default_factory=list)
    colours: list[str] = field(default_factory=list)
    tints: list[tuple[float, float, float]] = field(default_factory=list)
    time: float = 0.0

    def __post_init__(self) -> None:
        import pybullet as pb

        self.pb = pb
        self.client = pb.connect(pb.DIRECT)
        pb.setGravity(0, 0, -9.81, physicsClientId=self.client)
        pb.setPhysicsEngineParameter(
            fixedTimeStep=STEP,
            numSolverIterations=60,
            deterministicOverlappingPairs=1,
            physicsClientId=self.client,
        )
        for half, centre in self.setup.tray.boxes():
            shape = pb.createCollisionShape(
                pb.GEOM_BOX, halfExtents=[v / MM for v in half], physicsClientId=self.client
            )
            body = pb.createMultiBody(
                0, shape, basePosition=[v / MM for v in centre], physicsClientId=self.client
            )
            pb.changeDynamics(
                body,
                -1,
                lateralFriction=FRICTION,
                restitution=RESTITUTION,
                physicsClientId=self.client,
            )

    def close(self) -> None:
        self.pb.disconnect(self.client)

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def add(self, colour: str, position, velocity, spin, orientation=None) -> None:
        """A cube at `position` (mm) moving at `velocity` (m/s), turning at `spin` (rad/s)."""
        pb, half = self.pb, self.setup.cube_size / 2 / MM
        shape = pb.createCollisionShape(
            pb.GEOM_BOX, halfExtents=[half] * 3, physicsClientId=self.client
        )
        mass = WOOD_DENSITY * (2 * half) ** 3
        if orientation is None:
            orientation = pb.getQuaternionFromEuler(self.rng.uniform(-math.pi, math.pi, 3).tolist())
        body = pb.createMultiBody(
            mass,
            shape,
            basePosition=[v / MM for v in position],
            baseOrientation=orientation,
            physicsClientId=self.client,
        )
        pb.changeDynamics(
            body,
            -1,
            lateralFriction=FRICTION * self.rng.uniform(0.85, 1.15),
            restitution=RESTITUTION * self.rng.uniform(0.8, 1.2),
            rollingFriction=1e-5,
            spinningFriction=1e-4,
            linearDamping=0.02,
            angularDamping=0.05,
            physicsClientId=self.client,
        )
        pb.resetBaseVelocity(body, list(velocity), list(spin), physicsClientId=self.client)
        self.ids.append(body)
        self.colours.append(colour)
        self.tints.append(tuple(float(v) for v in self.rng.uniform(0.93, 1.07, 3)))

    def bodies(self) -> list[Body]:
        out = []
        for body, colour, tint in zip(self.ids, self.colours, self.tints, strict=True):
            pos, orn = self.pb.getBasePositionAndOrientation(body, physicsClientId=self.client)
            out.append(Body(colour, tuple(v * MM for v in pos), tuple(orn), tint))
        return out

    def moving(self) -> bool:
        for body in self.ids:
            lin, ang = self.pb.getBaseVelocity(body, physicsClientId=self.client)
            if np.linalg.norm(lin) > STILL_SPEED or np.linalg.norm(ang) > STILL_SPIN:
                return True
        return False

    def step(self, seconds: float) -> None:
        for _ in range(max(1, round(seconds / STEP))):
            self.pb.stepSimulation(physicsClientId=self.client)
        self.time += max(1, round(seconds / STEP)) * STEP

    def settle(self, limit: float = MAX_TIME) -> None:
        """Run until nothing moves for 0.2 s (raises FirmwareError after `limit` s)."""
        still, start = 0.0, self.time
        while still < 0.2:
            self.step(0.05)
            still = 0.0 if self.moving() else still + 0.05
            if self.time - start > limit:
                raise FirmwareError(f"the cubes did not come to rest within {limit:.0f} s")
        self.stop()

    def stop(self) -> None:
        """Zero the last creeping velocities, so the rest pose is the pose."""
        for body in self.ids:
            self.pb.resetBaseVelocity(body, [0, 0, 0], [0, 0, 0], physicsClientId=self.client)

    def throw(self, throw: Throw, record: float | None = None):
        """Release the throw's cubes at their times; with `record` (s) the poses every
        `record` seconds until everything rests, as (time, bodies, moving) from the throw's
        start. Returns the record (empty without `record`)."""
        tray, rng = self.setup.tray, self.rng
        x0, y0 = tray.exit_point(self.setup.cube_size)
        start, frames, pending = self.time, [], sorted(throw.cubes, key=lambda c: c[1])
        still, next_frame = 0.0, 0.0
        while pending or still < 0.25:
            t = self.time - start
            while pending and pending[0][1] <= t:
                spot = self._free_exit_spot(x0, y0)
                if spot is None:
                    break  # the mouth is jammed: the cube waits in the tower for room
                colour, _ = pending.pop(0)
                x, z = spot
                direction = rng.normal(0, throw.spread)
                speed = throw.speed * rng.uniform(0.6, 1.4)
                velocity = (
                    speed * math.sin(direction),
                    -speed * math.cos(direction),
                    rng.uniform(-0.1, 0.2),
                )
                self.add(
                    colour,
                    (x, y0, z),
                    velocity,
                    rng.normal(0, 25, 3).tolist(),
                )
            if record is not None and t >= next_frame - 1e-9:
                frames.append((t, self.bodies(), self.moving() or bool(pending)))
                next_frame += record
            self.step(STEP * 8)
            still = 0.0 if self.moving() else still + STEP * 8
            if t > MAX_TIME:
                raise FirmwareError(f"the cubes did not come to rest within {MAX_TIME:.0f} s")
        self.stop()
        return frames

    def _free_exit_spot(self, x0: float, y0: float, tries: int = 6):
        """(x, z) in the exit's mouth where a new cube overlaps none, or None. A cube made
        inside another would be thrown apart by the solver, through a wall. When cubes jam
        the mouth, the next comes over them, as it tumbles out of a real tower."""
        tray, rng, size = self.setup.tray, self.rng, self.setup.cube_size
        centres = np.array([b.position for b in self.bodies()]).reshape(-1, 3)
        for level in range(4):
            for _ in range(tries):
                x = x0 + rng.uniform(-0.35, 0.35) * (tray.exit_width - size)
                z = size / 2 + rng.uniform(1, 10) + level * size * 1.3
                gap = np.linalg.norm(centres - (x, y0, z), axis=1)
                if not len(gap) or gap.min() > size * 1.8:
                    return x, z
        return None

    def visibility(self, camera: np.ndarray) -> list[tuple[float, np.ndarray | None]]:
        """Per cube, what the camera at `camera` (mm) sees of it: rays from the camera to points
        on its faces towards it (a 5 x 5 grid on each, just inside the edges), cast against the
        physics shapes, walls included.

        The share is that of the 3 x 3 points among them that the ray reaches first (0: fully
        hidden). The seen point (world mm, None when hidden) is where the cube is seen, the same
        rule as the first generator's truth: the middle of the visible part of its top face,
        or, when less than MOSTLY_HIDDEN of the top shows (a cube under another), the middle
        of all of it that shows; the reached point nearest that middle, so it is on the cube."""
        half = self.setup.cube_size / 2
        ticks = np.linspace(-0.6, 0.6, 5)  # every other one: the share's -0.6, 0, 0.6
        out = []
        for body, b in zip(self.ids, self.bodies(), strict=True):
            R, centre = b.rotation(), np.array(b.position)
            up_axis = int(np.argmax(np.abs(R[2])))
            targets, on_top, in_share = [], [], []
            for axis in range(3):
                for sign in (-1, 1):
                    normal = R[:, axis] * sign
                    if normal @ (camera - centre) <= 0:
                        continue  # faces away from the camera
                    u, v = R[:, (axis + 1) % 3], R[:, (axis + 2) % 3]
                    top = axis == up_axis and sign == np.sign(R[2, axis])
                    for i, a in enumerate(ticks):
                        for j, c in enumerate(ticks):
                            targets.append(centre + half * (normal + a * u + c * v))
                            on_top.append(top)
                            in_share.append(i % 2 == 0 and j % 2 == 0)
            # Aim just past each point, so the ray that reaches it meets this cube first.
            ends = [(camera + (t - camera) * 1.001) / MM for t in targets]
            hits = self.pb.rayTestBatch(
                [(camera / MM).tolist()] * len(ends),
                [e.tolist() for e in ends],
                physicsClientId=self.client,
            )
            seen = np.array([h[0] == body for h in hits], bool)
            share = float(seen[np.array(in_share, bool)].mean()) if targets else 0.0
            out.append((share, _seen_point(np.array(targets).reshape(-1, 3), seen, on_top)))
        return out

    def drop_on(self, colour: str, below: Body) -> None:
        """A cube let go just above another (the top of a clump: piles of 2-3)."""
        rng, size = self.rng, self.setup.cube_size
        x, y, z = below.position
        position = (
            x + rng.uniform(-0.3, 0.3) * size,
            y + rng.uniform(-0.3, 0.3) * size,
            z + size * 1.6,
        )
        yaw = rng.uniform(-math.pi, math.pi)
        self.add(
            colour,
            position,
            (0, 0, 0),
            (0, 0, rng.normal(0, 1)),
            self.pb.getQuaternionFromEuler([rng.normal(0, 0.05), rng.normal(0, 0.05), yaw]),
        )


def make_throw(
    colours: dict[str, int], rng: np.random.Generator, speed: float, spread: float
) -> Throw:
    """A throw of these counts: cubes emerge over 0.1-0.9 s, mixed."""
    names = [c for c, n in colours.items() for _ in range(n)]
    rng.shuffle(names)
    times = np.sort(rng.uniform(0, rng.uniform(0.1, 0.9), len(names)))
    return Throw(tuple((c, float(t)) for c, t in zip(names, times, strict=True)), speed, spread)


def counts(bodies: list[Body]) -> dict[str, int]:
    out: dict[str, int] = {}
    for b in bodies:
        out[b.colour] = out.get(b.colour, 0) + 1
    return dict(sorted(out.items()))


def rest_check(setup: RealSetup, bodies: list[Body]) -> list[str]:
    """What is physically wrong with these rest poses (empty: all fine): every cube inside
    the tray or in the mouth of the tower's exit (a jam of cubes there leaves some in it,
    on the tray's floor, as at a table), its lowest corner on the floor or touching
    another cube."""
    problems = []
    tray, half = setup.tray, setup.cube_size / 2
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
    for i, b in enumerate(bodies):
        pts = corners @ b.rotation().T + np.array(b.position)
        x, y = np.abs(pts[:, 0]).max(), pts[:, 1]
        in_floor = x <= tray.width / 2 + 0.5 and np.abs(y).max() <= tray.depth / 2 + 0.5
        in_mouth = (
            x <= tray.exit_width / 2 + 0.5
            and y.min() >= -tray.depth / 2 - 0.5
            and y.max() <= tray.depth / 2 + tray.wall_thickness + 0.5
        )
        if not (in_floor or in_mouth):
            problems.append(f"cube {i} ({b.colour}) outside the tray")
        low = pts[:, 2].min()
        near = [
            o
            for o in bodies
            if o is not b
            and np.linalg.norm(np.array(o.position) - b.position) < setup.cube_size * 1.75
        ]
        if low > 0.5 and not near:
            problems.append(f"cube {i} ({b.colour}) floats {low:.1f} mm over the floor")
    return problems


def _seen_point(targets: np.ndarray, seen: np.ndarray, on_top: list[bool]) -> np.ndarray | None:
    if not seen.any():
        return None
    top = np.array(on_top, bool)
    shown_top = seen & top
    pick = shown_top if top.any() and shown_top.sum() >= MOSTLY_HIDDEN * top.sum() else seen
    middle = targets[pick].mean(axis=0)
    candidates = targets[pick]
    return candidates[np.argmin(np.linalg.norm(candidates - middle, axis=1))]
