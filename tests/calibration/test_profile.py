import json

import numpy as np
import pytest

from calibration import build_profile, load_profile, save_profile
from calibration.errors import CalibrationError
from calibration.profile import VERSION
from firmware.scene import layout, random_setup, render
from tests.vision.scenes import calibrated


@pytest.fixture(scope="module")
def profile():
    return calibrated(12)[1]


def test_round_trip_keeps_everything(profile, tmp_path):
    path = tmp_path / "cal.json"
    save_profile(profile, path)
    back = load_profile(path)
    assert back.colours == profile.colours and len(back.colours) == 6
    assert back.rect_size == profile.rect_size and back.frame_size == (640, 480)
    assert np.allclose(back.corners, profile.corners, atol=1e-6)
    assert np.array_equal(back.floor_pixels, np.round(profile.floor_pixels))
    assert np.allclose(back.clicks["red"], profile.clicks["red"])
    assert np.allclose(back.floor_field, profile.floor_field, atol=1e-4)
    assert back.floor_insets == profile.floor_insets and np.allclose(
        back.area_field, profile.area_field, atol=1e-2
    )
    assert len(profile.side_field) == 3 and np.allclose(
        back.side_field, profile.side_field, atol=1e-4
    )
    assert profile.outline_strength > 0 and back.outline_strength == pytest.approx(
        profile.outline_strength, abs=1e-5
    )
    data = json.loads(path.read_text())
    assert data["version"] == VERSION and data["format"] == "tower-companion-calibration"
    # positions are relative to the frame size
    assert all(0 <= v <= 1 for xy in data["corners"] for v in xy)


def test_camera_controls_are_stored_and_restored(tmp_path):
    rng = np.random.default_rng(3)
    setup = random_setup(rng)
    scene = render(setup, layout(setup, {c: 1 for c in setup.colours}, "scattered", rng), rng)
    controls = {"ExposureTime": 12000, "AnalogueGain": 1.5, "ColourGains": [1.8, 1.4]}
    profile, _ = build_profile(scene.image, scene.corners, scene.clicks, camera_controls=controls)
    save_profile(profile, tmp_path / "c.json")
    assert load_profile(tmp_path / "c.json").camera_controls == controls


def test_newer_older_and_damaged_files_fail_clearly(profile, tmp_path):
    path = tmp_path / "cal.json"
    data = profile.to_dict()
    for version, message in ((VERSION + 1, "newer Tower Companion"), (0, "not supported")):
        path.write_text(json.dumps({**data, "version": version}))
        with pytest.raises(CalibrationError, match=message):
            load_profile(path)
    path.write_text(json.dumps({**data, "floor_pixels": "x"}))
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
