"""Counting generated tray scenes after calibrating on one frame, as a user would."""

import cv2
import numpy as np
import pytest

from calibration import build_profile, make_counter
from firmware.scene import CubePose, draw, drift_light, layout, random_setup, render
from firmware.scene.video import HandMove
from tests.vision.scenes import calibrated, counter_for, exact, scene
from vision import annotate
from vision.annotate import UNSURE
from vision.canonical import TOP_PX
from vision.counter import SURE
from vision.errors import VisionError

# A weak peak a cube's edge or two beside a cube (its side, its shadow) is counted: on the
# tuning set-ups peaks so scored were cubes more often than not, mostly half-hidden ones
# (vision/models/peaks.json). The count is not called sure, and the place is shown. Issue 42.
HALF_ODDS_PEAK = pytest.mark.xfail(
    strict=True, reason="a side or shadow scored like a half-hidden cube"
)


def _counts(setup, seed):
    rng = np.random.default_rng(seed)
    while True:
        counts = {c: int(rng.integers(0, 4)) for c in setup.colours}
        if sum(counts.values()):
            return counts


@pytest.mark.parametrize(
    "seed",
    [
        3,
        7,
        12,
        13,
        19,
    ],
)
def test_scattered_cubes_are_counted_exactly(seed):
    setup, counter = counter_for(seed)
    for j in range(3):
        s = scene(setup, _counts(setup, 1000 * seed + j), "scattered", 100 * seed + j)
        result = counter.count(s.image)
        assert exact(result, s.counts), (result.counts, result.unknown, s.counts)
        assert len(result.cubes) == sum(s.counts.values())


@pytest.mark.parametrize(
    "seed",
    [3, 7, 12, 13, 19],
)
@pytest.mark.parametrize("kind", ["scattered", "touching"])
def test_cubes_alone_do_not_obstruct(seed, kind):
    setup, counter = counter_for(seed)
    for j in range(3):
        s = scene(setup, _counts(setup, 1000 * seed + j), kind, 100 * seed + j)
        assert not counter.count(s.image).obstructed, j


@pytest.mark.parametrize(
    "seed",
    [
        3,
        7,
        12,
        19,
        23,
    ],
)
def test_touching_cubes_are_told_apart(seed):
    setup, counter = counter_for(seed)
    for j in range(3):
        s = scene(setup, _counts(setup, 1000 * seed + j), "touching", 100 * seed + j)
        result = counter.count(s.image)
        assert exact(result, s.counts), (result.counts, result.unknown, s.counts)


def test_two_cubes_side_by_side_are_two():
    setup, counter = counter_for(12)
    s = scene(setup, {"red": 2}, "touching", 5)
    assert counter.count(s.image).counts["red"] == 2


@pytest.mark.parametrize(
    "seed",
    [
        3,
        12,
        13,
        19,
    ],
)
def test_a_pile_miscounted_is_not_claimed_sure_and_the_place_to_check_is_shown(seed):
    # The counter misses cubes partly hidden under a pile's top cube; it must not be sure
    # of such a count, and must point at a cube it got wrong.
    setup, counter = counter_for(seed)
    s = scene(setup, _counts(setup, 3000 + 10 * seed), "piles", 300 + 10 * seed)
    assert any(p.level == 2 for p in s.poses)
    result = counter.count(s.image)
    assert exact(result, s.counts) or not result.sure, (result.counts, s.counts)
    if exact(result, s.counts):
        return  # no wrong cube to point at
    wrong = {c for c in s.counts if result.counts.get(c, 0) != s.counts[c]}
    cubes = np.array([c.centre for c in s.cubes if c.colour in wrong])
    edge = np.linalg.norm(result.cubes[0].outline[1] - result.cubes[0].outline[0])
    middles = np.array(result.to_dict()["doubts"])
    assert len(middles) and min(np.hypot(*(cubes - d).T).min() for d in middles) < edge
    x, y = np.int32(np.round(result.doubts[0][0]))
    assert (annotate(s.image, result)[y - 1 : y + 2, x - 1 : x + 2] == UNSURE).all(axis=2).any()


@pytest.mark.parametrize("seed", [3, 7, 19])
@pytest.mark.parametrize("kind", ["scattered", "piles"])
def test_sure_means_no_places_to_check(seed, kind):
    setup, counter = counter_for(seed)
    s = scene(setup, _counts(setup, 1000 * seed), kind, 100 * seed)
    result = counter.count(s.image)
    data = result.to_dict()
    assert result.sure == (result.confidence >= SURE) == data["sure"]
    assert result.sure == (len(result.doubts) == 0) == (data["doubts"] == [])
    assert len(data["doubts"]) == len(result.doubts) <= 3
    for square, middle in zip(result.doubts, data["doubts"], strict=True):
        assert np.allclose(square.mean(axis=0), middle, atol=0.06)


@pytest.mark.parametrize("seed", [pytest.param(12, marks=HALF_ODDS_PEAK), 13])
def test_light_drifted_after_calibration(seed):
    setup, counter = counter_for(seed)
    rng = np.random.default_rng(seed + 77)
    for j, kind in enumerate(("scattered", "touching")):
        drifted = drift_light(setup, rng)
        s = render(drifted, layout(drifted, _counts(setup, 500 + j), kind, rng), rng)
        result = counter.count(s.image)
        assert exact(result, s.counts), (kind, result.counts, result.unknown, s.counts)


def test_a_colour_not_calibrated_is_unknown_not_forced():
    rng = np.random.default_rng(21)
    setup = random_setup(rng, ("red", "blue", "yellow", "green", "white"))
    calib = render(setup, layout(setup, {"red": 2, "blue": 2, "green": 2}, "scattered", rng), rng)
    profile, _ = build_profile(calib.image, calib.corners, calib.clicks)
    assert "yellow" not in profile.colours and "white" not in profile.colours
    counter = make_counter(profile, (640, 480))
    s = render(setup, layout(setup, {"red": 1, "blue": 2, "yellow": 2}, "scattered", rng), rng)
    result = counter.count(s.image)
    assert result.unknown == 2
    assert result.counts["red"] == 1 and result.counts["blue"] == 2
    assert result.counts["green"] == 0 and result.confidence == 0.0 and not result.sure
    assert sum(1 for c in result.cubes if c.colour is None) == 2
    assert [c["colour"] for c in result.to_dict()["cubes"]].count(None) == 2
    # White differs from this dull green mostly in lightness, which light across a tray
    # changes as much: it is taken for green, but the count is not called sure.
    s = render(setup, layout(setup, {"red": 1, "blue": 2, "white": 2}, "scattered", rng), rng)
    assert not counter.count(s.image).sure


@HALF_ODDS_PEAK
def test_cast_shadows_are_not_cubes_and_black_cubes_are_counted():
    # a light floor with a low lamp: long shadows next to every cube
    setup, counter = counter_for(13)
    assert setup.light.elevation < 40 and setup.tray.floor[0] > 0.4
    s = scene(setup, {"red": 2, "yellow": 2, "blue": 2, "black": 2}, "scattered", 1313)
    result = counter.count(s.image)
    assert result.counts["black"] == 2 and exact(result, s.counts), result.counts
    s = scene(setup, {"red": 3, "yellow": 3}, "scattered", 1314)
    assert exact(counter.count(s.image), s.counts)


@pytest.mark.parametrize("seed", [37, 137, 228])
def test_dark_cubes_on_dark_or_grey_floors_and_cubes_beside_wall_shadows(seed):
    # 37: dark grey cubes on a dark felt, as bright as the lit floor; 137: smooth light under
    # the walls' shadows; 228: black cubes on a grey tray in a bright light.
    setup, counter = counter_for(seed)
    s = scene(setup, {c: 2 for c in setup.colours}, "scattered", 100 * seed + 50)
    assert exact(counter.count(s.image), s.counts)


def test_a_lit_top_against_a_wall_beside_its_shadow():
    setup, counter = counter_for(45)
    size = setup.cube_size
    rng = np.random.default_rng(7045)
    wall = CubePose("red", -(setup.tray.width / 2 - size / 2 - 0.2), 0.0, size / 2, size=size)
    shown = render(
        setup, [wall] + layout(setup, {"red": 1, "blue": 1}, "scattered", rng, existing=[wall]), rng
    )
    assert exact(counter.count(shown.image), shown.counts)


def test_a_top_shown_beyond_the_floors_edge_is_counted():
    # a cube on another against the wall far from the camera: its top, two edges up, shows
    # over the wall in the view, more than half a cube beyond the floor's edge
    setup, counter = counter_for(7)
    size = setup.cube_size
    y = setup.tray.depth / 2 - size / 2 - 0.2
    low = CubePose("red", 0.0, y, size / 2, size=size)
    high = CubePose("blue", 0.0, y, 1.5 * size, size=size, level=2)
    shown = render(setup, [low, high], np.random.default_rng(7))
    (tx, ty), (x0, y0, x1, y1) = (
        counter.view.to_view([shown.cubes[1].centre])[0],
        counter.view.floor,
    )
    assert shown.cubes[1].colour == "blue" and max(x0 - tx, tx - x1, y0 - ty, ty - y1) > TOP_PX / 2
    result = counter.count(shown.image)
    assert exact(result, shown.counts), result.counts


def test_a_profile_made_at_640x480_counts_at_1280x960():
    setup, profile, _ = calibrated(12)
    rng = np.random.default_rng(99)
    poses = layout(setup, {"red": 2, "blue": 1, "yellow": 3}, "touching", rng)
    for size in ((640, 480), (1280, 960)):
        s = render(setup, poses, np.random.default_rng(1), size=size)
        result = make_counter(profile, size).count(s.image)
        assert exact(result, s.counts), (size, result.counts)
        # centres are in the frame's own pixels
        truth = np.array(sorted(c.centre for c in s.cubes))
        got = np.array(sorted(c.centre for c in result.cubes))
        assert np.abs(got - truth).max() < 0.01 * size[0]


def test_per_cube_results_and_annotation():
    setup, counter = counter_for(19)
    s = scene(setup, {"red": 1, "blue": 2}, "scattered", 7)
    result = counter.count(s.image)
    assert len(result.cubes) == 3 and all(0 < c.confidence <= 1 for c in result.cubes)
    assert 0 < result.confidence <= 1 and result.ms > 0 and not result.obstructed
    for cube in result.cubes:
        # each outline is a square round the cube's centre
        assert np.allclose(cube.outline.mean(axis=0), cube.centre, atol=1.0)
    data = result.to_dict()
    assert data["counts"] == result.counts and data["unknown"] == 0
    assert sorted(c["colour"] for c in data["cubes"]) == ["blue", "blue", "red"]
    assert result.tray.shape == (4, 2)
    assert np.abs(result.tray - np.asarray(s.corners)).max() < 2
    out = annotate(s.image, result)
    assert out.shape == s.image.shape and (out != s.image).any()
    # the input is untouched
    assert (s.image == scene(setup, {"red": 1, "blue": 2}, "scattered", 7).image).all()


def test_an_empty_tray_has_no_cubes():
    setup, counter = counter_for(19)
    result = counter.count(scene(setup, {}, "scattered", 8).image)
    assert result.cubes == [] and sum(result.counts.values()) == 0 and result.unknown == 0


def test_wrong_frame_size_or_a_frame_not_in_colour_is_a_clear_error():
    _, counter = counter_for(19)
    with pytest.raises(VisionError, match="counter was made for 640x480"):
        counter.count(np.zeros((960, 1280, 3), np.uint8))
    with pytest.raises(VisionError, match="expected a BGR colour frame"):
        counter.count(np.zeros((480, 640), np.uint8))
    with pytest.raises(VisionError, match="expected a BGR colour frame"):
        counter.count(None)


@pytest.mark.parametrize("seed", [3, 12])
def test_a_large_card_of_no_calibrated_colour_obstructs(seed):
    setup, counter = counter_for(seed)
    s = scene(setup, {"red": 2, "blue": 1}, "scattered", 5)
    assert not counter.count(s.image).obstructed
    corners = np.float32(s.corners)
    middle = corners.mean(axis=0)
    covered = s.image.copy()
    # a card over the middle of the tray, a third of its width (a bright cyan: no cube's)
    cv2.fillConvexPoly(covered, np.int32(middle + (corners - middle) * 0.35), (230, 230, 40))
    assert counter.count(covered).obstructed


@pytest.mark.xfail(
    strict=True,
    reason="the obstruction test explains any colour near the floor's or a calibrated colour's "
    "lightness line; skin is near the brown floor's (set-up 3) and, on a blue floor, near "
    "black's (set-up 12)",
)
@pytest.mark.parametrize("seed", [3, 12])
def test_a_hand_in_the_tray_obstructs(seed):
    setup, counter = counter_for(seed)
    rng = np.random.default_rng(5)
    poses = layout(setup, {"red": 2, "blue": 1}, "scattered", rng)
    # fingertips at the tray's middle, held still
    hand = HandMove((0.0, 0.0), 270, t_in=0, t_hold=1, t_out=2, t_gone=3).at(1.5)
    assert counter.count(draw(setup, poses, rng, (640, 480), hand=hand)).obstructed
