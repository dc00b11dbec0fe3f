"""The realistic scene source: pybullet throws, ray-cast visibility, the Mitsuba render,
and the committed slice of its scenes (tests/data/realistic, built by
`companion scenes build --source realistic --count 2 --seed 100 --scenes 1 --videos 0`)."""

import json
from pathlib import Path

import numpy as np
import pytest

from firmware.scene.realistic.build import KINDS, top_centre
from firmware.scene.realistic.physics import Body, Simulation, make_throw, rest_check
from firmware.scene.realistic.setup import random_real_setup

pytest.importorskip("pybullet", reason="realistic scenes need the 'scenes' extra (pybullet)")

SLICE = Path(__file__).resolve().parent.parent / "data" / "realistic"


def _throw(seed):
    rng = np.random.default_rng(seed)
    setup = random_real_setup(rng)
    with Simulation(setup, rng) as sim:
        record = sim.throw(make_throw({"red": 6, "green": 4}, rng, 0.5, 0.5), record=1 / 15)
        return setup, sim.bodies(), record


def test_a_throw_settles_the_same_for_the_same_seed_and_rests_in_the_tray():
    setup, bodies, record = _throw(3)
    again = _throw(3)[1]
    assert bodies == again
    assert len(bodies) == 10 and rest_check(setup, bodies) == []
    assert record[0][2] and not record[-1][2]  # moving at the start, still at the end
    assert _throw(4)[1] != bodies


def test_rest_check_finds_a_floating_cube_and_one_outside_the_tray():
    setup = random_real_setup(np.random.default_rng(1))
    flat = (0.0, 0.0, 0.0, 1.0)
    half = setup.cube_size / 2
    assert rest_check(setup, [Body("red", (0.0, 0.0, half), flat)]) == []
    assert "floats" in rest_check(setup, [Body("red", (0.0, 0.0, half + 20), flat)])[0]
    outside = (setup.tray.width / 2 + 30, 0.0, half)
    assert "outside the tray" in rest_check(setup, [Body("red", outside, flat)])[0]


def test_visibility_is_ray_cast_against_floor_walls_and_cubes():
    rng = np.random.default_rng(2)
    setup = random_real_setup(rng)
    half = setup.cube_size / 2
    with Simulation(setup, rng) as sim:
        sim.add("red", (0.0, 0.0, half), (0, 0, 0), (0, 0, 0), (0, 0, 0, 1))
        sim.add("blue", (0.0, 0.0, 3 * half), (0, 0, 0), (0, 0, 0), (0, 0, 0, 1))
        above, below = np.array([0.0, 0.0, 400.0]), np.array([0.0, 0.0, -50.0])
        (red_share, red_seen), (blue_share, blue_seen) = sim.visibility(above)
        # straight down, the upper cube hides the lower one; its top's middle is what is seen
        assert blue_share == 1.0 and red_share == 0.0 and red_seen is None
        assert np.allclose(blue_seen, [0.0, 0.0, 4 * half])
        assert [s for s, _ in sim.visibility(below)] == [0.0, 0.0]  # nothing under the floor
        side = np.array([300.0, 0.0, 200.0])
        (red_share, red_seen), _ = sim.visibility(side)
        # from the side, the lower cube shows only its side towards the camera: that is where
        # it is seen, on its face at x = +half, below the upper cube
        assert 0 < red_share < 1
        assert red_seen[0] == pytest.approx(half) and red_seen[2] < 2 * half


def _slice():
    for folder in sorted(SLICE.iterdir()):
        yield folder, json.loads((folder / "truth.json").read_text())


def test_the_slice_truth_is_physical_every_cube_rests_in_the_tray():
    scenes = 0
    for _, truth in _slice():
        setup = random_real_setup(np.random.default_rng(truth["seed"]))
        assert truth["setup"]["cube_mm"] == round(setup.cube_size, 2)
        for scene in [truth["calibration"]] + truth["scenes"]:
            bodies = [
                Body(c["colour"], tuple(c["position"]), tuple(c["orientation"]))
                for c in scene["cubes"]
            ]
            assert rest_check(setup, bodies) == [], scene["file"]
            counts = {}
            for c in scene["cubes"]:
                counts[c["colour"]] = counts.get(c["colour"], 0) + 1
                # The top's centre is above the cube's centre, half an edge or less away.
                top = top_centre(
                    Body(c["colour"], tuple(c["position"]), tuple(c["orientation"])),
                    setup.cube_size,
                )
                assert top[2] > c["position"][2] + setup.cube_size * 0.28
                assert c["hidden"] == (c["visible"] == 0)
            assert counts == scene["counts"]
            scenes += 1
        assert {s["kind"] for s in truth["scenes"]} == set(KINDS)
        piles = next(s for s in truth["scenes"] if s["kind"] == "piles")
        assert any(c["on"] == "cube" for c in piles["cubes"])
    assert scenes == 12


def test_the_slice_calibration_has_one_lone_cube_per_colour_and_a_click_on_each():
    for _folder, truth in _slice():
        cal = truth["calibration"]
        assert sorted(cal["clicks"]) == sorted(truth["setup"]["colours"])
        assert all(len(points) == 1 for points in cal["clicks"].values())
        positions = np.array([c["position"][:2] for c in cal["cubes"]])
        gaps = (
            np.linalg.norm(positions[:, None] - positions[None], axis=2)
            + np.eye(len(positions)) * 1e9
        )
        assert gaps.min() > 3 * truth["setup"]["cube_mm"]  # apart, not touching
        corners = np.array(cal["corners"])
        assert corners.shape == (4, 2) and ((corners >= 0) & (corners <= [640, 480])).all()


@pytest.mark.slow
def test_a_rendered_cube_lands_where_the_truth_projects_it():
    """One 1-sample render: the red cube's projected top is red in the picture, the floor
    beside it is not (the camera model of render and truth agree, distortion included)."""
    pytest.importorskip("mitsuba", reason="rendering needs the 'scenes' extra (mitsuba)")
    import cv2

    from firmware.scene.realistic.render import Renderer

    rng = np.random.default_rng(5)
    setup = random_real_setup(rng)
    cube = Body("red", (40.0, -20.0, setup.cube_size / 2), (0.0, 0.0, 0.0, 1.0))
    with Renderer(setup, spp=2) as renderer:
        image = cv2.imdecode(
            np.frombuffer(renderer.photograph(renderer.linear([cube]), rng), np.uint8),
            cv2.IMREAD_COLOR,
        )
        u, v = renderer.project([top_centre(cube, setup.cube_size)])[0]
        far_u, far_v = renderer.project([[40.0 - 4 * setup.cube_size, -20.0, 0.0]])[0]
    assert image.shape == (480, 640, 3)
    top = image[int(v) - 1 : int(v) + 2, int(u) - 1 : int(u) + 2].reshape(-1, 3).mean(0)
    floor = (
        image[int(far_v) - 1 : int(far_v) + 2, int(far_u) - 1 : int(far_u) + 2]
        .reshape(-1, 3)
        .mean(0)
    )
    assert _redness(top) > _redness(floor) + 25


def _redness(bgr) -> float:
    return bgr[2] - max(bgr[0], bgr[1])


def test_the_camera_keeps_bright_tops_on_a_black_felt_from_clipping():
    """Exposing a black felt at mid-grey would clip every bright cube to white; like the Pi
    camera in highlight mode (firmware.picam), the brightest 2% stay below full scale."""
    import cv2

    from firmware.scene.realistic.render import HIGHLIGHT_LEVEL, LUMA, Renderer

    rng = np.random.default_rng(7)
    setup = random_real_setup(rng)
    linear = np.full((480, 640, 3), 0.004, np.float32)  # a black felt in dim light
    linear[190:290, 270:370] = (0.4, 0.3, 0.03)  # yellow tops (R, G, B), 3% of the picture
    with Renderer(setup, spp=1) as renderer:
        image = cv2.imdecode(
            np.frombuffer(renderer.photograph(linear, rng), np.uint8), cv2.IMREAD_COLOR
        ).astype(float)
    b, g, r = image[215:265, 295:345].mean(axis=(0, 1))
    assert float(((np.array([r, g, b]) / 255) ** 2.2) @ LUMA) == pytest.approx(
        HIGHLIGHT_LEVEL, rel=0.15
    )
    assert b < 0.6 * min(r, g)  # still yellow: blue not lifted to white by clipping
    assert 5 < image[20:60, 20:60].mean() < 60  # the floor dark, not exposed at mid-grey
