"""A real camera's lens applied to rendered scenes (firmware.scene.Lens)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from firmware.scene import Lens, layout, random_setup, render


def _dot(size, at) -> np.ndarray:
    image = np.zeros((size[1], size[0], 3), np.uint8)
    cv2.circle(image, (int(at[0]), int(at[1])), 2, (255, 255, 255), -1)
    return image


@pytest.mark.parametrize("at", [(40.0, 30.0), (600.0, 60.0), (500.0, 420.0), (320.0, 240.0)])
def test_a_bent_lens_moves_each_point_where_its_picture_shows_it(at):
    lens = Lens(bend=-0.2)
    seen = lens.image(_dot((640, 480), at))
    ys, xs = np.nonzero(seen[..., 0] > 100)
    landed = lens.points([at], (640, 480))[0]
    assert np.hypot(xs.mean() - landed[0], ys.mean() - landed[1]) < 0.7
    middle = np.array([320.0, 240.0])
    # barrel: everything but the middle comes nearer to it, the corners by 8%
    assert np.linalg.norm(landed - middle) <= np.linalg.norm(np.array(at) - middle)
    corner = lens.points([(0, 0)], (640, 480))[0]
    assert np.linalg.norm(corner - middle) == pytest.approx(0.922 * 400, rel=0.01)


def test_a_lens_out_of_focus_blurs_without_moving_anything():
    lens = Lens(blur=2.0)
    image = _dot((640, 480), (200, 100))
    seen = lens.image(image)
    assert seen.max() < image.max() and seen.sum() == pytest.approx(image.sum(), rel=0.05)
    assert np.array_equal(lens.points([(200, 100)], (640, 480)), [[200.0, 100.0]])


def test_a_scene_through_a_lens_keeps_its_truth_with_it():
    rng = np.random.default_rng(5)
    setup = random_setup(rng)
    scene = render(setup, layout(setup, {c: 1 for c in setup.colours}, "scattered", rng), rng)
    seen = Lens(bend=-0.2, blur=1.0).scene(scene)
    assert seen.counts == scene.counts and seen.image.shape == scene.image.shape
    assert not np.array_equal(seen.image, scene.image)
    for before, after in zip(scene.cubes, seen.cubes, strict=True):
        assert after.colour == before.colour
        # each cube's truth centre moved with the picture: its paint is still there
        x, y = map(int, np.round(after.centre))
        assert (
            np.abs(
                seen.image[y, x].astype(int)
                - scene.image[int(before.centre[1]), int(before.centre[0])]
            ).max()
            < 60
        )
    assert (
        np.linalg.norm(seen.corners - [320, 240], axis=1)
        < np.linalg.norm(scene.corners - [320, 240], axis=1)
    ).all()
    assert {c: len(p) for c, p in seen.clicks.items()} == {
        c: len(p) for c, p in scene.clicks.items()
    }
