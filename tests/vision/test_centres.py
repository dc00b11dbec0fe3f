"""The centre net: where the cubes' tops are, in the canonical view."""

import numpy as np
import pytest

from tests.vision.scenes import counter_for, scene
from vision.canonical import TOP_PX
from vision.centres import MODEL, OUTPUT_STRIDE, PEAK_ODDS, CentreNet, PeakOdds
from vision.counter import CUBE
from vision.errors import VisionError


@pytest.fixture(scope="module")
def net():
    return CentreNet()


@pytest.mark.parametrize("seed", [3, 19])
def test_one_peak_at_each_cube_top_and_none_elsewhere(net, seed):
    setup, counter = counter_for(seed)
    s = scene(setup, {"red": 2, "blue": 2, "yellow": 1}, "scattered", 40 + seed)
    view = counter.view
    log_ratio = view.log_ratio(s.image)
    centres, p = net.centres(log_ratio, CUBE)
    h, w = log_ratio.shape[:2]
    assert p.shape == (h // OUTPUT_STRIDE, w // OUTPUT_STRIDE)
    assert ((p >= 0) & (p <= 1)).all()
    truth = view.to_view([c.centre for c in s.cubes])
    found = np.array([(c.x, c.y) for c in centres])
    assert len(found) == len(truth) == 5 and all(c.p > CUBE for c in centres)
    # each top's peak within a third of a top's edge of its true centre
    apart = np.hypot(*(found[:, None] - truth[None]).transpose(2, 0, 1))
    assert (apart.min(axis=0) < TOP_PX / 3).all(), apart.min(axis=0)


def test_an_empty_tray_has_no_peak(net):
    setup, counter = counter_for(3)
    s = scene(setup, {}, "scattered", 43)
    centres, p = net.centres(counter.view.log_ratio(s.image), CUBE)
    assert centres == [] and p.max() < CUBE


def test_a_missing_or_broken_model_is_a_clear_error(tmp_path):
    missing = tmp_path / "nope.onnx"
    with pytest.raises(VisionError, match=f"cannot load the centre model {missing}"):
        CentreNet(missing)
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(MODEL.read_bytes()[:1000])
    with pytest.raises(VisionError, match=f"cannot load the centre model {broken}"):
        CentreNet(broken)


def test_peaks_carry_the_odds_of_their_score(net, tmp_path):
    setup, counter = counter_for(3)
    s = scene(setup, {"red": 2, "blue": 1}, "scattered", 44)
    log_ratio = counter.view.log_ratio(s.image)
    halved = CentreNet(MODEL, PeakOdds((0.0, 1.0), (0.0, 0.5)))
    centres, p = halved.centres(log_ratio, 0.1)
    assert len(centres) == 3
    assert all(abs(c.p - c.score / 2) < 1e-6 for c in centres)
    assert np.allclose(p, halved.scores(log_ratio) / 2)


def test_a_peak_over_the_wall_round_the_floor_carries_the_walls_odds(net):
    setup, counter = counter_for(3)
    s = scene(setup, {"red": 2, "blue": 1}, "scattered", 44)
    log_ratio = counter.view.log_ratio(s.image)
    never = CentreNet(MODEL, PeakOdds((0.0, 1.0), (0.0, 1.0)), PeakOdds((0.0, 1.0), (0.0, 0.0)))
    x0, y0, x1, y1 = counter.view.floor
    assert len(never.centres(log_ratio, CUBE, counter.view.floor)[0]) == 3
    # a floor that holds the left half of the view: the cubes on the right are over "wall"
    half = (x0 + x1) // 2
    left = never.centres(log_ratio, CUBE, (x0, y0, half, y1))[0]
    truth = counter.view.to_view([c.centre for c in s.cubes])
    assert len(left) == (truth[:, 0] < half).sum() < 3
    assert all(c.x <= half and not c.wall for c in left)
    # with the wall's odds those of the floor, the same peaks are all there, flagged by side
    both = CentreNet(MODEL, PeakOdds((0.0, 1.0), (0.0, 1.0)))
    flagged = both.centres(log_ratio, CUBE, (x0, y0, half, y1))[0]
    assert len(flagged) == 3
    assert [c.wall for c in flagged] == [c.x > half for c in flagged]


def test_odds_are_flat_beyond_their_ends():
    odds = PeakOdds((0.2, 0.6), (0.1, 0.9))
    assert np.allclose(odds(np.array([0.0, 0.2, 0.4, 0.6, 1.0])), [0.1, 0.1, 0.5, 0.9, 0.9])


@pytest.mark.parametrize(
    "text, why",
    [
        (None, "No such file"),
        ("{not json", "Expecting property name"),
        ('{"scores": [0, 1], "odds": [0, 1]}', r"no 'floor' \(fit them again"),
        ('{"floor": {"scores": [0, 1], "odds": [0, 1]}}', r"no 'wall' \(fit them again"),
        ('{"floor": {"scores": [0, 1]}, "wall": {"scores": [0, 1], "odds": [0, 1]}}', "'odds'"),
        ('{"floor": {"scores": [0, 1], "odds": [0.9, 0.1]}, "wall": {}}', "not a rising curve"),
        (
            '{"floor": {"scores": [0, 1], "odds": [0, 1]}, '
            '"wall": {"scores": [0.5], "odds": [0.5]}}',
            r"\(wall\) are not a rising curve",
        ),
        ('{"floor": {"scores": [0, 1], "odds": [0.1, 1.5]}, "wall": {}}', "not a rising curve"),
    ],
)
def test_missing_or_bad_peak_odds_are_a_clear_error(tmp_path, text, why):
    model = tmp_path / "centres.onnx"
    model.write_bytes(MODEL.read_bytes())
    if text is not None:
        (tmp_path / PEAK_ODDS).write_text(text)
    with pytest.raises(VisionError, match=f"peak odds {tmp_path / PEAK_ODDS}.*{why}"):
        CentreNet(model)
