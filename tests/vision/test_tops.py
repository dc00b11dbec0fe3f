"""Cube tops found by their outline: black cubes on a grey tray, which colour cannot tell
from shadow."""

from dataclasses import replace

import cv2
import numpy as np
import pytest

from calibration import make_counter
from tests.vision.scenes import calibrated, exact, scene
from vision.tops import outline_score, peaks, sharp_edges

SIDE = 20


def _square(blur: float, angle: float = 0.0) -> np.ndarray:
    """A dark square of SIDE px on a lit floor (level 1), edges blurred by `blur` px."""
    level = np.ones((80, 80), np.float32)
    box = cv2.boxPoints(((40.0, 40.0), (SIDE, SIDE), angle))
    cv2.fillConvexPoly(level, np.round(box * 16).astype(np.int32), 0.6, cv2.LINE_AA, 4)
    return cv2.GaussianBlur(level, (0, 0), blur) if blur else level


@pytest.mark.parametrize("angle", [0, 25, 60])
def test_a_sharp_square_scores_at_its_centre_at_any_angle(angle):
    score = outline_score(sharp_edges(_square(0.5, angle)), SIDE)
    y, x = np.unravel_index(np.argmax(score), score.shape)
    assert abs(x - 40) <= 2 and abs(y - 40) <= 2


def test_a_soft_edged_patch_scores_far_below_a_sharp_one():
    # a cast shadow: as dark and as large as a black top, but its edges are soft
    sharp = outline_score(sharp_edges(_square(0.5)), SIDE).max()
    soft = outline_score(sharp_edges(_square(3.0)), SIDE).max()
    assert soft < 0.4 * sharp


def test_a_square_missing_a_side_scores_low():
    # a shadow beside the cube casting it: sharp where it meets the cube, open elsewhere
    level = _square(0.5)
    level[:, 50:] = 0.6
    full = outline_score(sharp_edges(_square(0.5)), SIDE).max()
    assert outline_score(sharp_edges(level), SIDE)[35:46, 35:46].max() < 0.4 * full


def test_peaks_keep_the_strongest_point_of_each_place():
    score = np.zeros((50, 50), np.float32)
    score[10, 10], score[11, 12], score[40, 40] = 1.0, 0.9, 0.5
    assert [(x, y) for x, y, _ in peaks(score, 0.3, 5)] == [(10.0, 10.0), (40.0, 40.0)]
    assert len(peaks(score, 0.7, 5)) == 1


def test_black_cubes_touching_others_on_a_grey_tray_are_counted():
    setup, profile, _ = calibrated(47)
    counter = make_counter(profile, (640, 480))
    assert counter.dark_colours, "black must pass for shadow on this grey tray"
    scenes = [
        scene(setup, {"black": 3, "red": 1, "blue": 1}, "touching", 7000 + j) for j in range(12)
    ]
    results = [counter.count(s.image) for s in scenes]
    # not all yet: three in twelve of these scenes lose a black cube (see the README's known limit)
    assert sum(exact(r, s.counts) for r, s in zip(results, scenes, strict=True)) >= 9
    for result, s in zip(results, scenes, strict=True):
        # each black cube found where one lies
        truth = np.array([c.centre for c in s.cubes if c.colour == "black"])
        for cube in result.cubes:
            if cube.colour == "black":
                assert np.hypot(*(truth - cube.centre).T).min() < 8
    # without the outlines (a profile from before them) the counter misses black cubes in all
    old = make_counter(replace(profile, outline_strength=None), (640, 480))
    assert all(old.count(s.image).counts["black"] < 3 for s in scenes)


def _turned_whole(edges: np.ndarray, side: float) -> np.ndarray:
    """outline_score as first written: each angle turns the whole image, scores upright
    squares everywhere with box filters and turns the scores back."""
    h, w = edges.shape
    half = max(1, int(round(side / 2)))
    best = np.zeros_like(edges)
    for k in range(9):
        angle = 10.0 * k
        turned = cv2.warpAffine(edges, cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0), (w, h))
        columns = cv2.boxFilter(turned, -1, (1, 2 * half + 1), borderType=cv2.BORDER_CONSTANT)
        rows = cv2.boxFilter(turned, -1, (2 * half + 1, 1), borderType=cv2.BORDER_CONSTANT)
        score = np.zeros_like(edges)
        score[half : h - half, half : w - half] = np.minimum(
            np.minimum(
                columns[half : h - half, : w - 2 * half], columns[half : h - half, 2 * half :]
            ),
            np.minimum(rows[: h - 2 * half, half : w - half], rows[2 * half :, half : w - half]),
        )
        best = np.maximum(
            best,
            cv2.warpAffine(score, cv2.getRotationMatrix2D((w / 2, h / 2), -angle, 1.0), (w, h)),
        )
    return best


@pytest.mark.parametrize("asked", [(slice(50, 71), slice(30, 51)), (80, 120), (3, 150)])
def test_scores_asked_at_some_pixels_are_the_whole_image_scores_there(asked):
    # pixels round one square, the other's centre alone (its part as small as can be), a
    # pixel near the image's edge (turning loses part of the image there): each scores as
    # when the whole image is turned
    level = np.ones((120, 160), np.float32)
    level[20:100, :80] = _square(0.5, 25)
    level[40:120, 80:] = _square(0.5)
    edges = sharp_edges(level)
    whole = _turned_whole(edges, SIDE)
    where = np.zeros(edges.shape, bool)
    where[asked] = True
    part = outline_score(edges, SIDE, where)
    assert np.allclose(part[where], whole[where], rtol=1e-4, atol=1e-5 * whole.max())
    assert not part[~where].any()


def test_the_whole_image_scores_as_when_turned_whole():
    edges = sharp_edges(_square(0.5, 25))
    whole = _turned_whole(edges, SIDE)
    assert np.allclose(outline_score(edges, SIDE), whole, rtol=1e-4, atol=1e-5 * whole.max())
