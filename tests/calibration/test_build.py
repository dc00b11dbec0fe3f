"""Building a profile from one frame and its clicks; bad input and the quality report."""

import math
from dataclasses import replace

import numpy as np
import pytest

from calibration import build_profile, make_counter
from calibration.errors import CalibrationError
from companion.benchmarks.vision import GREY_FLOORS
from firmware.scene import layout, random_setup, render
from firmware.scene.paints import DEFAULT_PAINTS, FLOORS
from tests.calibration.photo import CUBE, SIZE, photo
from tests.vision.scenes import calibrated, exact, scene
from vision.centres import CentreNet, PeakOdds
from vision.counter import LIGHTNESS_PER_DOUBLING

SEED = 12
# BGR in the open light: tops of the paints, and tray floors (tests/calibration/photo.py)
BLACK, WHITE, RED = (52, 50, 50), (222, 226, 228), (40, 40, 170)
BLUE, YELLOW = (150, 60, 30), (30, 190, 215)
LIGHT_GREY, MID_GREY = (176, 176, 172), (118, 118, 115)
DARK_GREY, BLACK_FLOOR = (62, 62, 60), (28, 28, 28)
PLACES = [(150, 130), (330, 300), (480, 140), (230, 360), (430, 370), (160, 250)]
# Felt whose own grain draws sharp edges about as strong as a black top's outline
COARSE = 30.0


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(SEED)
    setup = random_setup(rng)
    shown = render(setup, layout(setup, {c: 1 for c in setup.colours}, "scattered", rng), rng)
    return setup, shown


def _not_on_a_cube(image, corners, clicks, colour, x, y, net=None):
    with pytest.raises(
        CalibrationError,
        match=rf"click for {colour} at \({x:g},{y:g}\) is not on a cube: no cube's top was "
        r"found there; click on the middle of a cube's top",
    ):
        build_profile(image, corners, {**clicks, colour: [(x, y)]}, net=net)


def test_a_profile_and_a_clean_report(frame):
    setup, shown = frame
    profile, report = build_profile(shown.image, shown.corners, shown.clicks)
    assert profile.colours == list(shown.clicks) and profile.frame_size == (640, 480)
    assert all(len(profile.tops[c]) == len(shown.clicks[c]) for c in profile.colours)
    # The cube's share of the floor's width, as the net found it: a top is a little nearer
    # the camera than the floor, so it shows a little larger.
    share = (profile.cube_size / profile.rect_size[0]) / (setup.cube_size / setup.tray.width)
    assert 1.0 <= share <= 1.3, share
    assert report.cube_size == profile.cube_size
    assert {q.colour for q in report.colours} == set(shown.clicks)
    # one click each: no spread; every paint stands apart from the others by its hue, and
    # from the tray at least by its lightness (a doubling weighs LIGHTNESS_PER_DOUBLING)
    assert all(q.clicks == 1 and q.spread == 0 for q in report.colours)
    assert all(q.to_nearest > 0.5 for q in report.colours)
    assert all(q.to_tray > LIGHTNESS_PER_DOUBLING * 0.5 for q in report.colours)
    assert report.warnings == []
    lines = report.lines()
    assert lines[0] == f"cube size on the floor seen from above: {profile.cube_size:.1f} px"
    assert len(lines) == 1 + len(profile.colours)
    data = report.to_dict()
    assert data["cube_size"] == round(profile.cube_size, 2) and data["warnings"] == []
    assert [c["colour"] for c in data["colours"]] == [q.colour for q in report.colours]
    assert set(data["colours"][0]) == {
        "colour",
        "clicks",
        "spread",
        "nearest",
        "to_nearest",
        "to_tray",
        "lightness",
    }


def test_the_photos_cube_size_is_found_and_its_cubes_counted():
    cubes = [("black", BLACK, PLACES[0]), ("red", RED, PLACES[1]), ("blue", BLUE, PLACES[2])]
    shot = photo(LIGHT_GREY, cubes)
    profile, _ = build_profile(shot.image, shot.corners, shot.clicks)
    # The photo's floor seen from above keeps about its own scale (its corners lie near a
    # rectangle), so its cube size is about the drawn one: within the 15% the net was trained
    # to allow, which is as finely as it tells sizes apart.
    assert abs(math.log(profile.cube_size / CUBE)) < math.log(1.15), profile.cube_size
    more = [*cubes, ("black", BLACK, PLACES[3]), ("red", RED, PLACES[4]), ("red", RED, PLACES[5])]
    counted = make_counter(profile, SIZE).count(photo(LIGHT_GREY, more, seed=3).image)
    assert counted.counts == {"black": 2, "red": 3, "blue": 1}


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
    _, shown = frame
    with pytest.raises(CalibrationError, match=message):
        build_profile(shown.image, corners(np.asarray(shown.corners)), shown.clicks)


def test_a_click_on_the_tray_floor_is_refused(frame):
    _, shown = frame
    _not_on_a_cube(shown.image, shown.corners, shown.clicks, "blue", *shown.bare_floor())


class _Rescaled(CentreNet):
    """The shipped net with its scores scaled down and its peak odds moved with them: the
    same peaks, each as likely a cube as before, but scores far lower."""

    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor
        self.odds = PeakOdds(tuple(s * factor for s in self.odds.scores), self.odds.odds)

    def scores(self, log_ratio):
        return super().scores(log_ratio) * self.factor


def test_a_click_is_judged_by_its_peaks_odds_not_the_nets_raw_score(frame):
    # The net's score is not a probability (its focal loss keeps scores low); calibration
    # takes a click on a cube as the counter takes a peak: by what such peaks were.
    _, shown = frame
    shipped, _ = build_profile(shown.image, shown.corners, shown.clicks)
    net = _Rescaled(0.28)  # a top's score of 0.92 becomes 0.26
    profile, _ = build_profile(shown.image, shown.corners, shown.clicks, net=net)
    assert profile.colours == shipped.colours
    assert abs(profile.cube_size / shipped.cube_size - 1) < 1e-6
    _not_on_a_cube(shown.image, shown.corners, shown.clicks, "blue", *shown.bare_floor(), net=net)


@pytest.mark.parametrize("seed, colour", [(5, "black"), (7, "blue"), (34, "red")])
def test_a_click_on_a_wooden_floor_is_refused(seed, colour):
    rng = np.random.default_rng(seed)
    setup = random_setup(rng)
    assert setup.tray.floor_texture == "wood"
    shown = render(setup, layout(setup, {c: 1 for c in setup.colours}, "scattered", rng), rng)
    _not_on_a_cube(shown.image, shown.corners, shown.clicks, colour, *shown.bare_floor())
    profile, _ = build_profile(shown.image, shown.corners, shown.clicks)
    assert profile.colours == list(shown.clicks)


def _photo(floor, first: str, paint, grain: float = 4.0):
    others = [("red", RED), ("blue", BLUE) if first == "black" else ("yellow", YELLOW)]
    cubes = [(first, paint)] * 3 + others + others[:1]
    return photo(
        floor, [(name, bgr, at) for (name, bgr), at in zip(cubes, PLACES, strict=True)], grain=grain
    )


@pytest.mark.parametrize(
    "floor, first, paint",
    [
        (LIGHT_GREY, "black", BLACK),
        (MID_GREY, "black", BLACK),
        (DARK_GREY, "white", WHITE),
        (BLACK_FLOOR, "white", WHITE),
    ],
)
@pytest.mark.parametrize("grain", [4.0, COARSE])
def test_black_or_white_on_a_grey_felt_is_accepted_its_shadow_and_the_floor_refused(
    floor, first, paint, grain
):
    # Black, grey and white differ from a grey tray in lightness only; a black cube's
    # shadow on a light grey felt is about as dark as the cube (on a smooth felt, the
    # cube's sharp edge beside its shadow once made a click there pass for a cube's).
    shot = _photo(floor, first, paint, grain)
    profile, report = build_profile(shot.image, shot.corners, shot.clicks)
    assert profile.colours[0] == first and len(profile.tops[first]) == 3
    # the report tells how much lighter or darker than the floor the top is, in stops
    q = report.colours[0]
    assert q.colour == first and (q.lightness < -0.5 if first == "black" else q.lightness > 0.5)
    word = "darker" if first == "black" else "lighter"
    assert report.lines()[1].endswith(f"{abs(q.lightness):.1f} stops {word}")
    for spot in (shot.floor, shot.shadow):
        _not_on_a_cube(shot.image, shot.corners, shot.clicks, first, *spot)


@pytest.mark.parametrize(
    "floor, first",
    [("light grey", "black"), ("grey", "black"), ("dark grey", "white"), ("black", "white")],
)
def test_generated_tables_with_grey_floors_calibrate_and_refuse_the_bare_floor(floor, first):
    rng = np.random.default_rng(45)
    setup = random_setup(rng, ("red", "blue", "black", "white"))
    albedo = {**FLOORS, **GREY_FLOORS}[floor]
    setup = replace(setup, tray=replace(setup.tray, floor=albedo, floor_texture="felt"))
    shown = render(setup, layout(setup, {c: 2 for c in setup.colours}, "scattered", rng), rng)
    profile, _ = build_profile(shown.image, shown.corners, shown.clicks)
    assert profile.colours == list(shown.clicks) and first in profile.colours
    _not_on_a_cube(shown.image, shown.corners, shown.clicks, first, *shown.bare_floor())


def test_clicks_outside_the_tray_or_the_frame_or_none_are_errors(frame):
    _, shown = frame
    image, corners, clicks = shown.image, shown.corners, shown.clicks
    with pytest.raises(
        CalibrationError,
        match=r"click for red at \(3,3\) is outside the tray corners: click the "
        r"top of a cube on the tray floor",
    ):
        build_profile(image, corners, {**clicks, "red": [(3, 3)]})
    with pytest.raises(CalibrationError, match="outside the 640x480 frame"):
        build_profile(image, corners, {**clicks, "red": [(900, 20)]})
    with pytest.raises(CalibrationError, match="no colour samples"):
        build_profile(image, corners, {})
    with pytest.raises(CalibrationError, match="colour red: no click given"):
        build_profile(image, corners, {**clicks, "red": []})
    with pytest.raises(CalibrationError, match="colour name 're d'"):
        build_profile(image, corners, {"re d": clicks["red"]})
    with pytest.raises(CalibrationError, match="needs a BGR colour frame"):
        build_profile(image[:, :, 0], corners, clicks)


def test_quality_report_warns_when_two_colours_are_too_close(frame):
    # "crimson" is clicked on the red cube: the two cannot be told apart
    _, shown = frame
    _, report = build_profile(
        shown.image, shown.corners, {**shown.clicks, "crimson": shown.clicks["red"]}
    )
    [warning] = report.warnings
    assert warning.startswith(("red and crimson are too close", "crimson and red are too close"))
    assert f"warning: {warning}" in report.lines()
    crimson = next(q for q in report.colours if q.colour == "crimson")
    assert crimson.nearest == "red" and crimson.to_nearest == 0


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
    # (orange and yellow lie at the warning's edge in this light, 0.5 apart: either is right)
    assert not [w for w in warned["orange"] if "red" in w]


def test_a_paint_close_to_the_tray_is_reported_closest_to_it():
    # Cubes are found by their shape, so a paint like the floor is no error and no warning;
    # the report still shows it is the colour nearest the tray.
    rng = np.random.default_rng(SEED)
    floor = random_setup(rng).tray.floor
    rng = np.random.default_rng(SEED)
    setup = random_setup(
        rng,
        ("red", "blue", "sand"),
        paints={"sand": {"albedo": tuple(min(1.0, v * 1.1) for v in floor), "variation": 0.02}},
    )
    assert setup.tray.floor == floor
    shown = render(setup, layout(setup, {"red": 1, "blue": 1, "sand": 2}, "scattered", rng), rng)
    _, report = build_profile(shown.image, shown.corners, shown.clicks)
    assert min(report.colours, key=lambda q: q.to_tray).colour == "sand"
    assert report.warnings == []


def test_black_cubes_on_a_grey_tray_in_a_bright_light_calibrate_and_count():
    # Set-up 228: black cubes on a grey tray in a bright light, their tops much like the floor
    setup, profile, report = calibrated(228)
    assert "black" in profile.colours and report.warnings == []
    counter = make_counter(profile, (640, 480))
    shown = scene(setup, {c: 1 for c in setup.colours}, "scattered", 22801)
    assert exact(counter.count(shown.image), shown.counts)


def test_a_tray_whose_corners_lie_on_the_frames_last_pixel_row_calibrates(frame):
    # The frame cut just below the tray's lowest corner: that corner lies within the frame's
    # last pixel row (y = h - 0.4, say), not beyond it.
    _, shown = frame
    corners = np.asarray(shown.corners)
    h = int(np.floor(corners[:, 1].max())) + 1
    profile, _ = build_profile(shown.image[:h].copy(), corners, shown.clicks)
    lowest = max(y for _, y in profile.corners_px((640, h)))
    assert profile.frame_size == (640, h) and h - 1 < lowest <= h
    with pytest.raises(CalibrationError, match=rf"is outside the 640x{h - 1} frame"):
        build_profile(shown.image[: h - 1].copy(), corners, shown.clicks)
