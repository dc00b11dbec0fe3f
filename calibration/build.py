"""Build a calibration profile from one frame, the tray corners and clicks on cubes."""
from __future__ import annotations

import cv2
import numpy as np

from calibration.errors import CalibrationError
from calibration.profile import Profile
from calibration.quality import QualityReport, quality_report
from vision.colour import FLOOR, ColourModel
from vision.counter import Counter
from vision.errors import VisionError
from vision.geometry import TrayGeometry, check_corners, natural_size
from vision.segment import find_blobs

# The rectified floor is scaled so one cube's top is about this many pixels across:
# enough to split touching cubes, few enough to count in a few milliseconds.
CUBE_PIXELS = 12.0
# A clicked face is grown from the click over pixels within this many levels of the click.
FACE_TOLERANCE = 14
# The floor is the most common colour in the tray: this share of pixels nearest its median.
FLOOR_SHARE = 0.6
# Samples kept per class (the profile stays small; k-means needs no more).
MAX_SAMPLES = 400


def _sample(px: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if len(px) > MAX_SAMPLES:
        px = px[rng.choice(len(px), MAX_SAMPLES, replace=False)]
    return px.astype(np.float32)


def _check_frame(frame) -> tuple[int, int]:
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3 or frame.size == 0:
        raise CalibrationError("calibration needs a BGR colour frame")
    return frame.shape[1], frame.shape[0]


def _clicked_face(rect: np.ndarray, point: tuple[float, float]) -> np.ndarray:
    """Mask of the face around a click on the rectified image (grown from the click)."""
    h, w = rect.shape[:2]
    x, y = int(round(point[0])), int(round(point[1]))
    smooth = cv2.medianBlur(rect, 3)
    mask = np.zeros((h + 2, w + 2), np.uint8)
    tol = (FACE_TOLERANCE,) * 3
    cv2.floodFill(smooth, mask, (x, y), 0, tol, tol,
                  4 | cv2.FLOODFILL_MASK_ONLY | cv2.FLOODFILL_FIXED_RANGE | (255 << 8))
    return mask[1:-1, 1:-1] > 0


def build_profile(frame: np.ndarray, corners_px, samples: dict[str, list[tuple[float, float]]],
                  camera_controls: dict | None = None) -> tuple[Profile, QualityReport]:
    """Profile and quality report from one frame; CalibrationError names any bad input."""
    size = _check_frame(frame)
    try:
        corners = check_corners(corners_px, size)
    except VisionError as e:
        raise CalibrationError(str(e)) from None
    if not samples:
        raise CalibrationError("no colour samples: click at least one cube of each colour")
    rng = np.random.default_rng(0)
    nat_w, nat_h = natural_size(corners)
    geometry = TrayGeometry(corners, (max(8, round(nat_w)), max(8, round(nat_h))))
    rect = geometry.rectify(frame)
    rh, rw = rect.shape[:2]

    clicks_rect: dict[str, np.ndarray] = {}
    faces: dict[str, list[np.ndarray]] = {}
    for name, points in samples.items():
        if not name or not name.replace("-", "").replace("_", "").isalnum():
            raise CalibrationError(f"colour name {name!r}: use letters, digits, - or _")
        if not points:
            raise CalibrationError(f"colour {name}: no click given")
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        for x, y in pts:
            if not (0 <= x < size[0] and 0 <= y < size[1]):
                raise CalibrationError(f"click for {name} at ({x:g},{y:g}) is outside the {size[0]}x{size[1]} frame")
        on_rect = geometry.to_rect(pts)
        for (x, y), (rx, ry) in zip(pts, on_rect):
            if not (0 <= rx < rw and 0 <= ry < rh):
                raise CalibrationError(f"click for {name} at ({x:g},{y:g}) is outside the tray corners")
        clicks_rect[name] = on_rect
        faces[name] = [_clicked_face(rect, p) for p in on_rect]

    floor_px = _floor_pixels(rect, [m for ms in faces.values() for m in ms])
    colour_px = {name: _sample(rect[np.logical_or.reduce(ms)], rng) for name, ms in faces.items()}
    model = ColourModel(floor_px, colour_px)

    # A click whose face looks like the floor hit the tray, not a cube.
    for name, masks in faces.items():
        for mask, (x, y) in zip(masks, np.asarray(samples[name], dtype=np.float64).reshape(-1, 2)):
            d = model.class_distances(np.median(rect[mask], axis=0))[0]
            if d[0] < 1.0 and d[0] <= d[1 + model.names.index(name)]:
                raise CalibrationError(f"click for {name} at ({x:g},{y:g}) hit the tray floor, not a cube; "
                                       f"click on the middle of a cube's top")

    # Cube size: the silhouette of the clicked cubes (median, so a click on a cube that
    # touches others does not inflate it) and the top face grown from the click.
    labels = model.classify(rect)
    comps, blobs = find_blobs(labels, len(model.names), 1.0)
    areas, tops = [], []
    for name, pts in clicks_rect.items():
        for (rx, ry), mask in zip(pts, faces[name]):
            comp = comps[int(ry), int(rx)]
            if comp and labels[int(ry), int(rx)] != FLOOR:
                areas.append(float(np.count_nonzero(comps == comp)))
            tops.append(float(np.count_nonzero(mask)))
    if not areas:
        raise CalibrationError("no clicked cube stands out from the tray floor; check the clicks and the light")
    top_size = float(np.sqrt(np.median(tops)))
    scale = min(1.0, CUBE_PIXELS / max(top_size, 1.0))
    rect_size = (max(8, round(nat_w * scale)), max(8, round(nat_h * scale)))
    cube_area = float(np.median(areas)) * (rect_size[0] / rw) * (rect_size[1] / rh)
    cube_size = top_size * scale

    w, h = size
    profile = Profile(
        frame_size=size,
        corners=tuple((float(x) / w, float(y) / h) for x, y in corners),
        rect_size=rect_size, cube_size=cube_size, cube_area=cube_area,
        floor_pixels=_sample(floor_px, rng), colour_pixels=colour_px,
        clicks={n: tuple((float(x) / w, float(y) / h) for x, y in np.asarray(p, float).reshape(-1, 2))
                for n, p in samples.items()},
        camera_controls=dict(camera_controls or {}))
    return profile, quality_report(model, colour_px, cube_size)


def _floor_pixels(rect: np.ndarray, faces: list[np.ndarray]) -> np.ndarray:
    """Pixels of the bare floor: the share of the tray closest to its median colour, clicks excluded."""
    px = rect.reshape(-1, 3).astype(np.float32)
    if faces:
        px = px[~np.logical_or.reduce(faces).reshape(-1)]
    median = np.median(px, axis=0)
    d = np.linalg.norm(px - median, axis=1)
    return px[d <= np.quantile(d, FLOOR_SHARE)]


def make_counter(profile: Profile, frame_size: tuple[int, int]) -> Counter:
    """A counter for frames of `frame_size` (width, height), at any resolution."""
    corners = profile.corners_px(frame_size)
    try:
        corners = check_corners(corners, frame_size)
    except VisionError as e:
        raise CalibrationError(f"calibration does not fit a {frame_size[0]}x{frame_size[1]} frame: {e}") from None
    model = ColourModel(profile.floor_pixels, profile.colour_pixels)
    return Counter(TrayGeometry(corners, tuple(profile.rect_size)), model, profile.cube_area,
                   profile.cube_size, frame_size)
