"""A small convolutional net that looks at a colour in a blob: how many cubes of it are there.

The count forest (vision.split) sees a colour in a blob through measures of its pixels.
What it gets wrong most is the lower cube of a pile, which shows only a strip of its
colour beside the cube on it, and whether a strip is a cube's own side or another cube
depends on where it lies. The net sees that directly: a patch of PATCH px square covering
PATCH_EDGES cube edges round the colour's pixels, turned so that the sides a lone cube
shows there point down, with the channels of PATCH_CHANNELS, and also the forest's
FEATURES. Where the forest is unsure, its class shares are averaged with the forest's
(vision.split.decide): on the check and held-out tables (2048 generated scenes) 1984 are
counted exactly so (with the forest and net of 2 December, grown with a third as many
battle trays, 1973). On the benchmark's 432 battle trays 407 are (402 before).

The dark judge (vision.dark) has a net of the same layers, on patches of its own.
Only the forward pass is here; `companion train --model net` (or `darknet`) grows them
(companion.net_training).
"""

from __future__ import annotations

import math
import zipfile

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from vision.errors import VisionError
from vision.tops import sharp_edges

# The patch: this many px square, covering this many cube edges.
PATCH = 24
PATCH_EDGES = 3.0
# Its channels, in this order: the colour's tops, its other faces, other colours' faces,
# unknown or dark cube parts (each the share of the px), the light relative to the lit
# floor over LIGHT_SPAN, and the sharp edges (vision.tops) of the light's logarithm over
# EDGE_SPAN: where two tops of one paint meet, only that line tells them apart, and it
# is thinner than a patch px (so found before the patch is cut, and relative to the
# light, which varies from table to table).
PATCH_CHANNELS = ("tops", "sides", "others", "unknown", "light", "edges")
LIGHT_SPAN = 1.5
EDGE_SPAN = 0.1
# (light below this is taken as this before its logarithm: the black of a cube's shade)
DARKEST = 0.05
# Feature maps of the three 3x3 convolutions (each followed by a 2x2 max pool), and the
# units of the hidden layer that also takes the feature row.
WIDTHS = (12, 24, 32)
HIDDEN = 64
# Rows are run through the net this many at a time (the im2col buffers stay small).
BATCH = 64


def patch(
    level: np.ndarray,
    coarse: np.ndarray,
    inside: np.ndarray,
    colour: int,
    n_colours: int,
    sides: tuple[float, float],
    cube_size: float,
) -> np.ndarray:
    """PATCH x PATCH x PATCH_CHANNELS (uint8, 0..255) round `colour`'s pixels in a blob.

    `level`: light relative to the lit floor; `coarse`: the counter's labels; `inside`: the
    blob's pixels, all three cut to the same window round the blob (rectified px); `sides`:
    where a lone cube's silhouette lies from its top there (vision.counter.Counter.sides).
    """
    faces = inside & ((coarse == colour) | (coarse == n_colours + colour))
    # (the mean pixel from the moments: finding the pixels costs several times more)
    moments = cv2.moments(faces.view(np.uint8), binaryImage=True)
    if not moments["m00"]:
        moments = cv2.moments(inside.view(np.uint8), binaryImage=True)
    cy, cx = moments["m01"] / moments["m00"], moments["m10"] / moments["m00"]
    # turned so the sides point down (a cube shows no sides right below the camera)
    angle = math.degrees(math.atan2(*sides)) if math.hypot(*sides) > 0.05 * cube_size else 0.0
    scale = PATCH / (PATCH_EDGES * cube_size)
    turn = cv2.getRotationMatrix2D((float(cx), float(cy)), -angle, scale)
    turn[:, 2] += (PATCH / 2 - cx, PATCH / 2 - cy)
    others = inside & (coarse >= 1) & (coarse <= 2 * n_colours) & ~faces
    masks = cv2.merge(
        [
            m.view(np.uint8)
            for m in (
                inside & (coarse == colour),
                inside & (coarse == n_colours + colour),
                others,
                inside & (coarse > 2 * n_colours),
            )
        ]
    )
    flags = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    out = np.empty((PATCH, PATCH, len(PATCH_CHANNELS)), np.float32)
    out[..., :4] = cv2.warpAffine(masks.astype(np.float32), turn, (PATCH, PATCH), flags=flags)
    out[..., 4] = (
        cv2.warpAffine(level, turn, (PATCH, PATCH), flags=cv2.INTER_LINEAR, borderValue=1.0)
        / LIGHT_SPAN
    )
    edges = sharp_edges(cv2.log(cv2.max(level, DARKEST)))
    out[..., 5] = cv2.warpAffine(edges, turn, (PATCH, PATCH), flags=flags) / EDGE_SPAN
    return np.clip(out * 255, 0, 255).astype(np.uint8)


def conv(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """3x3 convolution with zero padding, channels last (x: N,H,W,C; w: 9C,K), and the
    columns it multiplied (for the gradient)."""
    n, h, wd, c = x.shape
    # (np.pad costs more than the rest of a small batch)
    p = np.zeros((n, h + 2, wd + 2, c), x.dtype)
    p[:, 1:-1, 1:-1] = x
    # the 3x3 neighbours of each pixel, row by row, each with its channels: a window view
    # copied once (several times faster than joining nine shifted copies)
    window = sliding_window_view(p, (3, 3), axis=(1, 2))  # n, h, w, c, 3, 3
    cols = np.ascontiguousarray(window.transpose(0, 1, 2, 4, 5, 3)).reshape(n, h, wd, 9 * c)
    return cols @ w + b, cols


def pool(x: np.ndarray, trace: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """2x2 max pool, and with `trace` where the maxima were (for the gradient; finding
    them costs a quarter of the net's counting pass)."""
    n, h, w, c = x.shape
    # (the four corners' elementwise maximum: a reduction over two inner axes costs
    # several times more)
    m = np.maximum(
        np.maximum(x[:, ::2, ::2], x[:, ::2, 1::2]), np.maximum(x[:, 1::2, ::2], x[:, 1::2, 1::2])
    )
    return m, x.reshape(n, h // 2, 2, w // 2, 2, c) == m[:, :, None, :, None, :] if trace else None


class Net:
    """The weights `p`: w0..w2, b0..b2 (convolutions), wh, bh (hidden), wo, bo (output),
    and mu, sd (the feature rows' means and spreads in training, to scale rows by)."""

    def __init__(self, p: dict[str, np.ndarray]):
        self.p = p

    @classmethod
    def random(
        cls, features: int, classes: int, seed: int = 0, channels: int = len(PATCH_CHANNELS)
    ) -> Net:
        """Fresh weights (He initialisation) for patches of `channels`, rows left unscaled."""
        rng = np.random.default_rng(seed)
        p, c = {}, channels
        for i, k in enumerate(WIDTHS):
            p[f"w{i}"] = (rng.standard_normal((9 * c, k)) * np.sqrt(2 / (9 * c))).astype(np.float32)
            p[f"b{i}"] = np.zeros(k, np.float32)
            c = k
        flat = c * (PATCH // 2 ** len(WIDTHS)) ** 2 + features
        p["wh"] = (rng.standard_normal((flat, HIDDEN)) * np.sqrt(2 / flat)).astype(np.float32)
        p["bh"] = np.zeros(HIDDEN, np.float32)
        p["wo"] = (rng.standard_normal((HIDDEN, classes)) * np.sqrt(1 / HIDDEN)).astype(np.float32)
        p["bo"] = np.zeros(classes, np.float32)
        p["mu"], p["sd"] = np.zeros(features, np.float32), np.ones(features, np.float32)
        return cls(p)

    @property
    def features(self) -> int:
        return len(self.p["mu"])

    @property
    def classes(self) -> int:
        return len(self.p["bo"])

    @property
    def channels(self) -> int:
        return len(self.p["w0"]) // 9

    def inputs(self, patches: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Patches (uint8) and feature rows as the net takes them."""
        rows = np.asarray(rows, np.float32)
        if (
            rows.ndim != 2
            or rows.shape[1] != self.features
            or len(patches) != len(rows)
            or patches.shape[1:] != (PATCH, PATCH, self.channels)
        ):
            raise VisionError(
                f"the net needs a {PATCH}x{PATCH}x{self.channels} patch and a row of "
                f"{self.features} numbers each, got patches of shape {patches.shape} "
                f"and rows of shape {rows.shape}"
            )
        return patches.astype(np.float32) / 255, (rows - self.p["mu"]) / self.p["sd"]

    def forward(self, x: np.ndarray, f: np.ndarray, trace: bool = False):
        """Logits of scaled inputs, and what the gradient needs of each layer (the pools'
        maxima only with `trace`)."""
        layers = []
        for i in range(len(WIDTHS)):
            z, cols = conv(x, self.p[f"w{i}"], self.p[f"b{i}"])
            m, where = pool(np.maximum(z, 0), trace)
            layers.append((x.shape, cols, z, where))
            x = m
        flat = np.concatenate([x.reshape(len(x), -1), f], axis=1)
        zh = flat @ self.p["wh"] + self.p["bh"]
        h = np.maximum(zh, 0)
        return h @ self.p["wo"] + self.p["bo"], (layers, x.shape, flat, zh, h)

    def proba(self, patches: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Class shares (counts 0, 1, ...) per patch and its feature row."""
        x, f = self.inputs(patches, rows)
        out = [
            softmax(self.forward(x[s : s + BATCH], f[s : s + BATCH])[0])
            for s in range(0, len(x), BATCH)
        ]
        return np.concatenate(out) if out else np.zeros((0, self.classes))

    def save(self, path) -> None:
        np.savez_compressed(path, **self.p)

    @classmethod
    def load(cls, path) -> Net:
        try:
            with np.load(path) as data:
                p = {k: data[k] for k in data.files}
        except OSError as e:
            raise VisionError(f"cannot read the net in {path}: {e}") from None
        except (ValueError, zipfile.BadZipFile):
            raise VisionError(f"{path} is not a saved net") from None
        expected = cls.random(
            len(p.get("mu", ())), len(p.get("bo", ())), channels=len(p.get("w0", ())) // 9
        )
        if p.keys() != expected.p.keys() or any(
            p[k].shape != v.shape for k, v in expected.p.items()
        ):
            raise VisionError(f"the net in {path} does not have the layers of this counter")
        return cls(p)


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
