import json

import numpy as np
import pytest

from calibration import build_profile, load_profile, make_counter, save_profile
from calibration.errors import CalibrationError
from calibration.profile import FORMAT, VERSION
from firmware.scene import layout, random_setup, render
from tests.vision.scenes import calibrated, exact, scene
from vision.counter import colour_distance

SEED = 12


@pytest.fixture(scope="module")
def profile():
    return calibrated(SEED)[1]


def test_round_trip_keeps_everything(profile, tmp_path):
    path = tmp_path / "cal.json"
    save_profile(profile, path)
    back = load_profile(path)
    assert back.colours == profile.colours and len(back.colours) == 6
    assert back.rect_size == profile.rect_size and back.frame_size == (640, 480)
    assert back.cube_size == pytest.approx(profile.cube_size, abs=1e-3)
    assert np.allclose(back.corners, profile.corners, atol=1e-6)
    for colour in profile.colours:
        assert len(back.tops[colour]) == len(profile.tops[colour]) == 2
        assert np.allclose(back.tops[colour], profile.tops[colour], atol=1e-4)
        assert np.allclose(back.clicks[colour], profile.clicks[colour], atol=1e-6)
    data = json.loads(path.read_text())
    assert data["version"] == VERSION == 2 and data["format"] == FORMAT
    # positions are relative to the frame size
    assert all(0 <= v <= 1 for xy in data["corners"] for v in xy)
    assert not list(tmp_path.glob("*.tmp"))


def test_camera_controls_are_stored_and_restored(tmp_path):
    rng = np.random.default_rng(3)
    setup = random_setup(rng)
    shown = render(setup, layout(setup, {c: 1 for c in setup.colours}, "scattered", rng), rng)
    controls = {"ExposureTime": 12000, "AnalogueGain": 1.5, "ColourGains": [1.8, 1.4]}
    profile, _ = build_profile(shown.image, shown.corners, shown.clicks, camera_controls=controls)
    save_profile(profile, tmp_path / "c.json")
    assert load_profile(tmp_path / "c.json").camera_controls == controls


def _version_1(calib, profile) -> dict:
    """The calibration as version 1 kept it: sampled pixels of the bare floor and of the
    middle of each clicked top (and fields version 2 no longer has)."""
    w, h = 640, 480

    def pixels(points):
        return [
            calib.image[round(y) + dy, round(x) + dx].tolist()
            for x, y in points
            for dy in (-1, 0, 1)
            for dx in (-1, 0, 1)
        ]

    return {
        "format": FORMAT,
        "version": 1,
        "frame_size": [w, h],
        "corners": [[x / w, y / h] for x, y in np.asarray(calib.corners).tolist()],
        "rect_size": list(profile.rect_size),
        "cube_size": profile.cube_size,
        "cube_area": profile.cube_size**2,
        "floor_pixels": pixels([calib.bare_floor()]),
        "colours": {
            name: {"pixels": pixels(points), "clicks": [[x / w, y / h] for x, y in points]}
            for name, points in calib.clicks.items()
        },
        "floor_field": [1.0, 0.0, 0.0],
        "shadow_level": 0.5,
        "floor_insets": [0, 0, 0, 0],
        "area_field": [],
        "side_field": [],
        "outline_strength": None,
        "camera_controls": {"ExposureTime": 9000},
    }


def test_a_version_1_file_is_upgraded_and_counts(profile, tmp_path):
    # (the calibration frame of tests.vision.scenes.calibrated)
    rng = np.random.default_rng(SEED)
    setup = random_setup(rng)
    calib = render(setup, layout(setup, {c: 2 for c in setup.colours}, "scattered", rng), rng)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(_version_1(calib, profile)))
    old = load_profile(path)
    assert old.version == VERSION and old.colours == profile.colours
    assert old.camera_controls == {"ExposureTime": 9000}
    assert np.allclose(old.clicks["red"], profile.clicks["red"], atol=1e-6)
    for colour in profile.colours:
        # one top per colour: the median of its pixels over the floor's, as log2 ratios
        [top] = old.tops[colour]
        assert min(colour_distance(top, t) for t in profile.tops[colour]) < 0.3, colour
    shown = scene(setup, {"red": 2, "blue": 1, "yellow": 2, "black": 1}, "scattered", 1201)
    assert exact(make_counter(old, (640, 480)).count(shown.image), shown.counts)
    # saved again, it is a version 2 file
    save_profile(old, path)
    assert json.loads(path.read_text())["version"] == VERSION


def test_newer_older_and_damaged_files_fail_clearly(profile, tmp_path):
    path = tmp_path / "cal.json"
    data = profile.to_dict()
    for version, message in ((VERSION + 1, "newer Tower Companion"), (0, "not supported")):
        path.write_text(json.dumps({**data, "version": version}))
        with pytest.raises(CalibrationError, match=message):
            load_profile(path)
    red = data["colours"]["red"]
    for damage in (
        {"colours": {**data["colours"], "red": {**red, "tops": "x"}}},
        {"colours": {**data["colours"], "red": {**red, "tops": []}}},
        {"colours": {**data["colours"], "red": {**red, "tops": [[0.1, None, 0.2]]}}},
        {"colours": {}},
        {"cube_size": "big"},
    ):
        path.write_text(json.dumps({**data, **damage}))
        with pytest.raises(CalibrationError, match=f"{path}: damaged calibration profile"):
            load_profile(path)
    # a version 1 file with pixels out of range
    old = {**data, "version": 1, "floor_pixels": [[300, 0, 0]]}
    old["colours"] = {"red": {"pixels": [[10, 10, 10]]}}
    path.write_text(json.dumps(old))
    with pytest.raises(CalibrationError, match="damaged"):
        load_profile(path)
    path.write_text("{not json")
    with pytest.raises(CalibrationError, match="not valid JSON"):
        load_profile(path)
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(CalibrationError, match="not a Tower Companion calibration"):
        load_profile(path)
    with pytest.raises(CalibrationError, match="no such calibration profile"):
        load_profile(tmp_path / "missing.json")
