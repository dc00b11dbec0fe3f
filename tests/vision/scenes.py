"""Calibrated table set-ups from the scene generator, shared by the vision tests.

Tests use set-up seeds below 1000; the benchmark (`companion bench vision`) uses 910000 and
up, so it always judges the counter on tables the tests never saw.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from calibration import build_profile, make_counter
from firmware.scene import layout, random_setup, render


@cache
def calibrated(seed: int, colours: tuple[str, ...] | None = None):
    """(setup, profile, report) for a set-up, calibrated on one scattered frame by its clicks."""
    rng = np.random.default_rng(seed)
    setup = random_setup(rng) if colours is None else random_setup(rng, colours)
    calib = render(setup, layout(setup, {c: 2 for c in setup.colours}, "scattered", rng), rng)
    profile, report = build_profile(calib.image, calib.corners, calib.clicks)
    return setup, profile, report


def scene(setup, counts: dict, kind: str, seed: int, size=(640, 480)):
    rng = np.random.default_rng(seed)
    return render(setup, layout(setup, counts, kind, rng), rng, size=size)


def counter_for(seed: int, size=(640, 480)):
    setup, profile, _ = calibrated(seed)
    return setup, make_counter(profile, size)


def exact(result, truth: dict) -> bool:
    return {c: n for c, n in result.counts.items() if n} == {
        c: n for c, n in truth.items() if n
    } and result.unknown == 0
