"""Where the cubes are: a small convolutional net, trained on both scene sources, marks the
centre of every cube's top face in the canonical view; it does not know about colour.

The net is an ONNX file run by onnxruntime on one core (the Pi needs nothing of the
training); it is trained by `companion train` (the `train` extra: PyTorch). Its output is a
score, not a probability: the focal loss it learns from keeps a half-hidden cube's score low.
So beside each net lies what its peaks' scores meant on set-ups it never saw (`peaks.json`,
PeakOdds): one curve for peaks over the floor and one for peaks over the band of wall round
it, where a cube against a wall shows its top but far fewer peaks are cubes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import onnxruntime
from onnxruntime.capi.onnxruntime_pybind11_state import (
    Fail,
    InvalidGraph,
    InvalidProtobuf,
    NoSuchFile,
)

from vision.errors import VisionError

MODEL = Path(__file__).parent / "models" / "centres.onnx"
PEAK_ODDS = "peaks.json"  # beside the net it belongs to
# Its two curves: for peaks over the floor, and over the band of wall round it.
FLOOR, WALL = "floor", "wall"
# The net's output has half the view's resolution (a cube top is 6 cells wide).
OUTPUT_STRIDE = 2


@dataclass(frozen=True)
class Centre:
    x: float  # view px
    y: float
    p: float  # the probability that a cube's top is centred here (PeakOdds of its score)
    score: float  # the net's own output at the peak
    wall: bool = False  # its cell lies over the wall round the floor, not over the floor


@dataclass(frozen=True)
class PeakOdds:
    """The share of the net's peaks that were cubes, by the peak's score: a rising step
    curve through (scores[i], odds[i]), flat beyond its ends."""

    scores: tuple[float, ...]
    odds: tuple[float, ...]

    def __call__(self, score):
        return np.interp(score, self.scores, self.odds)

    @classmethod
    def load(cls, path: str | Path, where: str = FLOOR) -> PeakOdds:
        """The curve for peaks `where` (FLOOR or WALL) in the peak odds file `path`."""
        try:
            data = json.loads(Path(path).read_text())[where]
            odds = cls(
                tuple(float(v) for v in data["scores"]), tuple(float(v) for v in data["odds"])
            )
        except KeyError as e:
            raise VisionError(
                f"cannot read the peak odds {path}: no {e} (fit them again with "
                f"`companion train --refit`)"
            ) from None
        except (OSError, ValueError, TypeError) as e:
            raise VisionError(f"cannot read the peak odds {path}: {e}") from None
        s, o = np.array(odds.scores), np.array(odds.odds)
        if not (
            len(s) == len(o) >= 2
            and (np.diff(s) >= 0).all()
            and (np.diff(o) >= 0).all()
            and 0 <= o.min() <= o.max() <= 1
        ):
            raise VisionError(
                f"the peak odds {path} ({where}) are not a rising curve of odds between 0 and 1 "
                f"over at least two rising scores"
            )
        return odds


# The net's score taken as it is: for checking a net before its odds are known.
RAW_SCORE = PeakOdds((0.0, 1.0), (0.0, 1.0))


class CentreNet:
    def __init__(
        self,
        path: str | Path = MODEL,
        odds: PeakOdds | None = None,
        wall_odds: PeakOdds | None = None,
    ):
        """The net in the ONNX file `path` and its odds over the floor and over the wall
        (by default the peaks.json beside it; given `odds` alone, they hold for both)."""
        # One core: the same ms per frame wherever it runs, and the service's other work
        # (camera, settle watch, web page) keeps the rest of the Pi's.
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        try:
            self.session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except (Fail, InvalidGraph, InvalidProtobuf, NoSuchFile) as e:
            raise VisionError(f"cannot load the centre model {path}: {e}") from None
        self.input = self.session.get_inputs()[0].name
        if odds is None:
            odds = PeakOdds.load(Path(path).with_name(PEAK_ODDS), FLOOR)
            wall_odds = wall_odds or PeakOdds.load(Path(path).with_name(PEAK_ODDS), WALL)
        self.odds = odds
        self.wall_odds = wall_odds or odds

    def scores(self, log_ratio: np.ndarray) -> np.ndarray:
        """HxW/2 scores (0..1) from the view's log ratio (HxWx3, H and W multiples of 8)."""
        view = np.ascontiguousarray(log_ratio.transpose(2, 0, 1)[None], np.float32)
        logits = self.session.run(None, {self.input: view})[0][0, 0]
        return 1.0 / (1.0 + np.exp(-logits))

    def centres(
        self, log_ratio: np.ndarray, least: float, floor: tuple[int, int, int, int] | None = None
    ) -> tuple[list[Centre], np.ndarray]:
        """The local maxima of the score whose probability is above `least`, and the
        probability map; outside `floor` (x0, y0, x1, y1 view px), if given, a peak's odds
        are those of peaks over the wall."""
        score = self.scores(log_ratio)
        p = self.odds(score)
        wall = np.zeros(score.shape, bool)
        if floor is not None:
            s = OUTPUT_STRIDE
            x0, y0, x1, y1 = floor
            # (each cell by its middle, in view px; one row and one column, broadcast)
            xs = np.arange(p.shape[1]) * s + (s - 1) / 2
            ys = np.arange(p.shape[0]) * s + (s - 1) / 2
            wall = ((xs < x0) | (xs > x1))[None, :] | ((ys < y0) | (ys > y1))[:, None]
            p = np.where(wall, self.wall_odds(score), p)
        peaks = (score >= cv2.dilate(score, np.ones((3, 3), np.uint8))) & (p > least)
        ii, jj = np.nonzero(peaks)
        # sub-cell position: the score-weighted mean of the 3x3 round each peak (cells beyond
        # the map weigh nothing)
        around = np.lib.stride_tricks.sliding_window_view(np.pad(score, 1), (3, 3))[ii, jj]
        weight = around.sum(axis=(1, 2))
        step = np.arange(-1.0, 2.0)
        cy = ii + around.sum(axis=2) @ step / weight
        cx = jj + around.sum(axis=1) @ step / weight
        s = OUTPUT_STRIDE
        out = [
            Centre(
                float(x * s + (s - 1) / 2),
                float(y * s + (s - 1) / 2),
                float(p[i, j]),
                float(score[i, j]),
                bool(wall[i, j]),
            )
            for i, j, y, x in zip(ii, jj, cy, cx, strict=True)
        ]
        return out, p
