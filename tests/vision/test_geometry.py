import numpy as np
import pytest

from vision.errors import VisionError
from vision.geometry import TrayGeometry, check_corners, natural_size

CORNERS = [(100, 80), (540, 90), (560, 420), (90, 400)]


def test_rectify_maps_corners_to_the_rectified_frame():
    geo = TrayGeometry(check_corners(CORNERS, (640, 480)), (200, 150))
    rect = geo.to_rect(CORNERS)
    assert np.allclose(rect, [[0, 0], [200, 0], [200, 150], [0, 150]], atol=1e-3)
    assert np.allclose(geo.to_image(rect), CORNERS, atol=1e-3)


def test_rectify_cuts_away_everything_outside_the_floor():
    frame = np.zeros((480, 640, 3), np.uint8)
    frame[:] = (0, 0, 255)  # table: red
    pts = np.int32(CORNERS)
    import cv2

    cv2.fillConvexPoly(frame, pts, (0, 255, 0))  # floor: green
    rect = TrayGeometry(np.float32(CORNERS), (200, 150)).rectify(frame)
    assert rect.shape == (150, 200, 3)
    # away from the border pixels everything is floor
    assert (rect[2:-2, 2:-2, 1] > 200).all() and (rect[2:-2, 2:-2, 2] < 50).all()


def test_natural_size_is_the_mean_of_opposite_sides():
    w, h = natural_size(np.float32([(0, 0), (100, 0), (100, 50), (0, 50)]))
    assert (w, h) == (100, 50)


@pytest.mark.parametrize(
    "corners, message",
    [
        ([(10, 10), (600, 10), (600, 400)], "exactly 4 corners"),
        ([(10, 10), (700, 10), (600, 400), (10, 400)], "outside the 640x480 frame"),
        ([(10, 10), (10, 400), (600, 400), (600, 10)], "clockwise"),
        ([(10, 10), (600, 400), (600, 10), (10, 400)], "clockwise"),
        ([(10, 10), (20, 10), (20, 20), (10, 20)], "almost nothing"),
        ([(10, 10, 3), (20, 10, 3)], "x,y points"),
    ],
)
def test_bad_corners_are_named(corners, message):
    with pytest.raises(VisionError, match=message):
        check_corners(corners, (640, 480))


@pytest.mark.parametrize(
    "corners",
    [
        [(0, 0), (640, 0), (640, 480), (0, 480)],  # a tray that fills the frame
        [(10, 10), (600, 10), (600, 479.6), (10, 479.6)],  # on the last pixel row
        [(10, 10), (639.5, 10), (639.5, 400), (10, 400)],  # on the last pixel column
    ],
)
def test_corners_on_the_frame_edge_are_inside_it(corners):
    assert np.allclose(check_corners(corners, (640, 480)), corners)


@pytest.mark.parametrize(
    "corners, bad",
    [
        ([(10, 10), (640.5, 10), (600, 400), (10, 400)], r"tray corner 2 \(640.5,10\)"),
        ([(10, 10), (600, 10), (600, 480.1), (10, 400)], r"tray corner 3 \(600,480.1\)"),
        ([(-0.1, 10), (600, 10), (600, 400), (10, 400)], r"tray corner 1 \(-0.1,10\)"),
    ],
)
def test_corners_beyond_the_frame_edge_are_refused(corners, bad):
    message = bad + r" is outside the 640x480 frame \(x from 0 to 640, y from 0 to 480\)"
    with pytest.raises(VisionError, match=message):
        check_corners(corners, (640, 480))
