"""Generated table set-ups and their scenes, for the vision benchmark and the training.

A set-up is drawn from its seed (firmware.scene.random_setup), calibrated once on one frame
as a user would (its tray corners and clicks), and then draws the scenes it is counted on:
scattered, touching, piles, under light drifted since calibration, and battle trays.
"""

from __future__ import annotations

import numpy as np

from calibration import LEARNED, build_profile, make_counter
from firmware.errors import FirmwareError
from firmware.scene import Lens, drift_light, layout, random_setup, render

KINDS = ("scattered", "touching", "piles", "drifted")
BATTLE_KINDS = KINDS[:3]


def set_up(seed: int):
    """A random table set-up from its seed: the generator (it draws the scenes that follow),
    the set-up, and the frame it is calibrated on (1-2 scattered cubes of each colour)."""
    rng = np.random.default_rng(seed)
    setup = random_setup(rng)
    counts = {c: int(rng.integers(1, 3)) for c in setup.colours}
    return rng, setup, render(setup, layout(setup, counts, "scattered", rng), rng)


def random_counts(setup, rng, minimum: int = 1) -> dict[str, int]:
    """0-3 cubes of each colour, at least `minimum` in all (a pile needs a few)."""
    while True:
        counts = {c: int(rng.integers(0, 4)) for c in setup.colours}
        if sum(counts.values()) >= minimum:
            return counts


# Times the generator may draw other counts when it cannot arrange a pile on a small tray
# (a limit of the generator, not of the counter: no scene is skipped).
LAYOUT_TRIES = 5


def battle_counts(setup, rng) -> dict[str, int]:
    """A battle's tray: the attacker's, the defender's and perhaps the farmers' or released
    cubes, 2-3 paints with 1-6 cubes each."""
    paints = rng.choice(list(setup.colours), int(rng.integers(2, 4)), replace=False)
    return {c: int(rng.integers(1, 7)) if c in paints else 0 for c in setup.colours}


def draw_scene(setup, kind, rng, battle: bool = False):
    """A scene of `kind` on `setup`: random counts, or a battle tray's (battle_counts)."""
    for attempt in range(LAYOUT_TRIES):
        if battle:
            counts = battle_counts(setup, rng)
        else:
            counts = random_counts(setup, rng, 4 if kind == "piles" else 1)
        try:
            return render(setup, layout(setup, counts, kind, rng), rng)
        except FirmwareError:
            if attempt == LAYOUT_TRIES - 1:
                raise


def calibrated(seed: int, learned: tuple[str, ...] = LEARNED, lens: Lens | None = None):
    """A set-up's generator, the set-up, and a counter calibrated on its frame, as `lens`
    shows it (raises CalibrationError when calibration refuses it)."""
    rng, setup, calib = set_up(seed)
    if lens is not None:
        calib = lens.scene(calib)
    profile, _ = build_profile(calib.image, calib.corners, calib.clicks)
    size = (calib.image.shape[1], calib.image.shape[0])
    return rng, setup, make_counter(profile, size, learned)


def table(
    seed: int,
    scenes: int,
    learned: tuple[str, ...] = LEARNED,
    battles: int = 0,
    lens: Lens | None = None,
):
    """One random table set-up: a counter calibrated on one frame of it, as a user would,
    and its scenes to count, `scenes` of each kind, then `battles` battle trays
    (battle_counts) of each of BATTLE_KINDS, as (kind, scene) pairs in the order they are
    drawn (a counter carries its light correction from frame to frame). Raises
    CalibrationError when calibration refuses the frame. `learned`: see make_counter;
    `lens`: the camera's (firmware.scene.Lens), through which every frame is seen."""
    rng, setup, counter = calibrated(seed, learned, lens)

    def seen(drawn_scene):
        return drawn_scene if lens is None else lens.scene(drawn_scene)

    def drawn():
        for kind in KINDS:
            for j in range(scenes):
                light = drift_light(setup, rng) if kind == "drifted" else setup
                shown = ("scattered", "touching", "piles")[j % 3] if kind == "drifted" else kind
                yield kind, seen(draw_scene(light, shown, rng))
        for kind in BATTLE_KINDS:
            for _ in range(battles):
                yield kind, seen(draw_scene(setup, kind, rng, battle=True))

    return counter, drawn()
