"""The simulated tray: a pretend camera over a rendered tray, for the demo and the tests.

It shows a tray with a few leftover cubes. `drop(counts)` lets cubes fall into the tray, as
they come out of the tower (the companion's simulated table runs the tower model and says
what comes out), over a second or two, every frame rendered by the scene generator as it is
read, so the demo runs the real settle detection and counting on real images.

Realtime (the demo): frames come at `fps` on the monotonic clock, like a camera. Not realtime
(tests, benchmarks): each read is the next frame at once, stamped with simulated time.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Mapping, Sequence

import numpy as np

from firmware.camera import CameraLost, Frame, SourceBase
from firmware.errors import FirmwareError
from firmware.scene import (
    DEFAULT_COLOURS,
    CubePose,
    DropPlan,
    counts_of,
    draw,
    layout,
    plan_drop,
    random_setup,
    render,
)

log = logging.getLogger(__name__)


class SimulatedTray(SourceBase):
    name = "sim"

    def __init__(
        self,
        width: int = 640,
        height: int = 480,
        fps: float = 15,
        seed: int | None = None,
        *,
        realtime: bool = True,
        colours: Sequence[str] = DEFAULT_COLOURS,
        leftovers: Mapping[str, int] | None = None,
        hands: bool | None = False,
    ) -> None:
        """leftovers: cubes lying in the tray at the start (None: two or three at random).
        hands: whether a player's hand may reach into the tray during a drop (None: at random).
        """
        if fps <= 0:
            raise FirmwareError(f"simulated tray: fps must be positive, got {fps}")
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        self.size = (int(width), int(height))
        self.fps = float(fps)
        self.realtime = realtime
        self.hands = hands
        self._rng = np.random.default_rng(self.seed)  # table, layouts, throws
        self._noise = np.random.default_rng(self.seed + 1)  # sensor noise per frame
        self.setup = random_setup(self._rng, tuple(colours))
        if leftovers is None:
            picks = self._rng.choice(list(colours), size=int(self._rng.integers(2, 4)))
            leftovers = counts_of([CubePose(str(c), 0, 0, 0) for c in picks])
        self._lock = threading.Lock()
        self._before: list[CubePose] = layout(self.setup, leftovers, "scattered", self._rng)
        self._plan: DropPlan | None = None
        self._plan_start = 0.0
        self._index = 0
        self._start = time.monotonic()
        self._next_due = self._start
        self._closed = False
        # Room light flickers a little, as under mains lighting.
        self._beat, self._phase = self._rng.uniform(0.3, 2.0), self._rng.uniform(0, 2 * math.pi)
        log.info(
            "simulated tray: no camera, rendered frames of a pretend tray (seed %d, %dx%d, %g fps)",
            self.seed,
            *self.size,
            self.fps,
        )

    # --- the clock -------------------------------------------------------------------

    def _now(self) -> float:
        """Seconds on this tray's clock: wall time (realtime) or the next frame's time."""
        if self.realtime:
            return time.monotonic() - self._start
        return self._index / self.fps

    # --- what is in the tray -----------------------------------------------------------

    def _rests(self) -> list[CubePose]:
        """Every cube in the tray once the current drop is over."""
        flights = [f.rest for f in self._plan.flights] if self._plan else []
        return self._before + flights

    def _settle_plan(self, now: float) -> None:
        if self._plan is not None and now - self._plan_start >= self._plan.last_movement():
            self._before, self._plan = self._rests(), None

    def drop(self, counts: Mapping[str, int]) -> None:
        """Let cubes (those that came out of the tower) fall into the tray from the next frame."""
        unknown = sorted(set(counts) - set(self.setup.colours))
        if unknown:
            raise FirmwareError(
                f"simulated tray: no paint for {', '.join(unknown)} "
                f"(colours: {', '.join(self.setup.colours)})"
            )
        bad = {c: n for c, n in counts.items() if not isinstance(n, int) or n < 0}
        if bad:
            raise FirmwareError(
                f"simulated tray: cube counts must be whole numbers >= 0, got {bad}"
            )
        with self._lock:
            now = self._now()
            # A drop during a drop: the earlier cubes land at once.
            self._before, self._plan = self._rests(), None
            falling = {c: n for c, n in counts.items() if n}
            if falling:
                self._plan = plan_drop(
                    self.setup, self._before, falling, self._rng, hand=self.hands
                )
                self._plan_start = now
        log.info("simulated tray: dropped %s", falling)

    def remove(self, counts: Mapping[str, int]) -> None:
        """Take cubes out of the tray (players clearing it after a battle).

        Cubes lying on others or leaning go first; any that lose their support drop flat.
        """
        with self._lock:
            self._before, self._plan = self._rests(), None
            have = counts_of(self._before)
            short = {c: n for c, n in counts.items() if n > have.get(c, 0)}
            if short:
                raise FirmwareError(
                    "simulated tray: cannot remove "
                    + ", ".join(
                        f"{n} {c} (the tray holds {have.get(c, 0)})"
                        for c, n in sorted(short.items())
                    )
                )
            left = dict(counts)
            keep = []
            for pose in sorted(self._before, key=lambda p: p.level == 1 and not p.leaning):
                if left.get(pose.colour, 0) > 0:
                    left[pose.colour] -= 1
                else:
                    keep.append(pose)
            flat = [p for p in keep if p.level == 1 and not p.leaning]
            loose = [p for p in keep if not (p.level == 1 and not p.leaning)]
            if loose:
                flat += layout(self.setup, counts_of(loose), "scattered", self._rng, existing=flat)
            self._before = flat

    def clear(self) -> None:
        """Empty the tray."""
        self.remove(self.contents())

    def contents(self) -> dict[str, int]:
        """The cubes in the tray once the current drop has landed (the truth a count should
        match)."""
        with self._lock:
            return counts_of(self._rests())

    def at_rest(self) -> dict[str, int]:
        """The cubes lying still in the tray right now."""
        with self._lock:
            if self._plan is None:
                return counts_of(self._before)
            return self._plan.counts(self._now() - self._plan_start)

    def moving(self) -> bool:
        """Whether a cube (or hand) is moving in the tray right now."""
        with self._lock:
            return self._plan is not None and self._plan.moving(self._now() - self._plan_start)

    def dropping(self) -> bool:
        """Whether thrown cubes are still on their way (in the chute, falling or sliding)."""
        with self._lock:
            return (
                self._plan is not None
                and self._now() - self._plan_start < self._plan.last_movement()
            )

    def calibration_clicks(
        self, per_colour: int = 1
    ) -> tuple[np.ndarray, dict[str, list[tuple[float, float]]]]:
        """Set the tray up as a user calibrating would, and return their clicks.

        The tray is emptied and `per_colour` cubes of every colour are laid out apart. Returns
        the tray floor corners (4x2 image px, clockwise from top-left) and, per colour, points
        on clearly visible cube tops. The next frames show this tray; `clear()` it afterwards.
        """
        with self._lock:
            poses = layout(
                self.setup, {c: per_colour for c in self.setup.colours}, "scattered", self._rng
            )
            self._before, self._plan = poses, None
            scene = render(self.setup, poses, np.random.default_rng(self.seed + 2), self.size)
        missing = [c for c in self.setup.colours if not scene.clicks.get(c)]
        if missing:
            raise FirmwareError(
                f"simulated tray: no clearly visible cube of {', '.join(missing)} to click"
            )
        return scene.corners.copy(), {c: list(points) for c, points in scene.clicks.items()}

    # --- frames ----------------------------------------------------------------------

    def read(self, timeout: float = 3.0) -> Frame:
        if self._closed:
            raise CameraLost("sim: closed")
        if self.realtime:
            # Like a camera: frames on the fps grid; a late reader gets the present frame, not a
            # burst of catch-up frames.
            now = time.monotonic()
            if self._next_due - now > timeout:
                time.sleep(timeout)
                raise CameraLost(f"sim: no frame for {timeout:g} s")
            if self._next_due > now:
                time.sleep(self._next_due - now)
            self._next_due = max(self._next_due, time.monotonic() - 1 / self.fps) + 1 / self.fps
        with self._lock:
            t = self._now()
            self._settle_plan(t)
            if self._plan is not None:
                local = t - self._plan_start
                poses = self._plan.poses(local)
                hand = self._plan.hand_at(local)
            else:
                poses, hand = list(self._before), None
            gain = (
                1
                + 0.02 * math.sin(2 * math.pi * self._beat * t + self._phase)
                + self._noise.normal(0, 0.006)
            )
            image = draw(self.setup, poses, self._noise, self.size, gain=gain, hand=hand)
            frame = Frame(image, time.monotonic() if self.realtime else t, self._index)
            self._index += 1
        return frame

    def close(self) -> None:
        self._closed = True
