"""Settle detection on hand-made frame sequences of a generated table (drop videos are in
test_settle_video.py): flicker, noise and JPEG are not motion; trickles and hands."""

import cv2
import numpy as np
import pytest

from firmware.scene import CubePose, random_setup, render
from vision.errors import VisionError
from vision.settle import SettleDetector

FPS = 15
SETUP = random_setup(np.random.default_rng(12))


def frame(cubes, seed, gain=1.0):
    """A frame with cubes (colour, x mm, y mm), fresh sensor noise and JPEG per frame."""
    poses = [CubePose(c, x, y, SETUP.cube_size / 2, size=SETUP.cube_size) for c, x, y in cubes]
    image = render(SETUP, poses, np.random.default_rng(seed)).image
    return cv2.convertScaleAbs(image, alpha=gain)


def feed(frames):
    det = SettleDetector()
    return [e for i, f in enumerate(frames) if (e := det.update(f, i / FPS)) is not None]


RED = ("red", -40.0, 10.0)


def test_one_event_per_settled_state_and_none_while_moving():
    frames = [frame([RED], i) for i in range(8)]
    frames += [frame([RED, ("blue", 40.0, -60 + 12 * i)], 10 + i) for i in range(6)]  # sliding in
    frames += [frame([RED, ("blue", 40.0, 12.0)], 20 + i) for i in range(12)]
    events = feed(frames)
    assert len(events) == 2
    assert events[0].frame_index < 8
    assert events[1].frame_index >= 14 and 0 < events[1].delay <= 0.7
    assert events[1].delay == pytest.approx(events[1].time - 13 / FPS)


def test_flicker_noise_and_jpeg_are_not_motion():
    frames = [frame([RED, ("black", 30.0, 30.0)], i, gain=1 + 0.04 * np.sin(i)) for i in range(30)]
    assert len(feed(frames)) == 1


def test_late_trickle_gives_a_new_complete_event():
    frames = [frame([RED], i) for i in range(12)]
    frames += [frame([RED, ("green", 0.0, -50 + 15 * i)], 20 + i) for i in range(4)]
    frames += [frame([RED, ("green", 0.0, 10.0)], 30 + i) for i in range(12)]
    events = feed(frames)
    assert len(events) == 2 and events[1].frame_index > 16


def test_something_passing_over_without_changing_the_tray_gives_no_new_event():
    frames = [frame([RED], i) for i in range(10)]
    frames += [frame([RED, ("yellow", -60 + 25 * i, -20.0)], 20 + i) for i in range(6)]
    frames += [frame([RED], 30 + i) for i in range(10)]
    assert len(feed(frames)) == 1


def test_grey_frames_are_refused():
    with pytest.raises(VisionError, match="BGR colour frames"):
        SettleDetector().update(np.zeros((48, 64), np.uint8), 0.0)
