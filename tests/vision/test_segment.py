"""Blobs of cube pixels (vision.segment): the statistics taken from the pixels alone."""

import cv2
import numpy as np

from vision.segment import _components, nonzero


def test_nonzero_is_numpys_in_raster_order():
    mask = np.random.default_rng(1).random((37, 53)) > 0.8
    ys, xs = nonzero(mask)
    want = np.nonzero(mask)
    assert np.array_equal(ys, want[0]) and np.array_equal(xs, want[1])


def test_components_match_opencvs_statistics():
    # blobs of every shape, touching the edges, and a frame with none
    rng = np.random.default_rng(2)
    for mask in [
        (cv2.blur(rng.random((90, 120)), (5, 5)) > 0.55).astype(np.uint8),
        (rng.random((40, 30)) > 0.6).astype(np.uint8),
        np.zeros((20, 20), np.uint8),
    ]:
        n, comps, areas, boxes, centroids = _components(mask)
        want_n, want_comps, stats, want_centroids = cv2.connectedComponentsWithStats(
            mask, connectivity=4
        )
        assert n == want_n and np.array_equal(comps, want_comps)
        assert np.array_equal(areas, stats[:, cv2.CC_STAT_AREA])
        assert np.array_equal(boxes[1:], stats[1:, :4]) and np.array_equal(
            centroids[1:], want_centroids[1:]
        )
