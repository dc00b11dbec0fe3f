"""Where the cubes lie: scattered, in touching clusters, or in small piles.

Poses are physical: cubes on the floor do not overlap, a cube on a pile rests on
the cubes below it, a leaning cube has an edge on the floor and a corner against
its neighbour. Every cube keeps its top in the camera's view (walls hide nothing).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import cv2
import numpy as np

from firmware.errors import FirmwareError
from firmware.scene.setup import TableSetup, project

KINDS = ("scattered", "touching", "piles")


@dataclass(frozen=True)
class CubePose:
    colour: str
    x: float  # centre of the cube, mm, world frame (tray floor centre = origin)
    y: float
    z: float
    yaw: float = 0.0  # degrees about the vertical
    pitch: float = 0.0  # degrees about the cube's own x axis (tumbling or leaning)
    roll: float = 0.0  # degrees about the cube's own y axis
    size: float = 10.0  # edge, mm
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)  # this cube's paint relative to its batch
    level: int = 1  # 1 = on the floor, 2 = resting on other cubes
    leaning: bool = False

    def rotation(self) -> np.ndarray:
        return rotation(self.yaw, self.pitch, self.roll)


def rotation(yaw: float, pitch: float, roll: float) -> np.ndarray:
    y, p, r = (math.radians(v) for v in (yaw, pitch, roll))
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1.0]])
    rx = np.array([[1.0, 0, 0], [0, math.cos(p), -math.sin(p)], [0, math.sin(p), math.cos(p)]])
    ry = np.array([[math.cos(r), 0, math.sin(r)], [0, 1.0, 0], [-math.sin(r), 0, math.cos(r)]])
    return rz @ ry @ rx


def footprint(x: float, y: float, yaw: float, size: float) -> np.ndarray:
    """The 4 corners (x, y) of an upright cube's square on the floor."""
    a = math.radians(yaw)
    u = np.array([math.cos(a), math.sin(a)]) * size / 2
    v = np.array([-math.sin(a), math.cos(a)]) * size / 2
    c = np.array([x, y])
    return np.array([c + u + v, c - u + v, c - u - v, c + u - v])


def overlap(a: np.ndarray, b: np.ndarray, gap: float = 0.0) -> bool:
    """Whether two convex floor polygons come closer than `gap` (separating axis test)."""
    for poly in (a, b):
        edges = np.roll(poly, -1, axis=0) - poly
        for e in edges:
            n = np.array([-e[1], e[0]]) / (np.hypot(*e) or 1.0)
            pa, pb = a @ n, b @ n
            if pa.max() + gap <= pb.min() or pb.max() + gap <= pa.min():
                return False
    return True


class Placer:
    """Floor occupancy and the rules for a free, visible place for a cube."""

    def __init__(self, setup: TableSetup, rng: np.random.Generator, existing=()):
        self.setup, self.rng = setup, rng
        self.size = setup.cube_size
        self.feet: list[np.ndarray] = []  # floor polygons of everything on the floor
        self.group: list[int] = []  # cluster id per polygon; clusters keep apart from each other
        self._R, self._C = setup.camera.pose()
        for pose in existing:
            self.add(pose, group=-1)

    def add(self, pose: CubePose, group: int) -> None:
        foot = _foot(pose)
        if foot is not None:
            self.feet.append(foot)
            self.group.append(group)

    def free(self, foot: np.ndarray, group: int, touching_ok: bool) -> bool:
        tray = self.setup.tray
        margin = 1.5
        if (
            np.abs(foot[:, 0]).max() > tray.width / 2 - margin
            or np.abs(foot[:, 1]).max() > tray.depth / 2 - margin
        ):
            return False
        for other, g in zip(self.feet, self.group, strict=True):
            same = touching_ok and g == group and group >= 0
            gap = -0.05 if same else 0.45 * self.size
            if overlap(foot, other, gap):
                return False
        return True

    def visible(self, point: np.ndarray) -> bool:
        """Whether the ray from a point to the camera clears the tray walls."""
        tray = self.setup.tray
        C = self._C
        for axis, half in ((0, tray.width / 2), (1, tray.depth / 2)):
            for sign in (-1, 1):
                wall = sign * half
                if sign * C[axis] <= half:
                    continue  # the camera is on this wall's inner side
                u = (wall - point[axis]) / (C[axis] - point[axis])
                if point[2] + u * (C[2] - point[2]) < tray.wall_height + 2.0:
                    return False
        return True

    def random_spot(self) -> tuple[float, float]:
        tray = self.setup.tray
        m = self.size * 0.75
        return (
            self.rng.uniform(-tray.width / 2 + m, tray.width / 2 - m),
            self.rng.uniform(-tray.depth / 2 + m, tray.depth / 2 - m),
        )

    def try_pose(self, pose: CubePose, group: int, touching_ok: bool = False) -> bool:
        """Place a cube that stands on the floor if its place is free and its top in view."""
        foot = _foot(pose)
        top = np.array([pose.x, pose.y, pose.z + pose.size / 2])
        if not self.free(foot, group, touching_ok) or not self.visible(top):
            return False
        self.feet.append(foot)
        self.group.append(group)
        return True


def _foot(pose: CubePose) -> np.ndarray | None:
    """The floor polygon under a cube's low corners (None for a cube up on a pile)."""
    corners = _corners(pose)
    low = corners[corners[:, 2] < 0.5 * pose.size]
    if not len(low):
        return None
    return cv2.convexHull(low[:, :2].astype(np.float32)).reshape(-1, 2).astype(float)


def _corners(pose: CubePose) -> np.ndarray:
    s = pose.size / 2
    local = np.array([[x, y, z] for z in (-s, s) for y in (-s, s) for x in (-s, s)])
    return local @ pose.rotation().T + np.array([pose.x, pose.y, pose.z])


def _top_in_view(setup: TableSetup, below: CubePose, above: CubePose) -> float:
    """Share of `below`'s top face the camera sees past `above` (image-space polygons)."""
    corners = _corners(below)
    top = project(setup, corners[corners[:, 2] > below.z], (640, 480)).astype(np.float32)
    top = cv2.convexHull(top)
    cover = cv2.convexHull(project(setup, _corners(above), (640, 480)).astype(np.float32))
    area = cv2.contourArea(top)
    shared, _ = cv2.intersectConvexConvex(top, cover)
    return 1 - shared / max(area, 1e-6)


def _tint(setup: TableSetup, colour: str, rng) -> tuple[float, float, float]:
    spread = setup.paint(colour).variation
    common = rng.normal(1.0, spread)
    return tuple(float(np.clip(common * rng.normal(1.0, spread / 3), 0.7, 1.3)) for _ in range(3))


def _cube(setup, colour, rng, x, y, yaw, z=None, **kw) -> CubePose:
    size = setup.cube_size * rng.uniform(0.985, 1.015)
    return CubePose(
        colour,
        float(x),
        float(y),
        float(size / 2 if z is None else z),
        float(yaw % 90),
        size=float(size),
        tint=_tint(setup, colour, rng),
        **kw,
    )


def layout(
    setup: TableSetup, counts: Mapping[str, int], kind: str, rng: np.random.Generator, existing=()
) -> list[CubePose]:
    """Poses for `counts` cubes per colour laid out as `kind`.

    kind: "scattered" (no cube touches another), "touching" (most cubes in clusters
    of 2-4 in contact), "piles" (small piles: a cube resting on 1-4 others, and
    cubes leaning against a neighbour, among touching and scattered ones).
    `existing` poses stay where they are and new cubes avoid them.
    """
    if kind not in KINDS:
        raise FirmwareError(f"unknown layout kind {kind!r}: use one of {', '.join(KINDS)}")
    colours = []
    for colour, n in sorted(counts.items()):
        if n < 0:
            raise FirmwareError(f"cannot lay out {n} {colour} cubes")
        setup.paint(colour)  # a colour without paint fails here, by name
        colours += [colour] * int(n)
    rng.shuffle(colours)
    area = setup.tray.width * setup.tray.depth
    if (len(colours) + len(existing)) * 2.2 * setup.cube_size**2 > 0.5 * area:
        raise FirmwareError(
            f"cannot fit {len(colours) + len(existing)} cubes into a "
            f"{setup.tray.width:.0f}x{setup.tray.depth:.0f} mm tray"
        )
    for _ in range(12):
        placer = Placer(setup, rng, existing)
        poses = _arrange(placer, list(colours), kind, rng)
        if poses is not None:
            return poses
    raise FirmwareError(
        f"cannot fit {len(colours)} cubes {kind} into a "
        f"{setup.tray.width:.0f}x{setup.tray.depth:.0f} mm tray"
    )


def _arrange(placer: Placer, colours: list[str], kind: str, rng) -> list[CubePose] | None:
    setup = placer.setup
    poses: list[CubePose] = []
    group = 0
    if kind == "piles":
        piles = max(1, round(len(colours) * rng.uniform(0.12, 0.22)))
        leans = int(rng.integers(0, 3)) if len(colours) >= 4 else 0
        for _ in range(piles):
            made = _pile(placer, colours, rng, group)
            if made is None:
                return None
            poses += made
            group += 1
        for _ in range(leans):
            made = _lean(placer, colours, rng, group)
            if made is None:
                return None
            poses += made
            group += 1
    if kind in ("touching", "piles"):
        share = rng.uniform(0.55, 0.85) if kind == "touching" else rng.uniform(0.2, 0.5)
        to_cluster = int(round(len(colours) * share))
        while to_cluster >= 2 and len(colours) >= 2:
            n = int(min(rng.integers(2, 5), to_cluster, len(colours)))
            made = _cluster(placer, colours[:n], rng, group)
            if made is None:
                return None
            del colours[:n]
            poses += made
            to_cluster -= n
            group += 1
    for colour in colours:
        for _ in range(300):
            x, y = placer.random_spot()
            pose = _cube(setup, colour, rng, x, y, rng.uniform(0, 90))
            if placer.try_pose(pose, group=-1):
                poses.append(pose)
                break
        else:
            return None
    return poses


def _neighbour(setup, colour, rng, base: CubePose, aligned: bool) -> CubePose:
    """A cube in contact with a face of `base`, on the floor."""
    s = setup.cube_size
    d = rng.uniform(-4, 4) if aligned else rng.uniform(12, 45) * rng.choice([-1, 1])
    side = int(rng.integers(4))
    a = math.radians(base.yaw + 90 * side)
    n = np.array([math.cos(a), math.sin(a)])
    t = np.array([-n[1], n[0]])
    rd = math.radians(d)
    reach = base.size / 2 + s / 2 * (abs(math.cos(rd)) + abs(math.sin(rd)))
    slide = rng.uniform(-0.45, 0.45) * s if aligned else rng.uniform(-0.25, 0.25) * s
    c = np.array([base.x, base.y]) + n * (reach + rng.uniform(0.05, 0.35)) + t * slide
    return _cube(setup, colour, rng, c[0], c[1], base.yaw + d)


def _cluster(placer: Placer, colours: list[str], rng, group: int) -> list[CubePose] | None:
    setup = placer.setup
    for _ in range(200):
        x, y = placer.random_spot()
        seed = _cube(setup, colours[0], rng, x, y, rng.uniform(0, 90))
        if placer.try_pose(seed, group):
            break
    else:
        return None
    members = [seed]
    for colour in colours[1:]:
        for _ in range(60):
            base = members[int(rng.integers(len(members)))]
            pose = _neighbour(setup, colour, rng, base, aligned=rng.random() < 0.65)
            if placer.try_pose(pose, group, touching_ok=True):
                members.append(pose)
                break
        else:
            return None
    return members


def _pile(placer: Placer, colours: list[str], rng, group: int) -> list[CubePose] | None:
    """1-4 cubes on the floor, touching, and one more resting on them (level 2)."""
    setup = placer.setup
    below = int(rng.choice([1, 2, 2, 3, 4]))
    if len(colours) < below + 1:
        below = len(colours) - 1
    if below < 1:
        return None
    for _ in range(30):
        x, y = placer.random_spot()
        yaw = rng.uniform(0, 90)
        s = setup.cube_size * 1.03
        a = math.radians(yaw)
        u, v = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
        offsets = {
            1: [(0, 0)],
            2: [(0, 0), (1, 0)],
            3: [(0, 0), (1, 0), (0, 1)],
            4: [(0, 0), (1, 0), (0, 1), (1, 1)],
        }[below]
        base = []
        for i, (i0, i1) in enumerate(offsets):
            c = np.array([x, y]) + (i0 * u + i1 * v) * (s + rng.uniform(0, 0.3))
            base.append(_cube(setup, colours[i], rng, c[0], c[1], yaw + rng.uniform(-1.5, 1.5)))
        centre = np.mean([[p.x, p.y] for p in base], axis=0)
        if below == 1:
            # resting on one cube, overhanging it but with its weight over the support
            # far enough off-centre that part of the lower cube's top stays in view
            direction = rng.uniform(0, 2 * math.pi)
            centre = centre + rng.uniform(0.38, 0.48) * s * np.array(
                [math.cos(direction), math.sin(direction)]
            )
        elif below == 3:
            centre = centre + rng.uniform(-0.1, 0.1, 2) * s
        else:
            centre = centre + rng.uniform(-0.15, 0.15, 2) * s
        top_z = max(p.z + p.size / 2 for p in base)
        top = _cube(setup, colours[below], rng, centre[0], centre[1], rng.uniform(0, 90), level=2)
        top = CubePose(**{**top.__dict__, "z": top_z + top.size / 2})
        if min(_top_in_view(setup, p, top) for p in base) < 0.3:
            continue  # the camera would see too little of a cube under the pile
        saved = (list(placer.feet), list(placer.group))
        if all(placer.try_pose(p, group, touching_ok=True) for p in base) and placer.visible(
            np.array([top.x, top.y, top.z + top.size / 2])
        ):
            del colours[: below + 1]
            return base + [top]
        placer.feet, placer.group = saved
    return None


def _lean(placer: Placer, colours: list[str], rng, group: int) -> list[CubePose] | None:
    """A cube standing, and one with an edge on the floor leaning against it."""
    setup = placer.setup
    if len(colours) < 2:
        return None
    for _ in range(30):
        x, y = placer.random_spot()
        yaw = rng.uniform(0, 90)
        stand = _cube(setup, colours[0], rng, x, y, yaw)
        theta = rng.uniform(14, 32)
        side = int(rng.integers(4))
        # the leaner is turned to face the stander along its own x axis and tipped towards it
        lean_yaw = yaw + 90 * side
        a = math.radians(lean_yaw)
        n = np.array([math.cos(a), math.sin(a)])
        s = stand.size
        probe = _cube(setup, colours[1], rng, 0, 0, lean_yaw)
        ls = probe.size
        rt = math.radians(theta)
        z = ls / 2 * (math.cos(rt) + math.sin(rt))
        # tipping about its y axis by -theta moves its top towards -x, i.e. towards the stander
        reach = s / 2 + ls / 2 * (math.cos(rt) + math.sin(rt)) + 0.1
        c = np.array([x, y]) + n * reach
        lean = CubePose(
            colours[1],
            float(c[0]),
            float(c[1]),
            float(z),
            float(lean_yaw),
            0.0,
            -theta,
            ls,
            probe.tint,
            1,
            True,
        )
        saved = (list(placer.feet), list(placer.group))
        if placer.try_pose(stand, group) and placer.try_pose(lean, group, touching_ok=True):
            del colours[:2]
            return [stand, lean]
        placer.feet, placer.group = saved
    return None
