"""The Pi camera source against `fake_picamera2` (picamera2 itself needs a Pi and libcamera)."""

from __future__ import annotations

import logging
import sys
import time

import numpy as np
import pytest

from firmware.camera import CameraLost, open_source
from firmware.errors import FirmwareError
from tests.firmware import fake_picamera2

LOCKED = {"ExposureTime": 8000, "AnalogueGain": 1.5, "ColourGains": [1.9, 1.7]}


@pytest.fixture
def fake(monkeypatch):
    fake_picamera2.reset()
    monkeypatch.setitem(sys.modules, "picamera2", fake_picamera2)
    yield fake_picamera2
    fake_picamera2.reset()


def test_settles_then_locks_exposure_and_white_balance(fake):
    from firmware.picam import PiCameraSource

    source = PiCameraSource(64, 48, 15)
    try:
        camera = fake.INSTANCES[-1]
        assert camera.camera_config["main"] == {"format": "RGB888", "size": (64, 48)}
        assert camera.camera_config["controls"]["FrameDurationLimits"] == (66666, 66666)
        # The Camera Module 3 focused on the tray once, first; then all was locked in one call.
        focused, locked = camera.set_controls_calls[-2:]
        assert focused == {"AfMode": 1, "AfTrigger": 0}
        assert locked["AeEnable"] is False and locked["AwbEnable"] is False
        assert (
            locked["AfMode"] == 0
            and locked["LensPosition"] == source.controls["LensPosition"] == 2.5
        )
        # The values locked are the converged ones, reported for the calibration to store.
        assert source.controls["ExposureTime"] == locked["ExposureTime"] == 5000
        assert source.controls["AnalogueGain"] == pytest.approx(locked["AnalogueGain"])
        assert source.controls["AnalogueGain"] == pytest.approx(
            fake.TARGET_LEVEL / np.mean(fake.SCENE_RGB) * 2, rel=0.03
        )
        assert source.controls["ColourGains"] == pytest.approx([1.6, 2.1], rel=0.03)
        frame = source.read(timeout=2)
        # RGB888 is B, G, R in memory: the reddish tray has its biggest value in channel 2.
        assert frame.image.shape == (48, 64, 3)
        b, g, r = frame.image[0, 0]
        assert r > g > b
        assert frame.image.mean() == pytest.approx(fake.TARGET_LEVEL, rel=0.05)
        # Locked: brighter room light makes a brighter image, not a new exposure.
        fake.fake_light = 1.5
        later = [source.read(timeout=2) for _ in range(3)][-1]
        assert later.image.mean() > frame.image.mean() * 1.3
        assert camera._gain == pytest.approx(source.controls["AnalogueGain"])
    finally:
        source.close()
    assert not fake.INSTANCES[-1].is_open


def test_auto_exposure_keeps_a_bright_tray_from_clipping(fake, monkeypatch):
    # A vivid red whose mean is dim: exposing for the mean would clip red at 255, losing the
    # ratio between the channels that the counter reads a colour from.
    monkeypatch.setattr(fake, "SCENE_RGB", (250, 20, 10))
    from firmware.picam import PiCameraSource

    source = PiCameraSource(64, 48, 15)
    try:
        assert fake.INSTANCES[-1].camera_config["controls"]["AeConstraintMode"] == 1
        b, g, r = source.read(timeout=2).image[0, 0].astype(int)
        assert r == pytest.approx(fake.HIGHLIGHT_LEVEL, abs=8) and r < 255
        assert r / g == pytest.approx(250 / 20, rel=0.15)
    finally:
        source.close()


def test_a_camera_without_the_highlight_mode_still_starts(fake, monkeypatch):
    controls = {k: v for k, v in fake._CONTROLS.items() if k != "AeConstraintMode"}
    monkeypatch.setattr(fake, "_CONTROLS", controls)
    from firmware.picam import PiCameraSource

    source = PiCameraSource(64, 48, 15)
    try:
        assert "AeConstraintMode" not in fake.INSTANCES[-1].camera_config["controls"]
        assert source.read(timeout=2).image.shape == (48, 64, 3)
    finally:
        source.close()


def test_stored_controls_are_reapplied_without_settling(fake):
    from firmware.picam import PiCameraSource

    stored = {
        "ExposureTime": 8000,
        "AnalogueGain": 1.5,
        "ColourGains": [1.9, 1.7],
        "LensPosition": 3.0,
    }
    with PiCameraSource(64, 48, 10, controls=stored) as source:
        camera = fake.INSTANCES[-1]
        # no focusing either: the lens goes back where calibration left it
        assert camera.set_controls_calls == [
            {
                "AeEnable": False,
                "AwbEnable": False,
                "ExposureTime": 8000,
                "AnalogueGain": 1.5,
                "ColourGains": (1.9, 1.7),
                "AfMode": 0,
                "LensPosition": 3.0,
            }
        ]
        assert source.controls == stored
        source.read(timeout=2)
        metadata = camera.capture_metadata()
        assert metadata["ExposureTime"] == 8000 and metadata["LensPosition"] == 3.0


def test_stored_controls_without_a_lens_position_focus_once(fake, caplog):
    """A calibration stored before focus was locked, on a Camera Module 3."""
    from firmware.picam import PiCameraSource

    fake.fake_sharp_at = 4.0
    with PiCameraSource(64, 48, 10, controls=LOCKED) as source:
        camera = fake.INSTANCES[-1]
        assert camera.set_controls_calls == [
            {"AfMode": 1, "AfTrigger": 0},
            {
                "AeEnable": False,
                "AwbEnable": False,
                "ExposureTime": 8000,
                "AnalogueGain": 1.5,
                "ColourGains": (1.9, 1.7),
                "AfMode": 0,
                "LensPosition": 4.0,
            },
        ]
        assert source.controls == {**LOCKED, "LensPosition": 4.0}
    assert "autofocus" not in caplog.text


def test_a_fixed_focus_camera_is_sent_no_focus_controls(fake):
    from firmware.picam import PiCameraSource

    fake.CAMERAS[:] = [dict(fake.IMX219)]  # Camera Module 2: the fake raises on controls it lacks
    with PiCameraSource(64, 48, 15) as source:
        assert "LensPosition" not in source.controls
        assert source.controls["ExposureTime"] == 5000
    # a lens position stored from a Camera Module 3 is not for this one
    with PiCameraSource(64, 48, 15, controls={**LOCKED, "LensPosition": 3.0}) as source:
        assert source.controls == LOCKED
        assert fake.INSTANCES[-1].set_controls_calls[-1] == {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": 8000,
            "AnalogueGain": 1.5,
            "ColourGains": (1.9, 1.7),
        }


def test_a_tray_out_of_focus_reach_is_logged_and_the_lens_locked_anyway(fake, caplog):
    from firmware.picam import PiCameraSource

    fake.fake_sharp_at = None
    with caplog.at_level(logging.WARNING, logger="firmware.picam"):
        with PiCameraSource(64, 48, 15) as source:
            assert source.controls["LensPosition"] == 0.0
            assert fake.INSTANCES[-1].set_controls_calls[-1]["AfMode"] == 0
    assert "autofocus found no sharp picture of the tray" in caplog.text


def test_incomplete_stored_controls_are_a_clear_error(fake):
    from firmware.picam import PiCameraSource

    with pytest.raises(FirmwareError, match="lack ColourGains"):
        PiCameraSource(64, 48, 10, controls={"ExposureTime": 8000, "AnalogueGain": 1.5})
    assert not fake.INSTANCES[-1].is_open


def test_no_camera_and_busy_camera_are_told_apart(fake):
    from firmware.picam import PiCameraSource, camera_count

    fake.fake_busy = True
    with pytest.raises(FirmwareError, match="present but cannot be opened.*another program"):
        PiCameraSource(64, 48, 15)
    fake.CAMERAS.clear()
    assert camera_count() == 0
    with pytest.raises(FirmwareError, match="no camera connected"):
        open_source("picamera", 64, 48, 15)


def test_missing_picamera2_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails as where it is not installed
    from firmware.picam import PiCameraSource, camera_count

    assert camera_count() == 0
    with pytest.raises(FirmwareError, match="apt install python3-picamera2"):
        PiCameraSource()


def test_auto_prefers_the_pi_camera_and_logs_it(fake, caplog):
    with caplog.at_level(logging.INFO, logger="firmware.camera"):
        source = open_source(
            "auto",
            64,
            48,
            15,
            controls={"ExposureTime": 8000, "AnalogueGain": 1.5, "ColourGains": [1.9, 1.7]},
        )
    try:
        assert source.name == "picamera"
        assert "using the Pi camera" in caplog.text
        assert source.read(timeout=2).image.shape == (48, 64, 3)
    finally:
        source.close()


@pytest.mark.parametrize("fault", ["raises", "goes silent"])
def test_camera_lost_mid_stream_is_retried_and_recovered(fake, fault):
    statuses = []
    source = open_source("picamera", 64, 48, 60, controls=LOCKED)
    source.on_status = lambda status, detail: statuses.append(status)
    source.backoff = 0.05
    try:
        if fault == "raises":
            fake.fake_fail_after = 3  # ribbon pulled after 3 frames: gone until plugged back
        else:
            fake.fake_hang_after = 3  # still there, but nothing arrives
        seen = []
        with pytest.raises(CameraLost, match="camera lost"):
            for _ in range(10):
                seen.append(source.read(timeout=0.5).index)
        # Up to 3 frames, fewer if the reader was slower than the camera (only the newest is kept).
        assert 1 <= len(seen) <= 3 and seen == list(range(len(seen)))
        assert source.status == "lost" and statuses == ["lost"]
        if fault == "goes silent":
            fake.fake_busy = True  # the stuck camera cannot be opened again yet
        # Still lost: reopening is tried again and again, each wait longer than the last.
        with pytest.raises(CameraLost):
            source.read(timeout=0.4)
        assert source.attempts >= 2
        fake.plug()
        frame = source.read(timeout=3)
        assert frame.index == len(seen) and source.status == "ok" and statuses == ["lost", "ok"]
        reopened = fake.INSTANCES[-1]
        assert reopened is not fake.INSTANCES[0] and not fake.INSTANCES[0].is_open
        assert reopened.set_controls_calls[-1]["ExposureTime"] == 8000  # re-locked on reopen
    finally:
        source.close()


def test_relock_adapts_and_a_reopened_camera_keeps_the_new_lock(fake):
    stored = {**LOCKED, "LensPosition": 3.0}
    source = open_source("picamera", 64, 48, 60, controls=stored)
    source.backoff = 0.05
    try:
        assert source.controls == stored
        fake.fake_light = 0.5  # the room got darker: recalibrating
        relocked = source.relock()
        assert relocked["AnalogueGain"] > LOCKED["AnalogueGain"]
        assert relocked["LensPosition"] == 2.5  # and the lens focused again
        assert fake.INSTANCES[-1].set_controls_calls[-3:-1] == [
            {"AeEnable": True, "AwbEnable": True},
            {"AfMode": 1, "AfTrigger": 0},
        ]
        after = [source.read(timeout=2) for _ in range(3)][-1]  # surely taken after the relock
        assert after.image.mean() == pytest.approx(fake.TARGET_LEVEL, rel=0.1)
        fake.fake_fail_after = fake.INSTANCES[-1].frames + 1
        with pytest.raises(CameraLost):
            for _ in range(5):
                source.read(timeout=0.3)
        fake.plug()
        source.read(timeout=3)
        assert len(fake.INSTANCES) == 2
        assert fake.INSTANCES[-1].set_controls_calls == [
            {
                "AeEnable": False,
                "AwbEnable": False,
                "ExposureTime": relocked["ExposureTime"],
                "AnalogueGain": relocked["AnalogueGain"],
                "ColourGains": tuple(relocked["ColourGains"]),
                "AfMode": 0,
                "LensPosition": relocked["LensPosition"],
            }
        ]
    finally:
        source.close()


def test_a_reader_that_pauses_does_not_lose_the_camera(fake):
    statuses = []
    source = open_source("picamera", 64, 48, 30, controls=LOCKED)
    source.on_status = lambda status, detail: statuses.append(status)
    try:
        source.read(timeout=1)
        time.sleep(0.5)  # the service was busy counting
        source.read(timeout=0.2)
        assert statuses == [] and source.status == "ok" and len(fake.INSTANCES) == 1
    finally:
        source.close()
