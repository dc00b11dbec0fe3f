"""Generated table set-ups and their scenes, for the vision benchmark and the training.

A set-up is drawn from its seed (firmware.scene.random_setup), calibrated once on one frame
as a user would (its tray corners and clicks), and then draws the scenes it is counted on:
scattered, touching, piles, under light drifted since calibration, and battle trays.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from calibration import build_profile, make_counter
from firmware.errors import FirmwareError
from firmware.scene import DEFAULT_COLOURS, Lens, drift_light, layout, random_setup, render

KINDS = ("scattered", "touching", "piles", "drifted")
BATTLE_KINDS = KINDS[:3]
# Tray floors the generator does not draw at random (linear RGB, as firmware.scene's FLOORS,
# whose "grey" is a mid grey): black paint on the light one, white on the dark ones differ
# from the floor mainly in lightness. Their set-ups have white cubes besides the six paints.
GREY_FLOORS = {
    "light grey": (0.40, 0.40, 0.41),
    "dark grey": (0.045, 0.045, 0.047),
    "black": (0.018, 0.018, 0.019),
}
GREY_FLOOR_COLOURS = DEFAULT_COLOURS + ("white",)


def set_up(seed: int, floor: str | None = None):
    """A random table set-up from its seed: the generator (it draws the scenes that follow),
    the set-up, and the frame it is calibrated on (1-2 scattered cubes of each colour).
    `floor`: one of GREY_FLOORS instead of the generator's floor, with GREY_FLOOR_COLOURS."""
    rng = np.random.default_rng(seed)
    if floor is None:
        setup = random_setup(rng)
    else:
        setup = random_setup(rng, GREY_FLOOR_COLOURS)
        setup = replace(
            setup, tray=replace(setup.tray, floor=GREY_FLOORS[floor], floor_texture="felt")
        )
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


def calibrated(
    seed: int,
    lens: Lens | None = None,
    floor: str | None = None,
):
    """A set-up's generator, the set-up, and a counter calibrated on its frame, as `lens`
    shows it (raises CalibrationError when calibration refuses it); `floor`: see set_up."""
    rng, setup, calib = set_up(seed, floor)
    if lens is not None:
        calib = lens.scene(calib)
    profile, _ = build_profile(calib.image, calib.corners, calib.clicks)
    size = (calib.image.shape[1], calib.image.shape[0])
    return rng, setup, make_counter(profile, size)


def table(
    seed: int,
    scenes: int,
    battles: int = 0,
    lens: Lens | None = None,
    floor: str | None = None,
):
    """One random table set-up: a counter calibrated on one frame of it, as a user would,
    and its scenes to count, `scenes` of each kind, then `battles` battle trays
    (battle_counts) of each of BATTLE_KINDS, as (kind, scene) pairs in the order they are
    drawn. Raises CalibrationError when calibration refuses the frame. `lens`: the camera's
    (firmware.scene.Lens), through which every frame is seen; `floor`: see set_up."""
    rng, setup, counter = calibrated(seed, lens, floor)

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
