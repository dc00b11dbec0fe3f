"""Settle detection on hand-made sequences; generated drop videos are in test_settle_video.py."""
import numpy as np

from tests.vision.synth import tray_image
from vision.settle import SettleDetector

FPS = 15


def feed(frames):
    det = SettleDetector()
    return [e for i, f in enumerate(frames) if (e := det.update(f, i / FPS)) is not None]


def test_one_event_per_settled_state_and_none_while_moving():
    still_a = tray_image([(200, 200, "red")], seed=1)
    frames = [tray_image([(200, 200, "red")], seed=i) for i in range(10)]            # settled: 1 cube
    frames += [tray_image([(200, 200, "red"), (300, 100 + 20 * i, "blue")], seed=i) for i in range(6)]  # falling
    frames += [tray_image([(200, 200, "red"), (300, 220, "blue")], seed=i) for i in range(15)]  # settled: 2
    events = feed(frames)
    assert [e.frame_index for e in events][0] < 10
    assert len(events) == 2
    second = events[1]
    assert second.frame_index > 15                   # after the last moving frame (15)
    assert second.delay <= 0.7 and second.delay > 0
    assert still_a.shape == second.image.shape


def test_flicker_noise_and_jpeg_are_not_motion():
    import cv2
    frames = []
    for i in range(40):
        img = tray_image([(200, 200, "black"), (400, 300, "blue")], seed=i,
                         gain=(1 + 0.04 * np.sin(i),) * 3)
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 55 + i % 30])
        frames.append(cv2.imdecode(buf, cv2.IMREAD_COLOR))
    assert len(feed(frames)) == 1


def test_late_trickle_gives_a_new_complete_event():
    frames = [tray_image([(200, 200, "red")], seed=i) for i in range(20)]
    frames += [tray_image([(200, 200, "red"), (400, 100 + 30 * i, "red")], seed=i) for i in range(5)]
    frames += [tray_image([(200, 200, "red"), (400, 250, "red")], seed=i) for i in range(20)]
    events = feed(frames)
    assert len(events) == 2 and events[1].frame_index > 25


def test_a_hand_passing_over_without_changing_the_tray_gives_no_new_event():
    base = [(200, 200, "red")]
    frames = [tray_image(base, seed=i) for i in range(15)]
    frames += [tray_image(base + [(100 + 60 * i, 300, "blue")], seed=i) for i in range(6)]
    frames += [tray_image(base, seed=i) for i in range(15)]
    assert len(feed(frames)) == 1
