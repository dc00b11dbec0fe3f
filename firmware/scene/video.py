"""Drop videos: thrown cubes come over a tray wall, fall, bounce, slide and come to rest,
sometimes with a late straggler or a player's hand in the tray; every frame has its truth."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from firmware.errors import FirmwareError
from firmware.scene.layout import CubePose, layout
from firmware.scene.lighting import floor_shadow
from firmware.scene.render import Hand, counts_of, draw
from firmware.scene.setup import TableSetup

TAIL = 2.2  # s of still tray after the last movement


@dataclass
class VideoFrame:
    image: np.ndarray  # BGR uint8
    moving: bool  # a cube or a hand is moving (a hand in view counts as moving)
    counts: dict[str, int]  # cubes at rest in the tray (zeros omitted)
    time: float  # s since the first frame


@dataclass(frozen=True)
class Flight:
    """One thrown cube's path from the wall it comes over to its resting pose."""

    rest: CubePose
    start: tuple[float, float, float]
    t0: float
    duration: float
    spin: float  # degrees of yaw still to unwind at the start
    tumble: float  # degrees of tumbling amplitude
    bounce: float  # mm, height of the first bounce

    @property
    def t1(self) -> float:
        return self.t0 + self.duration

    def pose(self, t: float) -> CubePose | None:
        if t < self.t0:
            return None  # still in the tower
        if t >= self.t1:
            return self.rest
        tau = (t - self.t0) / self.duration
        r = self.rest
        slide = 1 - (1 - tau) ** 2  # constant deceleration: friction
        x = self.start[0] + (r.x - self.start[0]) * slide
        y = self.start[1] + (r.y - self.start[1]) * slide
        fall = 0.22
        if tau < fall:
            z = r.z + (self.start[2] - r.z) * (1 - (tau / fall) ** 2)
        else:
            z = r.z + self.bounce * math.exp(-6 * (tau - fall)) * abs(
                math.sin(math.pi * (tau - fall) / 0.16)
            )
        decay = (1 - tau) ** 2
        pitch = r.pitch + self.tumble * decay * math.sin(3 * math.pi * tau)
        roll = r.roll + 0.6 * self.tumble * decay * math.sin(2 * math.pi * tau + 1.0)
        if (
            not r.leaning and r.level == 1
        ):  # a tumbling cube rests on a corner or an edge, not below the floor
            a, b = math.radians(pitch - r.pitch), math.radians(roll - r.roll)
            reach = (
                r.size
                / 2
                * (abs(math.cos(a)) + abs(math.sin(a)))
                * (abs(math.cos(b)) + abs(math.sin(b)))
            )
            z = max(z, reach)
        return replace(r, x=x, y=y, z=z, yaw=r.yaw + self.spin * decay, pitch=pitch, roll=roll)


@dataclass(frozen=True)
class HandMove:
    """A hand reaching into the tray from the player's side, holding still, and withdrawing."""

    reach: tuple[float, float]  # fingertips' floor point (mm) at full reach
    angle: float  # degrees, direction the arm comes from (270 = from the player, below the image)
    t_in: float
    t_hold: float
    t_out: float
    t_gone: float
    travel: float = 260.0  # mm from full reach back to just outside the picture

    def at(self, t: float) -> Hand | None:
        if t < self.t_in or t >= self.t_gone:
            return None
        if t < self.t_hold:
            out = 1 - (t - self.t_in) / (self.t_hold - self.t_in)
        elif t < self.t_out:
            out = 0.0
        else:
            out = (t - self.t_out) / (self.t_gone - self.t_out)
        out = out * out * (3 - 2 * out)  # smooth start and stop
        a = math.radians(self.angle)
        back = np.array([math.cos(a), math.sin(a), 0.0])  # from fingertips towards the elbow
        side = np.array([-back[1], back[0], 0.0])
        tip = np.array([self.reach[0], self.reach[1], 22.0]) + back * self.travel * out
        knuckle = tip + back * 60 + [0, 0, 18]
        wrist = knuckle + back * 75 + [0, 0, 22]
        elbow = wrist + back * 260 + [0, 0, 80]
        caps = [(elbow, wrist, 30.0), (wrist, knuckle + back * 10, 36.0)]
        for k, offset in enumerate((-24, -8, 8, 24)):
            base = knuckle + side * offset
            length = (52, 62, 66, 58)[k]
            end = base - back * length + side * offset * 0.15 - [0, 0, 14]
            caps.append((base, end, 8.0))
        thumb = wrist - side * 38 - back * 10
        caps.append((thumb, thumb - back * 45 - side * 12 - [0, 0, 12], 9.5))
        return Hand(tuple((tuple(map(float, a0)), tuple(map(float, b0)), r) for a0, b0, r in caps))

    def visible(self, t: float) -> bool:
        return self.t_in <= t < self.t_gone


@dataclass(frozen=True)
class DropPlan:
    before: tuple[CubePose, ...]
    flights: tuple[Flight, ...]
    hand: HandMove | None
    duration: float  # s, the whole video

    def poses(self, t: float) -> list[CubePose]:
        return list(self.before) + [p for p in (f.pose(t) for f in self.flights) if p is not None]

    def hand_at(self, t: float) -> Hand | None:
        return self.hand.at(t) if self.hand else None

    def moving(self, t: float) -> bool:
        return any(f.t0 <= t < f.t1 for f in self.flights) or (
            self.hand is not None and self.hand.visible(t)
        )

    def counts(self, t: float) -> dict[str, int]:
        return counts_of(list(self.before) + [f.rest for f in self.flights if t >= f.t1])

    def last_movement(self) -> float:
        ends = [f.t1 for f in self.flights] + ([self.hand.t_gone] if self.hand else [])
        return max(ends, default=0.0)


def plan_drop(
    setup: TableSetup,
    before: Sequence[CubePose],
    thrown: Mapping[str, int],
    rng: np.random.Generator,
    hand: bool | None = None,
    trickle: bool | None = None,
) -> DropPlan:
    """The motion of a throw: when and where each cube enters and where it comes to rest.

    hand / trickle: force a hand in the tray or a late straggler (None: at random).
    """
    kind = str(rng.choice(["scattered", "touching", "touching", "piles"]))
    rests = layout(setup, thrown, kind, rng, existing=before)
    # Cubes resting on others arrive after the ones below them.
    rests.sort(key=lambda p: p.level)
    tray = setup.tray
    side = int(rng.integers(4))  # the wall the tower's chute spills over
    along = rng.uniform(-0.3, 0.3)
    lead = rng.uniform(0.6, 1.0)
    spread = rng.uniform(0.3, 0.9)
    starts = np.sort(rng.uniform(0, spread, len(rests)))
    if trickle is None:
        trickle = len(rests) >= 2 and rng.random() < 0.35
    flights = []
    for k, rest in enumerate(rests):
        half = (tray.width / 2, tray.depth / 2)
        u = along + rng.uniform(-0.15, 0.15)
        over = tray.wall_height + rng.uniform(4, 14)
        if side == 0:
            start = (u * tray.width, half[1] + tray.wall_thickness / 2, over)
        elif side == 1:
            start = (u * tray.width, -half[1] - tray.wall_thickness / 2, over)
        elif side == 2:
            start = (-half[0] - tray.wall_thickness / 2, u * tray.depth, over)
        else:
            start = (half[0] + tray.wall_thickness / 2, u * tray.depth, over)
        flights.append(
            Flight(
                rest,
                start,
                lead + float(starts[k]),
                rng.uniform(0.45, 0.9),
                rng.uniform(-200, 200),
                rng.uniform(20, 70),
                rng.uniform(2, 8),
            )
        )
    # a cube resting on others lands after them
    floor_end = max((f.t1 for f in flights if f.rest.level == 1), default=0.0)
    flights = [
        f if f.rest.level == 1 or f.t1 > floor_end else replace(f, t0=floor_end - f.duration + 0.1)
        for f in flights
    ]
    if trickle and len(flights) >= 2:
        # the straggler is knocked loose inside the tower and comes after a pause
        main_end = max(f.t1 for f in flights[:-1])
        last = flights[-1]
        flights[-1] = replace(last, t0=main_end + rng.uniform(0.5, 1.0))
    move = None
    if hand if hand is not None else rng.random() < 0.3:
        end = max((f.t1 for f in flights), default=lead)
        t_in = lead + rng.uniform(-0.4, 0.6)
        t_hold = t_in + rng.uniform(0.3, 0.5)
        t_out = max(t_hold + rng.uniform(0.3, 1.0), end - rng.uniform(0, 0.6))
        reach = (rng.uniform(-0.3, 0.3) * tray.width, -tray.depth / 2 + rng.uniform(15, 45))
        move = HandMove(
            reach, 270 + rng.uniform(-25, 25), t_in, t_hold, t_out, t_out + rng.uniform(0.3, 0.5)
        )
        move = replace(move, travel=_travel_out_of_view(setup, move))
    plan = DropPlan(tuple(before), tuple(flights), move, 0.0)
    return replace(plan, duration=plan.last_movement() + TAIL)


def _travel_out_of_view(setup: TableSetup, move: HandMove) -> float:
    """How far back the hand must be to be wholly outside the picture, so that
    'a hand in view' and 'a hand moving' are the same frames."""
    size = (640, 480)
    R, C = setup.camera.pose()
    K = setup.camera.intrinsics(size)
    steps = np.linspace(0, 1, 32)[:, None]
    lamp = setup.light.position()

    def seen(travel: float) -> bool:
        for a, b, r in replace(move, travel=travel).at(move.t_in).capsules:
            pts = np.array(a) + (np.array(b) - np.array(a)) * steps
            pts = np.concatenate([pts, floor_shadow(lamp, pts)])  # its shadow shows too
            cam = (pts - C) @ R.T
            uv = cam[:, :2] / cam[:, 2:3] * K[0, 0] + K[:2, 2]
            pad = r * K[0, 0] / cam[:, 2] + 2
            if np.any(
                (uv[:, 0] > -pad)
                & (uv[:, 0] < size[0] + pad)
                & (uv[:, 1] > -pad)
                & (uv[:, 1] < size[1] + pad)
            ):
                return True
        return False

    lo, hi = 0.0, 1000.0  # seen at lo, not at hi: bisect to a millimetre
    while hi - lo > 1.0:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if seen(mid) else (lo, mid)
    return hi


def drop_video(
    setup: TableSetup,
    before: Sequence[CubePose],
    thrown: Mapping[str, int],
    rng: np.random.Generator,
    fps: float = 15,
    size: tuple[int, int] = (640, 480),
    hand: bool | None = None,
    trickle: bool | None = None,
) -> list[VideoFrame]:
    """Frames of a throw into a tray holding `before`, from still to still again.

    Room light flickers by a few percent and the sensor is noisy in every frame.
    """
    if fps <= 0:
        raise FirmwareError(f"fps must be positive, got {fps}")
    plan = plan_drop(setup, before, thrown, rng, hand=hand, trickle=trickle)
    return frames(setup, plan, rng, fps, size)


def frames(
    setup: TableSetup,
    plan: DropPlan,
    rng: np.random.Generator,
    fps: float = 15,
    size: tuple[int, int] = (640, 480),
) -> list[VideoFrame]:
    beat, phase = rng.uniform(0.3, 2.0), rng.uniform(0, 2 * math.pi)
    out = []
    for i in range(int(math.ceil(plan.duration * fps)) + 1):
        t = i / fps
        gain = 1 + 0.02 * math.sin(2 * math.pi * beat * t + phase) + rng.normal(0, 0.006)
        image = draw(setup, plan.poses(t), rng, size, gain=gain, hand=plan.hand_at(t))
        out.append(VideoFrame(image, plan.moving(t), plan.counts(t), t))
    return out
