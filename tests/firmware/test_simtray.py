"""The simulated tray: drops in real rendered frames, counted by the real counter."""

from __future__ import annotations

import logging
import time

import pytest

from firmware.camera import FrameSource, open_source
from firmware.errors import FirmwareError
from firmware.simtray import SimulatedTray


def settle_and_count(tray, counter, detector, max_frames=200):
    """Read frames until the settle detector decides a state; count that frame."""
    for _ in range(max_frames):
        frame = tray.read()
        event = detector.update(frame.image, frame.timestamp, frame.index)
        if event is not None and not tray.dropping():
            return {c: n for c, n in counter.count(event.image).counts.items() if n}
    raise AssertionError("the tray never settled")


THROWS = [
    {"red": 3, "blue": 2, "green": 1},
    {"yellow": 2, "purple": 2, "black": 1},
    {"red": 4, "blue": 4},
]


@pytest.fixture(scope="module")
def counted_throws():
    """One fixed table, end to end: calibration clicks, drops, settle, count. Returns the
    count of the empty tray, and (truth, count) after each of THROWS."""
    from calibration import build_profile, make_counter
    from vision.settle import SettleDetector

    tray = SimulatedTray(seed=7, realtime=False)
    corners, samples = tray.calibration_clicks()
    frame = tray.read()
    profile, _ = build_profile(frame.image, corners, samples)
    tray.clear()
    counter = make_counter(profile, frame.size)
    detector = SettleDetector()
    empty = settle_and_count(tray, counter, detector)
    results = []
    for thrown in THROWS:
        tray.drop(thrown)
        truth = tray.contents()
        results.append((truth, settle_and_count(tray, counter, detector)))
        tray.clear()
    return empty, results


def test_an_empty_tray_is_counted_empty(counted_throws):
    assert counted_throws[0] == {}


# Accuracy over many random tables is the vision benchmark's business: these check that a
# settled frame of the simulated camera reaches the counter and is counted.
@pytest.mark.parametrize(
    "throw",
    [
        0,
        1,  # a yellow cube comes to rest partly under a purple one
        2,
    ],
)
def test_drops_are_counted_by_the_vision_counter(counted_throws, throw):
    truth, counted = counted_throws[1][throw]
    assert counted == truth, f"after dropping {THROWS[throw]}"


def test_dropped_cubes_join_the_tray_over_time():
    tray = SimulatedTray(seed=2, realtime=False, leftovers={"red": 1})
    assert tray.contents() == {"red": 1}
    tray.drop({"blue": 6, "green": 2, "yellow": 0})
    assert tray.contents() == {"blue": 6, "green": 2, "red": 1}
    # Cubes arrive over time: none at rest before the first lands, all once the drop ends.
    assert tray.at_rest() == {"red": 1}
    frames = 0
    while tray.dropping():
        tray.read()
        frames += 1
    assert 0.8 <= frames / tray.fps <= 4.5
    assert tray.at_rest() == tray.contents()


def test_remove_and_clear():
    tray = SimulatedTray(seed=4, realtime=False, leftovers={"red": 2, "blue": 1})
    tray.remove({"red": 1})
    assert tray.contents() == {"blue": 1, "red": 1}
    with pytest.raises(FirmwareError, match=r"cannot remove 3 blue \(the tray holds 1\)"):
        tray.remove({"blue": 3})
    assert tray.contents() == {"blue": 1, "red": 1}  # a refused removal changes nothing
    tray.clear()
    assert tray.contents() == {}


def test_bad_drops_are_refused():
    tray = SimulatedTray(seed=1, realtime=False, leftovers={})
    with pytest.raises(FirmwareError, match="no paint for pink"):
        tray.drop({"pink": 2})
    with pytest.raises(FirmwareError, match="whole numbers"):
        tray.drop({"red": -1})
    assert tray.contents() == {}


def test_frames_and_clock():
    tray = SimulatedTray(width=320, height=240, fps=10, seed=9, realtime=False)
    assert isinstance(tray, FrameSource) and tray.name == "sim"
    frames = [tray.read() for _ in range(3)]
    assert [f.index for f in frames] == [0, 1, 2]
    assert [f.timestamp for f in frames] == [0.0, 0.1, 0.2]
    assert frames[0].image.shape == (240, 320, 3)
    # Sensor noise: two frames of a still tray are close but not identical.
    diff = abs(frames[0].image.astype(int) - frames[1].image.astype(int))
    assert diff.max() > 0 and diff.mean() < 6


def test_realtime_paces_like_a_camera():
    tray = SimulatedTray(width=160, height=120, fps=20, seed=9)
    start = time.monotonic()
    frames = [tray.read() for _ in range(6)]
    assert time.monotonic() - start >= 5 / 20 * 0.9
    assert frames[-1].timestamp > frames[0].timestamp


def test_sim_source_says_so(caplog):
    with caplog.at_level(logging.INFO):
        source = open_source("sim", 160, 120, 10, seed=3)
    assert isinstance(source, SimulatedTray) and source.seed == 3
    assert "simulated tray: no camera" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO):
        auto = open_source("auto", 160, 120, 10, seed=3)  # no Pi camera and no USB camera here
    assert auto.name == "sim"
    assert "no Pi camera and no USB camera found; using the simulated tray" in caplog.text
