"""The training's data (marks, crops) and its confidence fit; the net's own training needs
PyTorch (the train extra), which the test install leaves out for its size."""

import pathlib
import sys

import numpy as np
import pytest

from companion.errors import CompanionError
from companion.training import (
    ANY_PEAK,
    CROP,
    ODDS_FROM,
    Example,
    cast_shadow,
    crop,
    fit_confidence,
    fit_peak_odds,
    marks,
    not_a_cube,
    peak_rows,
    train,
    true_view,
)
from vision.canonical import TOP_PX, canonical_view
from vision.centres import OUTPUT_STRIDE, RAW_SCORE, WALL, CentreNet


def _truth(cubes):
    return {"setup": {"tray_mm": [200.0, 150.0], "cube_mm": 10.0}, "cubes": cubes}


def _cube(x, y, z, top, on="floor"):
    return {"position": [x, y, z], "top": top, "on": on, "hidden": False}


SLICE = pathlib.Path(__file__).parents[1] / "data" / "realistic"  # the committed scenes
VIEW = canonical_view([[100, 100], [500, 100], [500, 400], [100, 400]], (400, 300), 20.0)


def test_each_cube_is_marked_where_it_is_seen_and_a_cube_under_another_is_covered():
    # `top` is where the truth says each is seen: for the lower cube, the side that shows
    lower = _cube(0.0, 0.0, 5.0, [300.0, 252.0])
    upper = _cube(3.0, 0.0, 15.0, [302.0, 242.0], on="cube")
    apart = _cube(60.0, 0.0, 5.0, [400.0, 250.0])
    cubes = [lower, upper, apart]
    points, covered = marks(VIEW, _truth(cubes), cubes)
    assert covered.tolist() == [True, False, False]
    want = VIEW.to_view([c["top"] for c in cubes])
    np.testing.assert_allclose(points, want, atol=1e-3)


def test_a_cube_beside_another_or_on_the_floor_next_to_a_pile_is_not_covered():
    lower = _cube(0.0, 0.0, 5.0, [300.0, 252.0])
    upper = _cube(9.0, 0.0, 15.0, [315.0, 242.0], on="cube")  # too far over to rest on it
    _, covered = marks(VIEW, _truth([lower, upper]), [lower, upper])
    assert covered.tolist() == [False, False]


def test_the_true_view_shows_the_truths_cube_edge_top_px_wide():
    truth = {
        "setup": {"tray_mm": [200.0, 150.0], "cube_mm": 10.0},
        "calibration": {"corners": [[100, 100], [500, 100], [500, 400], [100, 400]]},
    }
    view = true_view(truth, (640, 480))
    x0, y0, x1, y1 = view.floor
    # the floor is 20 cubes wide and 15 deep
    assert (x1 - x0, y1 - y0) == (20 * TOP_PX, 15 * TOP_PX)
    a, b = view.to_view([[300, 250], [320, 250]])  # 20 image px: one cube edge
    assert b[0] - a[0] == pytest.approx(TOP_PX)


def test_a_thing_laid_over_a_crop_hides_the_cubes_under_it_only():
    grid = np.float32([[x, y] for x in range(6, CROP, 12) for y in range(6, CROP, 12)])
    for seed in range(20):
        # laid on floors of 0 and 1, the same thing shows how much of each pixel it covers
        on0, kept = not_a_cube(np.zeros((CROP, CROP, 3), np.float32), grid, rng(seed))
        on1, _ = not_a_cube(np.ones((CROP, CROP, 3), np.float32), grid, rng(seed))
        cover = 1 - (on1 - on0)[..., 0]
        assert cover.max() > 0.99 and cover.min() < 0.5 or cover.min() > 0.99
        under = [cover[int(y), int(x)] > 0.5 for x, y in grid]
        np.testing.assert_array_equal(kept, grid[~np.array(under)])


def test_a_cast_shadow_takes_light_away_alike_in_each_channel_and_leaves_its_casters_top_lit():
    floor = np.random.default_rng(0).normal(0, 0.1, (CROP, CROP, 3)).astype(np.float32)
    cubes = np.array([[48.0, 48.0]])
    yy, xx = np.mgrid[0:CROP, 0:CROP]
    ring = np.abs(np.hypot(xx - 48, yy - 48) - TOP_PX) < 2  # right beside the cube
    cast_by_cube = 0
    for seed in range(40):
        shaded = cast_shadow(floor, cubes, rng(seed))
        less = floor - shaded
        assert less.min() > -1e-5 and less.max() > 0.25  # light only taken away, and some
        deep = less.mean(axis=2) > 0.2
        # the three channels darkened alike (bar the sky's slight tint): a shadow has no hue
        spread = (less.max(axis=2) - less.min(axis=2))[deep]
        assert (spread < 0.25 * less.mean(axis=2)[deep] + 0.1).all()
        # shaded right beside the cube, its own top lit: cast by it
        cast_by_cube += less[48, 48].max() < 1e-3 and less.mean(axis=2)[ring].max() > 0.2
    assert 10 <= cast_by_cube <= 30  # about half cast by the cube


def rng(seed):
    return np.random.default_rng(seed)


def test_a_crop_marks_each_cube_in_it_once():
    rng = np.random.default_rng(3)
    view = np.full((120, 160, 3), 128, np.uint8)
    points = np.float32([[40.5, 40.5], [80.5, 60.5]])
    example = Example(view, points, np.zeros(2, bool))
    for _ in range(20):
        x, target = crop(example, rng)
        assert x.shape == (3, CROP, CROP) and x.dtype == np.float32
        assert target.shape == (1, CROP // OUTPUT_STRIDE, CROP // OUTPUT_STRIDE)
        assert np.count_nonzero(target == 1.0) <= 2
        assert target.max() <= 1.0


def test_the_confidence_learns_which_features_mean_exact():
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(400, 4))
    exact = rows[:, 0] + 0.2 * rng.normal(size=400) > 0  # the weakest cube decides
    fitted = fit_confidence(rows, exact)
    assert fitted["weights"][0] > 3 * max(abs(w) for w in fitted["weights"][1:])


def test_the_confidence_needs_both_outcomes():
    with pytest.raises(CompanionError, match="both exact and wrong"):
        fit_confidence(np.zeros((5, 4)), np.ones(5, bool))


def test_peak_odds_rise_with_the_score_and_weigh_each_folder_the_same():
    rng = np.random.default_rng(1)
    # folder A: many peaks, a cube whenever the score is above 0.3; folder B: few, above 0.6
    a = rng.uniform(0, 1, 2000)
    b = rng.uniform(0, 1, 200)
    odds = fit_peak_odds([(a, a > 0.3), (b, b > 0.6)])
    s, o = np.array(odds["scores"]), np.array(odds["odds"])
    assert (np.diff(s) >= 0).all() and (np.diff(o) >= 0).all()
    at = np.interp([0.1, 0.45, 0.9], s, o)
    # between the two folders' edges half the weight says cube, whatever the peaks' numbers
    assert at[0] < 0.05 and abs(at[1] - 0.5) < 0.1 and at[2] > 0.95, at


def test_peak_odds_need_peaks_on_and_off_cubes():
    with pytest.raises(CompanionError, match="over the floor need peaks both on cubes and off"):
        fit_peak_odds([(np.array([0.2, 0.8]), np.array([True, True]))])
    with pytest.raises(CompanionError, match="over the floor need peaks both on cubes and off"):
        fit_peak_odds([(np.array([0.2, 0.8]), np.array([False, False]))])
    with pytest.raises(CompanionError, match="no peak was found"):
        fit_peak_odds([(np.array([]), np.array([], bool))])


def test_over_the_wall_peaks_that_were_never_cubes_get_no_odds():
    # (a small set may have no cube against a wall)
    odds = fit_peak_odds([(np.array([0.2, 0.8]), np.array([False, False]))], WALL)
    assert np.interp([0.0, 0.5, 1.0], odds["scores"], odds["odds"]).tolist() == [0, 0, 0]


def test_train_without_the_extra_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # as if PyTorch were not installed
    with pytest.raises(CompanionError, match=r"pip install -e '\.\[train\]'"):
        train([tmp_path], [tmp_path], 1, tmp_path / "out")
    assert not (tmp_path / "out").exists()


class _LowScores(CentreNet):
    """The shipped net with its scores raised to the 16th power (a top's 0.92 becomes 0.26):
    the same peaks, far lower scores."""

    def scores(self, log_ratio):
        return super().scores(log_ratio) ** 16


def test_the_peak_odds_are_fitted_on_every_set_up_of_a_net_that_scores_low():
    # The raw score is not a probability: judged by it, every click on these set-ups would be
    # refused and the odds fitted on nothing. A click is taken wherever the net has a peak.
    said = []
    scores, hits, _ = peak_rows(
        SLICE, _LowScores(odds=RAW_SCORE), _LowScores(odds=ANY_PEAK), say=said.append
    )
    assert said == []
    assert hits.sum() >= 20 and scores.min() >= ODDS_FROM


def test_peaks_over_the_wall_round_the_floor_are_told_apart():
    scores, hits, wall = peak_rows(SLICE, CentreNet(odds=RAW_SCORE), CentreNet(odds=ANY_PEAK))
    assert len(wall) == len(scores) and wall.any() and (~wall).any()
    # (the wall's peaks are mostly the wall's own grain: far fewer are cubes)
    assert hits[wall].mean() < hits[~wall].mean() / 2
