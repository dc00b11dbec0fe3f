"""The scene generator: set-ups, layouts and frames, and the truth they carry."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from firmware.errors import FirmwareError
from firmware.scene import (
    DEFAULT_COLOURS,
    DEFAULT_PAINTS,
    drift_light,
    layout,
    random_setup,
    render,
)

COUNTS = {"red": 4, "blue": 3, "yellow": 3, "purple": 2, "black": 3, "green": 3}


def _scene(seed: int, kind: str, counts=COUNTS, **setup_changes):
    rng = np.random.default_rng(seed)
    setup = random_setup(rng)
    if setup_changes:
        setup = replace(setup, **setup_changes)
    poses = layout(setup, counts, kind, rng)
    return setup, poses, render(setup, poses, rng)


def test_same_seed_same_scene_and_other_seed_other_scene():
    a = _scene(7, "piles")[2]
    b = _scene(7, "piles")[2]
    c = _scene(8, "piles")[2]
    assert np.array_equal(a.image, b.image)
    assert a.cubes == b.cubes and a.clicks == b.clicks
    assert not np.array_equal(a.image, c.image)


@pytest.mark.parametrize("seed", range(6))
def test_corners_are_inside_the_frame_clockwise_from_top_left(seed):
    scene = _scene(seed, "scattered", {"red": 1})[2]
    h, w = scene.image.shape[:2]
    c = scene.corners
    assert c.shape == (4, 2)
    assert (c >= 0).all() and (c[:, 0] < w).all() and (c[:, 1] < h).all()
    # shoelace with y pointing down: positive means clockwise on screen
    area = sum(c[i, 0] * c[(i + 1) % 4, 1] - c[(i + 1) % 4, 0] * c[i, 1] for i in range(4))
    assert area > 0.3 * w * h, "the floor should fill a good part of the frame"
    assert np.argmin(c.sum(1)) == 0


@pytest.mark.parametrize("kind", ["scattered", "touching", "piles"])
def test_truth_counts_equal_the_poses_and_each_cube_is_in_view(kind):
    setup, poses, scene = _scene(11, kind)
    assert scene.counts == {k: v for k, v in sorted(COUNTS.items())}
    assert len(scene.cubes) == sum(COUNTS.values())
    assert sorted(c.colour for c in scene.cubes) == sorted(p.colour for p in poses)
    floor = scene.corners.astype(np.float32)
    for cube in scene.cubes:
        assert cv2.pointPolygonTest(floor, cube.centre, True) > -3
        assert cube.visible > 0.2


def _hsv(image, point):
    x, y = (int(round(v)) for v in point)
    patch = image[y - 1 : y + 2, x - 1 : x + 2].reshape(-1, 1, 3)
    return cv2.cvtColor(np.median(patch, axis=0).astype(np.uint8)[None], cv2.COLOR_BGR2HSV)[
        0, 0
    ].astype(int)


@pytest.mark.parametrize("seed,kind", [(3, "scattered"), (4, "touching"), (5, "piles")])
def test_each_cube_centre_shows_its_own_paint(seed, kind):
    # A neutral floor and a white balance matching the lamp: what is left of a pixel's
    # hue comes from the paint, so a centre off its cube or on the wrong cube shows.
    rng = np.random.default_rng(seed)
    setup = random_setup(rng)
    setup = replace(
        setup, white_balance=setup.light.kelvin, tray=replace(setup.tray, floor=(0.11, 0.11, 0.11))
    )
    scene = render(setup, layout(setup, COUNTS, kind, rng), rng)
    hues = {}
    for name in COUNTS:
        bgr = (np.array(DEFAULT_PAINTS[name]["albedo"][::-1]) ** (1 / 2.2) * 255).astype(np.uint8)
        hues[name] = int(cv2.cvtColor(bgr[None, None], cv2.COLOR_BGR2HSV)[0, 0, 0])
    for cube in scene.cubes:
        h, s, v = _hsv(scene.image, cube.centre)
        if cube.colour == "black":
            assert v < 110 and s < 140, (cube, (h, s, v))
        else:
            assert s > 70, (cube, (h, s, v))
            diff = abs(h - hues[cube.colour])
            assert min(diff, 180 - diff) <= 14, (cube, (h, s, v), hues[cube.colour])


def test_clicks_name_each_colour_present_on_its_own_cubes():
    setup, poses, scene = _scene(12, "touching")
    assert set(scene.clicks) == set(COUNTS)
    for colour, points in scene.clicks.items():
        assert 1 <= len(points) <= 3
        for point in points:
            nearest = min(
                scene.cubes, key=lambda c: np.hypot(c.centre[0] - point[0], c.centre[1] - point[1])
            )
            assert nearest.colour == colour


@pytest.mark.parametrize("seed", [5, 12])
def test_the_bare_floor_is_inside_the_tray_and_a_few_cubes_from_any(seed):
    setup, poses, scene = _scene(seed, "scattered", {"red": 2, "blue": 2, "black": 2})
    x, y = scene.bare_floor()
    assert cv2.pointPolygonTest(scene.corners.astype(np.float32), (x, y), True) >= 30
    gap = min(np.hypot(c.centre[0] - x, c.centre[1] - y) for c in scene.cubes)
    px_per_mm = np.ptp(scene.corners[:, 0]) / setup.tray.width  # (roughly: the view is tilted)
    assert gap > 3 * setup.cube_size * px_per_mm


def test_scattered_cubes_keep_apart_and_touching_ones_meet():
    rng = np.random.default_rng(21)
    setup = random_setup(rng)
    s = setup.cube_size

    def closest(poses):
        xy = np.array([[p.x, p.y] for p in poses])
        d = np.hypot(*(xy[:, None] - xy[None]).transpose(2, 0, 1))
        np.fill_diagonal(d, np.inf)
        return d.min(1)

    assert closest(layout(setup, COUNTS, "scattered", rng)).min() > 1.4 * s
    near = closest(layout(setup, COUNTS, "touching", rng))
    assert (near < 1.25 * s).sum() >= 4


def test_piles_hold_cubes_resting_on_others():
    rng = np.random.default_rng(9)
    setup = random_setup(rng)
    poses = layout(setup, COUNTS, "piles", rng)
    top = [p for p in poses if p.level == 2]
    assert top
    for p in top:
        below = [
            q
            for q in poses
            if q.level == 1 and np.hypot(q.x - p.x, q.y - p.y) < 0.5 * (p.size + q.size)
        ]
        assert below, "a cube on a pile rests on a floor cube"
        assert p.z == pytest.approx(max(q.z + q.size / 2 for q in below) + p.size / 2, abs=0.01)


def test_leaning_cubes_stand_on_an_edge_against_a_neighbour():
    leaners = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        setup = random_setup(rng)
        poses = layout(setup, COUNTS, "piles", rng)
        for p in (p for p in poses if p.leaning):
            corners = (
                np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
                * p.size
            )
            world = corners @ p.rotation().T + [p.x, p.y, p.z]
            assert world[:, 2].min() == pytest.approx(0, abs=1e-6), "an edge on the floor"
            assert 10 < abs(p.roll) + abs(p.pitch) < 35
            nearest = min(np.hypot(q.x - p.x, q.y - p.y) for q in poses if q is not p)
            assert nearest < 1.3 * setup.cube_size, "it leans on a neighbour"
            leaners.append(p)
    assert leaners


def test_drifted_light_changes_the_floor_colour_but_not_the_geometry():
    rng = np.random.default_rng(4)
    setup = random_setup(rng)
    poses = layout(setup, {"red": 2}, "scattered", rng)
    drifted = drift_light(setup, rng)
    a, b = (
        render(setup, poses, np.random.default_rng(0)),
        render(drifted, poses, np.random.default_rng(0)),
    )
    assert np.allclose(a.corners, b.corners)
    assert [c.centre for c in a.cubes] == [c.centre for c in b.cubes]
    mask = np.zeros(a.image.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, a.corners.astype(np.int32), 1)
    ma, mb = (np.array(cv2.mean(s.image, mask)[:3]) for s in (a, b))
    assert np.abs(ma - mb).max() > 6, (ma, mb)
    assert (
        drifted.camera == setup.camera
        and drifted.tray == setup.tray
        and drifted.paints == setup.paints
    )


def test_loose_cubes_on_the_table_show_outside_the_floor_and_are_not_counted():
    rng = np.random.default_rng(31)
    setup = random_setup(rng)
    poses = layout(setup, {"red": 2}, "scattered", rng)
    bare, busy = (
        render(replace(setup, table_cubes=n, cards=0), poses, np.random.default_rng(1))
        for n in (0, 6)
    )
    assert busy.counts == bare.counts == {"red": 2}
    floor = np.zeros(bare.image.shape[:2], np.uint8)
    cv2.fillConvexPoly(floor, bare.corners.astype(np.int32), 1)
    changed = np.abs(busy.image.astype(int) - bare.image.astype(int)).max(2) > 40
    assert changed[floor == 0].sum() > 100
    assert changed[floor == 1].sum() == 0


def test_any_colour_name_with_a_paint_and_clear_errors_otherwise():
    rng = np.random.default_rng(1)
    setup = random_setup(
        rng, colours=("red", "teal"), paints={"teal": {"albedo": (0.02, 0.2, 0.2)}}
    )
    scene = render(setup, layout(setup, {"teal": 2, "red": 1}, "touching", rng), rng)
    assert scene.counts == {"red": 1, "teal": 2}
    with pytest.raises(FirmwareError, match="'teal'"):
        random_setup(rng, colours=("teal",))
    with pytest.raises(FirmwareError, match="'orange'"):
        layout(setup, {"orange": 1}, "scattered", rng)
    with pytest.raises(FirmwareError, match="heap"):
        layout(setup, {"red": 1}, "heap", rng)
    with pytest.raises(FirmwareError, match="cannot fit"):
        layout(setup, {"red": 400}, "scattered", rng)
    assert set(DEFAULT_COLOURS) <= set(DEFAULT_PAINTS)
