"""The preview a person checks at a glance: every cube outlined and labelled, unknowns flagged,
and, for a count the counter is not sure of, the places to check ringed."""

from __future__ import annotations

import cv2
import numpy as np

from vision.counter import FrameCount

TRAY = (255, 255, 0)
CUBE = (255, 255, 255)
UNSURE = (0, 200, 255)  # a cube counted with low confidence
UNKNOWN = (255, 0, 255)
# Cubes counted with less confidence than this are drawn in the UNSURE colour.
UNSURE_BELOW = 0.5


def annotate(frame: np.ndarray, result: FrameCount) -> np.ndarray:
    """A copy of the frame with the tray, each cube's outline and colour name, and the counts."""
    out = frame.copy()
    scale = max(0.35, out.shape[1] / 1280)
    if result.tray is not None:
        cv2.polylines(out, [np.int32(np.round(result.tray))], True, TRAY, 1, cv2.LINE_AA)
    for cube in result.cubes:
        colour = (
            UNKNOWN if cube.colour is None else UNSURE if cube.confidence < UNSURE_BELOW else CUBE
        )
        if cube.outline is not None:
            pts = np.int32(np.round(cube.outline))
            cv2.polylines(out, [pts], True, (0, 0, 0), 3, cv2.LINE_AA)
            cv2.polylines(out, [pts], True, colour, 1, cv2.LINE_AA)
        label = "?" if cube.colour is None else cube.colour
        x, y = int(round(cube.centre[0])), int(round(cube.centre[1]))
        cv2.putText(
            out, label, (x - 8, y + 4), cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), 3, cv2.LINE_AA
        )
        cv2.putText(
            out, label, (x - 8, y + 4), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, 1, cv2.LINE_AA
        )
    # (over the cubes: the places to check must show)
    for square in result.doubts:
        cv2.polylines(out, [np.int32(np.round(square))], True, UNSURE, 2, cv2.LINE_AA)
    text = "  ".join(f"{n} {c}" for n, c in result.counts.items() if c)
    if result.unknown:
        text += f"  unknown {result.unknown}"
    text = text.strip() or "no cubes"
    y = int(24 * scale / 0.5)
    cv2.putText(out, text, (8, y), cv2.FONT_HERSHEY_SIMPLEX, scale * 1.2, (0, 0, 0), 4, cv2.LINE_AA)
    cv2.putText(
        out, text, (8, y), cv2.FONT_HERSHEY_SIMPLEX, scale * 1.2, (255, 255, 255), 1, cv2.LINE_AA
    )
    return out
