"""Growing the count net (vision.net): its gradient and Adam's steps, in numpy.

The net learns from the same rows as the count forest (companion.training), each with its
patch, taught the same true counts. Patches are also learnt mirrored left to right: the
sides a cube shows point down in every patch, and a pile's mirror image is a pile.
"""

from __future__ import annotations

import numpy as np

from vision.net import WIDTHS, Net, softmax

# Passes over the rows, rows per step, and Adam's step size (halved every pass in the
# second half) and its moment decays.
EPOCHS = 8
BATCH = 128
RATE = 2e-3
DECAY = (0.9, 0.999)


def _conv_back(dout: np.ndarray, cols: np.ndarray, w: np.ndarray, shape) -> tuple[np.ndarray, ...]:
    """Gradients of vision.net.conv's input, weights and bias."""
    n, h, wd, c = shape
    k = dout.shape[3]
    dw = cols.reshape(-1, 9 * c).T @ dout.reshape(-1, k)
    db = dout.sum(axis=(0, 1, 2))
    dcols = dout @ w.T
    dp = np.zeros((n, h + 2, wd + 2, c), dout.dtype)
    for q, (i, j) in enumerate((i, j) for i in range(3) for j in range(3)):
        dp[:, i : i + h, j : j + wd] += dcols[..., q * c : (q + 1) * c]
    return dp[:, 1:-1, 1:-1], dw, db


def _pool_back(dm: np.ndarray, where: np.ndarray) -> np.ndarray:
    n, h2, w2, c = dm.shape
    return (where * dm[:, :, None, :, None, :]).reshape(n, h2 * 2, w2 * 2, c)


def gradients(
    net: Net, x: np.ndarray, f: np.ndarray, y: np.ndarray
) -> tuple[float, dict[str, np.ndarray]]:
    """Mean cross-entropy of scaled inputs (Net.inputs) against counts `y`, and its
    gradient for each weight."""
    logits, (layers, shape, flat, zh, h) = net.forward(x, f, trace=True)
    n = len(y)
    d = softmax(logits)
    loss = float(-np.log(d[np.arange(n), y] + 1e-9).mean())
    d[np.arange(n), y] -= 1
    d /= n
    g = {"wo": h.T @ d, "bo": d.sum(0)}
    dh = (d @ net.p["wo"].T) * (zh > 0)
    g["wh"], g["bh"] = flat.T @ dh, dh.sum(0)
    dx = (dh @ net.p["wh"].T)[:, : int(np.prod(shape[1:]))].reshape(shape)
    for i in reversed(range(len(WIDTHS))):
        in_shape, cols, z, where = layers[i]
        dx, g[f"w{i}"], g[f"b{i}"] = _conv_back(
            _pool_back(dx, where) * (z > 0), cols, net.p[f"w{i}"], in_shape
        )
    return loss, g


def grow_net(
    patches: np.ndarray,
    rows: np.ndarray,
    truth: np.ndarray,
    classes: int,
    epochs: int = EPOCHS,
    seed: int = 0,
    log=print,
) -> Net:
    """A net taught `truth` (counts 0..classes-1) from `patches` (uint8) and their feature
    rows, by Adam on mini-batches in an order drawn from `seed`."""
    rows = np.asarray(rows, np.float32)
    net = Net.random(rows.shape[1], classes, seed, channels=patches.shape[3])
    net.p["mu"], net.p["sd"] = rows.mean(0), rows.std(0) + 1e-6
    learnt = [k for k in net.p if k not in ("mu", "sd")]
    m = {k: np.zeros_like(net.p[k]) for k in learnt}
    v = {k: np.zeros_like(net.p[k]) for k in learnt}
    rng = np.random.default_rng(seed)
    t = 0
    for epoch in range(epochs):
        order = rng.permutation(len(truth))
        total = 0.0
        rate = RATE * 0.5 ** max(0, epoch - epochs // 2)
        for s in range(0, len(order), BATCH):
            at = order[s : s + BATCH]
            x, f = net.inputs(patches[at], rows[at])
            mirrored = rng.random(len(at)) < 0.5
            x[mirrored] = x[mirrored, :, ::-1]
            loss, g = gradients(net, x, f, truth[at])
            total += loss * len(at)
            t += 1
            for k in learnt:
                m[k] = DECAY[0] * m[k] + (1 - DECAY[0]) * g[k]
                v[k] = DECAY[1] * v[k] + (1 - DECAY[1]) * g[k] ** 2
                net.p[k] -= (
                    rate
                    * (m[k] / (1 - DECAY[0] ** t))
                    / (np.sqrt(v[k] / (1 - DECAY[1] ** t)) + 1e-8)
                )
        log(f"pass {epoch + 1} of {epochs}: mean loss {total / max(len(truth), 1):.4f}")
    return net
