"""The canonical view: the tray floor seen from above at a fixed cube scale, light as a ratio."""

import numpy as np
import pytest

from vision.canonical import MARGIN, STRIDE, TOP_PX, canonical_view, decode, encode

CORNERS = np.float32([[100, 80], [540, 70], [560, 420], [90, 430]])
RECT = (440, 350)  # the floor seen from above, px
CUBE = 22.0  # a cube top's edge on that view, px


@pytest.fixture
def view():
    return canonical_view(CORNERS, RECT, CUBE)


def test_the_view_is_a_multiple_of_the_stride_and_holds_the_floor_and_a_margin(view):
    width, height = view.size
    assert width % STRIDE == 0 and height % STRIDE == 0
    x0, y0, x1, y1 = view.floor
    # the floor at TOP_PX per cube edge, with MARGIN cube edges of wall round it
    assert (x1 - x0, y1 - y0) == (round(RECT[0] / CUBE * TOP_PX), round(RECT[1] / CUBE * TOP_PX))
    assert x0 == y0 == round(MARGIN * TOP_PX)
    assert x1 + x0 <= width < x1 + x0 + STRIDE and y1 + y0 <= height < y1 + y0 + STRIDE


def test_corners_map_to_the_floor_box_and_back(view):
    x0, y0, x1, y1 = view.floor
    assert np.allclose(view.to_view(CORNERS), [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], atol=0.5)
    points = np.float64([[320, 240], [101.5, 85.25], [555, 415]])
    assert np.allclose(view.to_image(view.to_view(points)), points, atol=1e-6)
    assert view.to_view([]).shape == (0, 2) and view.to_image([]).shape == (0, 2)


def test_log_ratio_is_zero_on_the_floor_and_one_where_the_light_doubles(view):
    frame = np.full((480, 640, 3), (40, 90, 120), np.uint8)
    spot = (320, 240)
    # a patch lit twice as much (in the light+1 terms the ratio is taken in)
    frame[230:251, 310:331] = (81, 181, 241)
    ratio = view.log_ratio(frame)
    assert ratio.shape == (view.size[1], view.size[0], 3) and ratio.dtype == np.float32
    x0, y0, x1, y1 = view.floor
    assert np.median(np.abs(ratio[y0:y1, x0:x1])) < 1e-6
    x, y = np.round(view.to_view([spot])[0]).astype(int)
    assert np.allclose(ratio[y, x], 1.0, atol=0.02)


def test_a_brighter_or_warmer_light_gives_the_same_ratios(view):
    frame = np.full((480, 640, 3), (60, 60, 60), np.uint8)
    frame[230:251, 310:331] = (121, 121, 121)
    x, y = np.round(view.to_view([(320, 240)])[0]).astype(int)
    for light in ([1.0, 1.0, 1.0], [1.6, 1.6, 1.6], [0.8, 1.0, 1.3]):
        shown = np.round(frame * np.float32(light)).astype(np.uint8)
        assert np.allclose(view.log_ratio(shown)[y, x], 1.0, atol=0.03)


def test_encoding_keeps_the_floor_at_128_and_round_trips():
    ratios = np.float32([[-1.0, 0.0, 0.5]])
    encoded = encode(ratios)
    assert encoded.dtype == np.uint8 and encoded[0, 1] == 128
    assert np.allclose(decode(encoded), ratios, atol=1 / 40)
    assert encode(np.float32([-100, 100])).tolist() == [0, 255]
