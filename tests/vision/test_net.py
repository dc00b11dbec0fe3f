"""The count net (vision.net): its patches, its answers with the forest, its file, its gradient."""

import numpy as np
import pytest

from companion.net_training import gradients, grow_net
from vision.errors import VisionError
from vision.forest import grow, shipped
from vision.net import PATCH, PATCH_CHANNELS, Net, conv, patch, pool
from vision.split import COUNT_LEAN, FEATURES, NET_BELOW, count_forest, count_net, decide

N_COLOURS = 3
EDGE = 12


def _cube(sides: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Coarse labels of one cube of colour 1 whose sides show toward `sides` (dx, dy px),
    and its pixels."""
    coarse = np.zeros((80, 80), np.uint8)
    x, y = 34, 34
    dx, dy = sides
    coarse[y + min(dy, 0) : y + EDGE + max(dy, 0), x + min(dx, 0) : x + EDGE + max(dx, 0)] = (
        N_COLOURS + 1
    )
    coarse[y : y + EDGE, x : x + EDGE] = 1
    return coarse, coarse > 0


def _centre_of(image: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(image > 64)
    return np.array([xs.mean(), ys.mean()])


@pytest.mark.parametrize("sides", [(5, 0), (0, -5), (-4, 4)])
def test_a_patch_is_turned_so_that_the_cube_sides_point_down(sides):
    coarse, inside = _cube(sides)
    level = np.ones(coarse.shape, np.float32)
    got = patch(level, coarse, inside, 1, N_COLOURS, sides, EDGE)
    assert got.shape == (PATCH, PATCH, len(PATCH_CHANNELS)) and got.dtype == np.uint8
    tops, faces = _centre_of(got[..., 0]), _centre_of(got[..., 1])
    # the sides lie below the top, not beside it, whichever way they showed in the tray
    assert faces[1] - tops[1] > 1.0 and abs(faces[0] - tops[0]) < 1.0
    # the other channels are empty, the lit floor reads 1 / LIGHT_SPAN all round, and
    # even light has no edges
    assert got[..., 2:4].max() == 0 and np.ptp(got[..., 4]) <= 1 and got[..., 5].max() == 0


def test_a_patch_sees_other_colours_and_the_light():
    coarse, inside = _cube((5, 0))
    coarse[34:46, 50:62] = 2
    inside = coarse > 0
    level = np.ones(coarse.shape, np.float32)
    level[34:46, 34:46] = 0.5
    got = patch(level, coarse, inside, 1, N_COLOURS, (0.0, 0.0), EDGE)
    # without sides to turn by, the other colour stays to the right of the top
    assert _centre_of(got[..., 2])[0] - _centre_of(got[..., 0])[0] > EDGE / 2
    assert got[..., 4].min() < got[..., 4].max() - 50
    # the light's step round the top is a sharp edge; the top's middle and the even floor have none
    edges = got[..., 5]
    x, y = np.round(_centre_of(got[..., 0])).astype(int)
    assert edges.max() > 128 and edges[y, x] < 32 and max(edges[0].max(), edges[:, 0].max()) < 32


def _rows(n, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 1, (n, len(FEATURES))), rng.integers(
        0, 256, (n, PATCH, PATCH, len(PATCH_CHANNELS)), dtype=np.uint8
    )


def test_a_convolution_and_a_pool_are_what_they_say():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 6, 8, 3))
    w = rng.standard_normal((27, 4))
    b = rng.standard_normal(4)
    got, _ = conv(x, w, b)
    # written out: each output is its 3x3 neighbours (zero outside), row by row, each
    # neighbour's channels in turn, times the weights
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    kernel = w.reshape(3, 3, 3, 4)
    want = b + sum(
        padded[:, i : i + 6, j : j + 8] @ kernel[i, j] for i in range(3) for j in range(3)
    )
    np.testing.assert_allclose(got, want, rtol=1e-12)
    pooled, where = pool(x, trace=True)
    np.testing.assert_array_equal(pooled, x.reshape(2, 3, 2, 4, 2, 3).max(axis=(2, 4)))
    assert where.sum() == pooled.size  # each maximum found once (random values tie nowhere)


def test_the_gradient_is_the_slope_of_the_loss():
    rows, patches = _rows(6, 1)
    truth = np.array([0, 1, 2, 1, 0, 3])
    net = Net.random(len(FEATURES), 5, seed=2)
    net.p = {k: v.astype(np.float64) for k, v in net.p.items()}
    x, f = (a.astype(np.float64) for a in net.inputs(patches, rows))
    _, g = gradients(net, x, f, truth)
    rng = np.random.default_rng(3)
    for k in ("w0", "b1", "w2", "wh", "wo", "bo"):
        for _ in range(3):
            at = tuple(rng.integers(0, s) for s in net.p[k].shape)
            keep = net.p[k][at]
            net.p[k][at] = keep + 1e-6
            up = gradients(net, x, f, truth)[0]
            net.p[k][at] = keep - 1e-6
            down = gradients(net, x, f, truth)[0]
            net.p[k][at] = keep
            assert (up - down) / 2e-6 == pytest.approx(g[k][at], rel=1e-3, abs=1e-7), (k, at)


def test_a_net_learns_where_a_patch_is_lit_and_keeps_it_when_saved(tmp_path):
    rows, patches = _rows(400, 4)
    truth = patches[:, : PATCH // 2, :, 4].mean(axis=(1, 2)) > patches[:, PATCH // 2 :, :, 4].mean(
        axis=(1, 2)
    )
    # a pattern the rows do not hold: the upper half of the light channel brighter
    patches[..., 4] = 0
    patches[truth.nonzero()[0], : PATCH // 2, :, 4] = 200
    patches[(~truth).nonzero()[0], PATCH // 2 :, :, 4] = 200
    net = grow_net(
        patches[:300], rows[:300], truth[:300].astype(int), 2, epochs=3, log=lambda _: None
    )
    assert np.mean(net.proba(patches[300:], rows[300:]).argmax(axis=1) == truth[300:]) > 0.95
    net.save(tmp_path / "net.npz")
    assert np.array_equal(
        Net.load(tmp_path / "net.npz").proba(patches, rows), net.proba(patches, rows)
    )
    with pytest.raises(VisionError, match=f"a row of {len(FEATURES)} numbers"):
        net.proba(patches, rows[:, :3])
    with pytest.raises(VisionError, match=f"a {PATCH}x{PATCH}x{len(PATCH_CHANNELS)} patch"):
        net.proba(patches[..., :4], rows)
    # a net of other patches keeps its channels when saved
    three = grow_net(
        patches[:50, ..., :3], rows[:50], truth[:50].astype(int), 2, epochs=1, log=lambda _: None
    )
    three.save(tmp_path / "three.npz")
    assert Net.load(tmp_path / "three.npz").channels == 3


def test_a_broken_net_file_is_named(tmp_path):
    (tmp_path / "bad.npz").write_bytes(b"not a net")
    with pytest.raises(
        VisionError, match=r"bad.npz is not a saved net: grow it again with .*--model net`"
    ):
        shipped(tmp_path / "bad.npz", FEATURES, "net", Net.load)
    net = Net.random(4, 3)
    np.savez(tmp_path / "cut.npz", **{k: v for k, v in net.p.items() if k != "wh"})
    with pytest.raises(VisionError, match="cut.npz does not have the layers"):
        Net.load(tmp_path / "cut.npz")
    with pytest.raises(VisionError, match="cannot read the net"):
        Net.load(tmp_path / "missing.npz")


def test_the_net_decides_with_the_forest_where_the_forest_is_unsure():
    rows, patches = _rows(80, 5)
    truth = (rows[:, 0] > 0.5).astype(int) + (rows[:, 1] > 0.5)
    forest = grow(rows, truth, trees=5, depth=4, features=len(FEATURES))
    unsure = forest.proba(rows).max(axis=1) < NET_BELOW
    assert 0 < unsure.sum() < len(rows)
    # a net that tells more counts apart than the forest saw: the forest gives those none
    net = Net.random(len(FEATURES), 5, seed=7)
    asked = []
    found, share = decide(forest, net, rows, lambda ask: asked.append(ask) or patches[ask])
    assert np.array_equal(asked[0], np.flatnonzero(unsure))
    shares = np.zeros((len(rows), 5))
    shares[:, :3] = forest.proba(rows)
    shares[unsure] = (shares[unsure] + net.proba(patches[unsure], rows[unsure])) / 2
    assert np.array_equal(found, shares.argmax(axis=1)) and np.allclose(share, shares.max(axis=1))
    # without patches the forest decides alone
    found, share = decide(forest, net, rows)
    assert np.array_equal(found, forest.predict(rows)[0]) and np.allclose(
        share, forest.predict(rows)[1]
    )


def test_a_lean_takes_the_higher_count_only_when_its_share_comes_close():
    rows, _ = _rows(200, 8)
    # counts that the rows tell only roughly: the forest's shares are often close
    noise = np.random.default_rng(9).random(len(rows)) < 0.4
    truth = (rows[:, 0] > 0.5).astype(int) + (rows[:, 1] > 0.5) + noise
    forest = grow(rows, truth, trees=7, depth=2, features=len(FEATURES))
    shares = forest.proba(rows)
    found, share = decide(forest, None, rows, lean=COUNT_LEAN)
    weighed = shares * (1 + COUNT_LEAN) ** np.arange(shares.shape[1])
    assert np.array_equal(found, weighed.argmax(axis=1))
    assert np.allclose(share, shares[np.arange(len(rows)), found])
    # some rows go up a count, none goes down, and a clear majority keeps its count
    plain = shares.argmax(axis=1)
    assert (found > plain).any() and (found >= plain).all()
    assert np.array_equal(found[shares.max(axis=1) > 0.6], plain[shares.max(axis=1) > 0.6])


def test_the_shipped_net_reads_the_counters_features_and_counts_at_least_what_the_forest_does():
    net = count_net()
    assert net.features == len(FEATURES) and net.classes >= len(count_forest().classes)
