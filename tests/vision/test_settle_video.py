"""Settle detection and settled counts on generated drop videos (15 fps)."""

import numpy as np
import pytest

from calibration import make_counter
from firmware.scene import drop_video, layout
from tests.vision.scenes import calibrated, exact
from vision.watcher import Watcher


def run(seed, setup_seed, **kw):
    setup, profile, _ = calibrated(setup_seed)
    rng = np.random.default_rng(seed)
    before = layout(setup, {"red": 1, "blue": 1}, "scattered", rng)
    video = drop_video(setup, before, {"yellow": 2, "green": 1, "purple": 1}, rng, fps=15, **kw)
    watcher = Watcher(lambda size: make_counter(profile, size))
    events = [
        (i, s) for i, f in enumerate(video) if (s := watcher.feed(f.image, f.time, i)) is not None
    ]
    return video, events


def last_moving(video, before):
    return max(i for i in range(before) if video[i].moving)


@pytest.mark.parametrize("seed", [1, 2])
def test_each_settled_state_once_with_its_count_and_none_while_moving(seed):
    video, events = run(seed, 12, hand=False, trickle=False)
    assert [i for i, _ in events if video[i].moving] == []
    # the tray before the throw, then after it
    assert len(events) == 2
    first, final = events[0][1], events[1][1]
    assert exact(first.result, video[0].counts)
    assert exact(final.result, video[-1].counts)
    i = events[1][0]
    delay = video[i].time - video[last_moving(video, i)].time
    assert 0 < delay <= 0.7 and abs(final.event.delay - delay) <= 1 / 15 + 1e-6


def test_a_late_trickle_gives_a_new_full_count_not_silence():
    video, events = run(3, 12, hand=False, trickle=True)
    assert [i for i, _ in events if video[i].moving] == []
    assert exact(events[-1][1].result, video[-1].counts)
    # every event's count is the tray at that moment; the last one has every cube
    for i, settled in events:
        assert exact(settled.result, video[i].counts)


def test_a_hand_in_the_tray_gives_no_event():
    video, events = run(6, 12, hand=True, trickle=False)
    hand = [i for i, f in enumerate(video) if f.moving]
    assert [i for i, _ in events if video[i].moving] == []
    assert exact(events[-1][1].result, video[-1].counts) and hand
