"""Building a profile from one generated frame and its clicks; bad input and the quality report."""

import numpy as np
import pytest

from calibration import build_profile, make_counter
from calibration.errors import CalibrationError
from firmware.scene import layout, random_setup, render
from firmware.scene.paints import DEFAULT_PAINTS
from firmware.scene.setup import project
from tests.vision.scenes import calibrated, exact, scene

SEED = 12


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(SEED)
    setup = random_setup(rng)
    return render(setup, layout(setup, {c: 1 for c in setup.colours}, "scattered", rng), rng)


def test_a_profile_and_a_clean_report(frame):
    profile, report = build_profile(frame.image, frame.corners, frame.clicks)
    assert profile.colours == list(frame.clicks)
    assert 8 <= profile.cube_size <= 16 and profile.cube_area > profile.cube_size**2 * 0.8
    assert {q.colour for q in report.colours} == set(frame.clicks)
    assert all(q.samples > 10 and q.to_tray > 1 and not q.like_shadow for q in report.colours)
    assert report.lines()[0].startswith("cube size")
    # two colours lie less than 1.5 apart here (black and purple): the counter tells them
    # apart, so no warning
    assert min(q.to_nearest for q in report.colours) < 1.5 and report.warnings == []


@pytest.mark.parametrize("seed", [12, 21])
def test_the_clicked_cubes_show_their_sides_toward_the_floor_below_the_camera(seed):
    setup, profile, _ = calibrated(seed)
    counter = make_counter(profile, (640, 480), learned=())  # (no forest is needed)
    R, C = setup.camera.pose()
    below = counter.geometry.to_rect(project(setup, np.array([[C[0], C[1], 0.0]]), (640, 480)))[0]
    w, h = profile.rect_size
    for point in [(0.2 * w, 0.2 * h), (0.8 * w, 0.2 * h), (0.8 * w, 0.8 * h), (0.2 * w, 0.8 * h)]:
        sides, toward = np.array(counter.sides(point)), below - np.array(point)
        assert sides @ toward > 0.9 * np.linalg.norm(sides) * np.linalg.norm(toward)
    # farther from the camera, more side shows
    near, far = sorted(
        [(0.5 * w, 0.2 * h), (0.5 * w, 0.8 * h)], key=lambda p: np.hypot(*(below - p))
    )
    assert np.hypot(*counter.sides(far)) > np.hypot(*counter.sides(near))


def test_one_cube_clicked_gives_no_side_field_and_a_warning(frame):
    name, points = next(iter(frame.clicks.items()))
    profile, report = build_profile(frame.image, frame.corners, {name: points[:1]})
    assert profile.side_field == ()
    assert any("fewer than two cubes standing alone" in w for w in report.warnings)
    profile, report = build_profile(frame.image, frame.corners, frame.clicks)
    assert len(profile.side_field) == 3 and not any("standing alone" in w for w in report.warnings)


@pytest.mark.parametrize(
    "corners, message",
    [
        (lambda c: c[:3], "exactly 4 corners"),
        (lambda c: np.vstack([c, c[:1]]), "exactly 4 corners"),
        (lambda c: c + [[200, 0]] * 4, "outside the 640x480 frame"),
        (lambda c: c - [[0, 300]] * 4, "outside the 640x480 frame"),
        (lambda c: c[::-1], "clockwise"),
    ],
)
def test_bad_corners_are_a_clear_error(frame, corners, message):
    with pytest.raises(CalibrationError, match=message):
        build_profile(frame.image, corners(np.asarray(frame.corners)), frame.clicks)


def test_a_click_on_the_tray_floor_is_an_error(frame):
    x, y = frame.bare_floor()
    with pytest.raises(
        CalibrationError, match=rf"click for blue at \({x:g},{y:g}\) hit the tray floor"
    ):
        build_profile(frame.image, frame.corners, {**frame.clicks, "blue": [(x, y)]})


@pytest.mark.parametrize("seed, colour", [(5, "black"), (7, "blue"), (34, "red")])
def test_a_click_on_a_wooden_floor_is_an_error(seed, colour):
    # The grain stops the clicked face from growing over the floor, and draws edges of its
    # own: only edges that stand out from the grain's are a cube's.
    rng = np.random.default_rng(seed)
    setup = random_setup(rng)
    assert setup.tray.floor_texture == "wood"
    shown = render(setup, layout(setup, {c: 1 for c in setup.colours}, "scattered", rng), rng)
    x, y = shown.bare_floor()
    with pytest.raises(
        CalibrationError, match=rf"click for {colour} at \({x:g},{y:g}\) hit the tray floor"
    ):
        build_profile(shown.image, shown.corners, {**shown.clicks, colour: [(x, y)]})
    profile, _ = build_profile(shown.image, shown.corners, shown.clicks)
    assert profile.colours == list(shown.clicks)


def test_clicks_outside_the_tray_or_the_frame_or_none_are_errors(frame):
    with pytest.raises(
        CalibrationError,
        match=r"click for red at \(3,3\) is outside the tray corners: click the "
        r"top of a cube on the tray floor away from the walls",
    ):
        build_profile(frame.image, frame.corners, {**frame.clicks, "red": [(3, 3)]})
    with pytest.raises(CalibrationError, match="outside the 640x480 frame"):
        build_profile(frame.image, frame.corners, {**frame.clicks, "red": [(900, 20)]})
    with pytest.raises(CalibrationError, match="no colour samples"):
        build_profile(frame.image, frame.corners, {})
    with pytest.raises(CalibrationError, match="needs a BGR colour frame"):
        build_profile(frame.image[:, :, 0], frame.corners, frame.clicks)


def test_quality_report_warns_when_two_colours_are_too_close(frame):
    # "crimson" is clicked on the red cube: the two cannot be told apart
    _, report = build_profile(
        frame.image, frame.corners, {**frame.clicks, "crimson": frame.clicks["red"]}
    )
    assert any(
        w.startswith("red and crimson are too close")
        or w.startswith("crimson and red are too close")
        for w in report.warnings
    )


def test_quality_report_warns_about_a_second_batch_of_one_paint_but_not_about_orange_beside_red():
    red, orange = DEFAULT_PAINTS["red"]["albedo"], DEFAULT_PAINTS["orange"]["albedo"]
    warned = {}
    for name, albedo in [
        ("crimson", tuple(r + 0.1 * (o - r) for r, o in zip(red, orange, strict=True))),
        ("orange", orange),
    ]:
        rng = np.random.default_rng(SEED)
        setup = random_setup(
            rng, ("red", "blue", "yellow", name), paints={name: {"albedo": albedo}}
        )
        shown = render(setup, layout(setup, {c: 2 for c in setup.colours}, "scattered", rng), rng)
        _, report = build_profile(shown.image, shown.corners, shown.clicks)
        warned[name] = [w for w in report.warnings if "too close" in w]
    assert len(warned["crimson"]) == 1 and "red" in warned["crimson"][0]
    assert warned["orange"] == []


def test_quality_report_warns_about_a_paint_close_to_the_tray():
    rng = np.random.default_rng(SEED)
    floor = random_setup(rng).tray.floor
    rng = np.random.default_rng(SEED)
    setup = random_setup(
        rng,
        ("red", "blue", "sand"),
        paints={"sand": {"albedo": tuple(min(1.0, v * 1.1) for v in floor), "variation": 0.02}},
    )
    assert setup.tray.floor == floor
    scene = render(setup, layout(setup, {"red": 1, "blue": 1, "sand": 2}, "scattered", rng), rng)
    _, report = build_profile(scene.image, scene.corners, scene.clicks)
    assert any(w.startswith("sand is close to the tray floor") for w in report.warnings)
    assert not any(w.startswith("red") for w in report.warnings)


def test_a_black_top_that_looks_like_the_floor_is_a_click_on_a_cube_not_on_the_floor():
    # Set-up 228: black cubes on a grey tray in a bright light; the black click's colour
    # grows over the floor, but a cube's sharp outline surrounds it.
    setup, profile, report = calibrated(228)
    [warning] = report.warnings
    assert (
        warning.startswith("black looks like the tray floor in shadow")
        and f"warning: {warning}" in report.lines()
    )
    assert [q.colour for q in report.colours if q.like_shadow] == ["black"]
    assert report.to_dict()["colours"][0]["like_shadow"] is True
    counter = make_counter(profile, (640, 480))
    shown = scene(setup, {c: 1 for c in setup.colours}, "scattered", 22801)
    assert exact(counter.count(shown.image), shown.counts)


def test_a_tray_whose_corners_lie_on_the_frames_last_pixel_row_calibrates(frame):
    # The frame cut just below the tray's lowest corner: that corner lies within the frame's
    # last pixel row (y = h - 0.4, say), not beyond it.
    corners = np.asarray(frame.corners)
    h = int(np.floor(corners[:, 1].max())) + 1
    profile, _ = build_profile(frame.image[:h].copy(), corners, frame.clicks)
    lowest = max(y for _, y in profile.corners_px((640, h)))
    assert profile.frame_size == (640, h) and h - 1 < lowest <= h
    with pytest.raises(CalibrationError, match=rf"is outside the 640x{h - 1} frame"):
        build_profile(frame.image[: h - 1].copy(), corners, frame.clicks)
