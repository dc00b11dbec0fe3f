"""Splitting a blob into cubes from its coarse labels (vision.split), on drawn label images."""

import cv2
import numpy as np

from vision.segment import find_blobs
from vision.split import (
    FEATURES,
    _squares,
    blob_pixels,
    colour_features,
    feature_rows,
    rule_counts,
    split_blobs,
)

K = 2  # two colours: 1 and 2 are tops, 3 and 4 their sides
SIZE = 12  # a top is 12 x 12 px
TOP = SIZE * SIZE


def _count(coarse):
    comps, blobs = find_blobs(coarse, K, 1.3 * TOP, SIZE)
    parts, _ = split_blobs(blobs, comps, coarse, K, TOP, [1.3 * TOP] * len(blobs))
    return sorted((p.colour for p in parts), key=lambda c: -1 if c is None else c)  # unknown first


def test_one_top_is_one_cube():
    coarse = np.zeros((60, 80), np.uint8)
    coarse[20:32, 20:32] = 1
    assert _count(coarse) == [1]


def test_a_top_piece_one_top_large_but_two_edges_long_is_two_cubes():
    # a pile's top merged with the uncovered strip of a same-coloured cube below it
    coarse = np.zeros((60, 80), np.uint8)
    coarse[24:32, 10 : 10 + 2 * SIZE] = 1  # 8 x 24 px: one top's area (0.92), two edges long
    assert _count(coarse) == [1, 1]


def test_a_corner_of_a_top_beside_another_cube_counts_when_solid():
    coarse = np.zeros((60, 80), np.uint8)
    coarse[20:32, 20:32] = 2  # the cube on top
    coarse[28:33, 32:37] = 1  # a solid corner of the cube under it (0.17 of a top)
    assert _count(coarse) == [1, 2]
    coarse[28:33, 32:37] = 0
    coarse[31:32, 32:40] = 1  # a one-pixel strip is an edge, not a cube
    assert _count(coarse) == [2]


def test_dark_parts_next_to_a_cube_are_its_shadow_and_far_from_cubes_an_unknown_object():
    # dark parts (2K+2): floor-coloured pixels darker than the frame's shadows seemed
    coarse = np.zeros((60, 120), np.uint8)
    coarse[20:32, 20:32] = 1  # a cube's top
    coarse[20:34, 34:46] = 2 * K + 2  # its cast shadow, apart from it by a soft rim
    assert _count(coarse) == [1]
    coarse[20:34, 90:102] = 2 * K + 2  # as dark, far from every cube: something unknown
    assert _count(coarse) == [None, 1]


def test_the_strip_of_a_cube_under_another_cut_off_by_its_shadow_joins_that_blob():
    coarse = np.zeros((60, 80), np.uint8)
    coarse[20:32, 20:32] = 2  # the cube on top
    coarse[34:39, 20:30] = 1  # the uncovered strip of the cube under it, 2 px of shadow apart
    comps, blobs = find_blobs(coarse, K, 1.3 * TOP, SIZE)
    assert len(blobs) == 1 and blobs[0].area == 144 + 50 and blobs[0].box == (20, 20, 12, 19)
    assert _count(coarse) == [1, 2]
    coarse[34:39] = 0
    coarse[40:45, 20:30] = 1  # as far as two thirds of a cube: a speck, not part of it
    assert _count(coarse) == [2]


def test_a_strip_of_side_beside_a_top_of_its_paint_is_that_cube_and_stays_apart():
    coarse = np.zeros((60, 80), np.uint8)
    coarse[20:32, 20:32] = 1  # a cube's top
    coarse[34:39, 20:32] = K + 1  # its own side, past a dark edge taken for floor
    comps, blobs = find_blobs(coarse, K, 1.3 * TOP, SIZE)
    assert len(blobs) == 1 and blobs[0].area == 144
    coarse[34:39, 20:32] = K + 2  # the side of another paint's cube under it
    comps, blobs = find_blobs(coarse, K, 1.3 * TOP, SIZE)
    assert len(blobs) == 1 and blobs[0].area == 144 + 60
    coarse[34:39, 20:32] = 2 * K + 1  # pixels of no paint are no cube's side: they join too
    comps, blobs = find_blobs(coarse, K, 1.3 * TOP, SIZE)
    assert len(blobs) == 1 and blobs[0].area == 144 + 60


def test_a_cube_mostly_hidden_by_the_near_wall_is_a_blob_and_the_foot_of_a_wall_is_not():
    # a cube's silhouette is 1.3 tops (187 px): the near wall hides all but 56 px of this one
    coarse = np.zeros((60, 80), np.uint8)
    coarse[38:45, 20:28] = 1
    comps, blobs = find_blobs(coarse, K, 1.3 * TOP, SIZE)
    assert [b.area for b in blobs] == [56]
    coarse[:] = 0
    coarse[52:60, 72:80] = 2 * K + 1  # as much, in a corner: mostly the walls' foot
    assert find_blobs(coarse, K, 1.3 * TOP, SIZE)[1] == []


def test_the_foot_of_a_wall_along_the_edge_does_not_join_a_cube_against_that_wall():
    coarse = np.zeros((60, 80), np.uint8)
    coarse[53:58, :] = 2 * K + 1  # a strip the light made unknown, 2 px in
    coarse[41:53, 30:42] = 1  # a cube against the wall
    assert _count(coarse) == [1]
    coarse[:] = 0  # the same away from the edges: an unknown object
    coarse[33:38, 3:77] = 2 * K + 1
    coarse[21:33, 30:42] = 1
    assert _count(coarse) == [None, None, 1]


def test_a_top_with_pixels_lost_to_the_floor_all_over_is_still_a_blob():
    # a blue top on a navy tray: every third pixel each way passes for floor, so no
    # half-cube opening fits in what is left, yet it is one cube
    coarse = np.zeros((60, 80), np.uint8)
    coarse[20:32, 30:42] = 1
    coarse[21:32:3, 31:42:3] = 0
    comps, blobs = find_blobs(coarse, K, 1.3 * TOP, SIZE)
    assert [b.area for b in blobs] == [np.count_nonzero(coarse)]
    assert _count(coarse) == [1]


def _asked(coarse):
    """The (blob, colour) pairs of a frame the forest is asked about."""
    comps, blobs = find_blobs(coarse, K, 1.3 * TOP, SIZE)
    pixels = blob_pixels(blobs, comps, coarse, K, TOP)
    units = [1.3 * TOP] * len(blobs)
    counts = rule_counts(blobs, pixels, K, TOP, units, frozenset())
    return feature_rows(
        blobs, pixels, K, TOP, units, frozenset(), counts, {}, [(0.0, 0.0)] * len(blobs)
    )[1]


def test_a_lone_top_is_asked_about_only_when_its_silhouette_might_hold_two():
    coarse = np.zeros((60, 80), np.uint8)
    coarse[20:32, 20:32] = 1  # one top ...
    coarse[32:35, 20:32] = 3  # ... and a strip of its side: 0.92 silhouettes
    assert _asked(coarse) == []
    coarse[35:41, 20:32] = 3  # 1.31 silhouettes: a corner of a cube under it?
    assert _asked(coarse) == [(0, 1)]


def _features(coarse, colour, sides=(0.0, 0.0)):
    """A colour's FEATURES in the first blob, by name."""
    comps, blobs = find_blobs(coarse, K, 1.3 * TOP, SIZE)
    row = colour_features(
        blobs[0],
        blob_pixels(blobs, comps, coarse, K, TOP)[0],
        K,
        TOP,
        1.3 * TOP,
        frozenset(),
        colour,
        {},
        1.0,
        sides,
    )
    return dict(zip(FEATURES, row, strict=True))


def _left(coarse, colour):
    """A colour's top left outside one, and two, cube-sized squares in the first blob."""
    row = _features(coarse, colour)
    return row["top_left_one"], row["top_left_two"]


def _square(coarse, centre, angle, value):
    box = cv2.boxPoints((centre, (SIZE, SIZE), angle))
    cv2.fillConvexPoly(coarse, np.round(box).astype(np.int32), value)


def test_one_tilted_top_fits_one_square():
    coarse = np.zeros((60, 80), np.uint8)
    _square(coarse, (40, 30), 25, 1)
    one, two = _left(coarse, 1)
    assert one < 0.15 and two < 0.15


def test_two_tops_of_a_colour_either_side_of_another_cube_need_two_squares():
    coarse = np.zeros((60, 80), np.uint8)
    coarse[24:36, 16:28] = 1
    coarse[24:36, 28:40] = 2  # the other colour's cube joins them into one blob
    coarse[24:36, 40:52] = 1
    one, two = _left(coarse, 1)
    assert 0.8 < one < 1.2 and two < 0.15


def test_square_sums_are_exact_for_every_square_size():
    # large squares are summed in pieces (filter2D's DFT would blur ties between equal
    # placements): each square's sums match adding up its kernel at every pixel
    rng = np.random.default_rng(3)
    image = (rng.integers(0, 5, (30, 34)) / 4).astype(np.float32)  # a mask shrunk by 2
    for side in range(3, 14):
        for square in _squares(side):
            k = square.kernel.shape[0]
            padded = np.pad(image, k // 2)
            brute = np.array(
                [
                    [(padded[y : y + k, x : x + k] * square.kernel).sum() for x in range(34)]
                    for y in range(30)
                ]
            )
            assert np.array_equal(square.sums(image), brute), (side, k)


def test_the_l_of_a_cube_half_under_another_is_more_than_one_square():
    # two cubes of one colour under a cube of another show one L round it
    coarse = np.zeros((60, 80), np.uint8)
    coarse[14:42, 14:42] = 1
    coarse[14:34, 22:42] = 2
    one, two = _left(coarse, 1)
    assert one > 0.5 and two < one


def test_top_left_by_one_square_is_told_apart_by_where_the_sides_show():
    # a cube's lit side passing for top shows on the camera's side of its top (where its
    # sides show); the strip of a cube of its paint under it can show on any side
    coarse = np.zeros((60, 80), np.uint8)
    coarse[20:32, 30:42] = 1
    coarse[32:38, 30:42] = 1  # half a top's worth below it in the view
    below = (0.0, 3.0)  # a lone cube here shows its sides 3 px below its top
    row = _features(coarse, 1, below)
    assert abs(row["side_reach"] - 0.25) < 1e-6
    assert 0.3 < row["top_left_one"] < 0.7
    assert row["top_left_along"] > 0.5 and row["top_left_across"] < 0.2
    row = _features(coarse, 1, (3.0, 0.0))  # sides to the right: the strip lies across
    assert abs(row["top_left_along"]) < 0.2 and row["top_left_across"] > 0.5
    row = _features(coarse, 1, (0.0, -3.0))  # sides above: the strip lies the other way
    assert row["top_left_along"] < -0.5


def test_without_a_side_field_nothing_lies_along_or_across():
    coarse = np.zeros((60, 80), np.uint8)
    coarse[20:32, 30:42] = 1
    coarse[32:38, 30:42] = 1
    row = _features(coarse, 1)
    assert row["side_reach"] == 0 and row["top_left_along"] == 0 and row["top_left_across"] == 0
