import pytest

from calibration import build_profile
from calibration.errors import CalibrationError
from tests.vision.synth import CORNERS, FLOOR, clicks, tray_image

CUBES = [(150, 150, "red"), (300, 200, "blue"), (420, 320, "black")]


@pytest.mark.parametrize("corners, message", [
    (CORNERS[:3], "exactly 4 corners"),
    (CORNERS + [(100, 100)], "exactly 4 corners"),
    ([(80, 60), (700, 60), (560, 420), (80, 420)], "outside the 640x480 frame"),
    ([(80, -5), (560, 60), (560, 420), (80, 420)], "outside the 640x480 frame"),
    (CORNERS[::-1], "clockwise"),
])
def test_bad_corners_are_a_clear_error(corners, message):
    with pytest.raises(CalibrationError, match=message):
        build_profile(tray_image(CUBES), corners, clicks(CUBES))


def test_a_click_on_the_tray_floor_is_an_error():
    samples = {**clicks(CUBES), "blue": [(250, 350)]}
    with pytest.raises(CalibrationError, match=r"click for blue at \(250,350\) hit the tray floor"):
        build_profile(tray_image(CUBES), CORNERS, samples)


def test_clicks_outside_the_tray_or_frame_are_errors():
    with pytest.raises(CalibrationError, match="outside the tray corners"):
        build_profile(tray_image(CUBES), CORNERS, {**clicks(CUBES), "red": [(20, 20)]})
    with pytest.raises(CalibrationError, match="outside the 640x480 frame"):
        build_profile(tray_image(CUBES), CORNERS, {**clicks(CUBES), "red": [(900, 20)]})
    with pytest.raises(CalibrationError, match="no colour samples"):
        build_profile(tray_image(CUBES), CORNERS, {})


def test_quality_report_warns_about_colours_too_close():
    from tests.vision import synth
    img = tray_image(CUBES + [(200, 300, "red")])
    # a second "colour" clicked on a red cube: indistinguishable from red
    samples = {**clicks(CUBES), "crimson": [(200, 297)]}
    _, report = build_profile(img, CORNERS, samples)
    assert any("red and crimson are too close" in w for w in report.warnings)
    good = build_profile(tray_image(CUBES), CORNERS, {k: v for k, v in clicks(CUBES).items() if k != "black"})[1]
    assert not good.warnings
    assert {q.colour for q in good.colours} == {"red", "blue"}
    assert all(q.to_nearest > 2 and q.to_tray > 2 for q in good.colours)
    assert synth.FLOOR == FLOOR


def test_quality_report_warns_about_a_colour_close_to_the_floor():
    from tests.vision import synth
    paints = dict(synth.PAINTS)
    synth.PAINTS["sand"] = tuple(int(v * 1.08) for v in FLOOR)
    try:
        cubes = CUBES + [(200, 300, "sand")]
        _, report = build_profile(tray_image(cubes), CORNERS, clicks(cubes))
    finally:
        synth.PAINTS.clear()
        synth.PAINTS.update(paints)
    assert any("sand is close to the tray floor" in w for w in report.warnings)
    assert not any("red is close" in w or "blue is close" in w for w in report.warnings)
