"""Where the cubes are: a small convolutional net, trained on both scene sources, marks the
centre of every cube's top face in the canonical view; it does not know about colour.

The net is an ONNX file run by OpenCV's dnn module (no other runtime on the Pi); it is
trained by `companion train` (the `train` extra: PyTorch).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.errors import VisionError

MODEL = Path(__file__).parent / "models" / "centres.onnx"
# The net's output has half the view's resolution (a cube top is 6 cells wide).
OUTPUT_STRIDE = 2


@dataclass(frozen=True)
class Centre:
    x: float  # view px
    y: float
    p: float  # the net's probability that a cube's top is centred here


class CentreNet:
    def __init__(self, path: str | Path = MODEL):
        try:
            self.net = cv2.dnn.readNetFromONNX(str(path))
        except cv2.error as e:
            raise VisionError(f"cannot load the centre model {path}: {e}") from None

    def probabilities(self, log_ratio: np.ndarray) -> np.ndarray:
        """HxW/2 probabilities from the view's log ratio (HxWx3, H and W multiples of 8)."""
        self.net.setInput(np.ascontiguousarray(log_ratio.transpose(2, 0, 1)[None]))
        logits = self.net.forward()[0, 0]
        return 1.0 / (1.0 + np.exp(-logits))

    def centres(self, log_ratio: np.ndarray, least: float) -> tuple[list[Centre], np.ndarray]:
        """The local maxima of probability above `least`, and the probability map."""
        p = self.probabilities(log_ratio)
        peaks = (p >= cv2.dilate(p, np.ones((3, 3), np.uint8))) & (p > least)
        out = []
        for i, j in zip(*np.nonzero(peaks), strict=True):
            # sub-cell position: the probability-weighted mean of the 3x3 round the peak
            y0, x0 = max(i - 1, 0), max(j - 1, 0)
            y1, x1 = min(i + 2, p.shape[0]), min(j + 2, p.shape[1])
            w = p[y0:y1, x0:x1]
            yy, xx = np.mgrid[y0:y1, x0:x1]
            cy, cx = (w * yy).sum() / w.sum(), (w * xx).sum() / w.sum()
            s = OUTPUT_STRIDE
            out.append(
                Centre(float(cx * s + (s - 1) / 2), float(cy * s + (s - 1) / 2), float(p[i, j]))
            )
        return out, p
