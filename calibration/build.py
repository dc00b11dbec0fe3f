"""Build a calibration profile from one frame, the tray corners and clicks on cubes."""

from __future__ import annotations

import cv2
import numpy as np

from calibration.errors import CalibrationError
from calibration.lightness import FloorLightness, lightness
from calibration.profile import Profile
from calibration.quality import QualityReport, quality_report
from vision.colour import ColourModel, FloorField, floor_labels
from vision.counter import DEFAULT_SHADOW, Counter
from vision.dark import dark_forest, dark_net
from vision.errors import VisionError
from vision.geometry import TrayGeometry, check_corners, floor_insets, natural_size
from vision.segment import find_blobs
from vision.split import count_forest, count_net
from vision.tops import FINE, outline_score

# The shipped models a counter uses (make_counter).
LEARNED = ("counts", "dark", "net", "darknet")
# The rectified floor is scaled so one cube's top is about this many pixels across:
# enough to split touching cubes, few enough to count in a few milliseconds.
CUBE_PIXELS = 12.0
# A clicked face is grown from the click over pixels within this many levels of the click.
FACE_TOLERANCE = 12
# The floor is the most common colour in the tray: this share of pixels nearest its median.
FLOOR_SHARE = 0.6
# A clicked face is grown within this share of the tray's size around the click.
FACE_WINDOW = 0.12
# A clicked face grown over this many typical faces leaked into the floor or a shadow: only
# its part within a cube of the click is kept.
LEAKED_FACES = 10
# Fine pixels (vision.tops) searched round a click for its top's outline.
OUTLINE_SEARCH = 3
# A click hit the floor when its face is this close to the floor's colour (tolerance units,
# ColourModel.class_distances), within the floor's lightness (lit or in shadow: see
# calibration.lightness) and no outline stands out round it: wood grain and felt draw
# faint squares too, so the outline must beat this quantile of the bare floor's (measured
# at points two cubes or more from every click) by FLOOR_OUTLINE_MARGIN. On generated
# set-ups this refused 348 of 349 clicks on bare floor and none of the clicks on cubes of
# 824 calibrations; the two overlap little round this margin (1.4 refuses a clicked cube).
FLOOR_LIKE = 0.5
FLOOR_OUTLINE_QUANTILE = 95
FLOOR_OUTLINE_MARGIN = 1.25
# Pixels this close to the tray's edge are no sample of the floor: clicked corners are a
# pixel or two off, so the outermost rows may show the foot or the rim of a wall.
FLOOR_BORDER = 3
# Samples kept per class (the profile stays small; k-means needs no more).
MAX_SAMPLES = 400


def _sample(px: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if len(px) > MAX_SAMPLES:
        px = px[rng.choice(len(px), MAX_SAMPLES, replace=False)]
    return px.astype(np.float32)


def _check_frame(frame) -> tuple[int, int]:
    if (
        not isinstance(frame, np.ndarray)
        or frame.ndim != 3
        or frame.shape[2] != 3
        or frame.size == 0
    ):
        raise CalibrationError("calibration needs a BGR colour frame")
    return frame.shape[1], frame.shape[0]


def _clicked_face(image: np.ndarray, point: tuple[float, float]) -> np.ndarray:
    """Mask of the face around a click: grown from the click over similar colours, within
    a window of a few cubes (the tray is some 20 cubes across)."""
    h, w = image.shape[:2]
    x, y = min(int(point[0]), w - 1), min(int(point[1]), h - 1)
    r = max(6, int(FACE_WINDOW * max(w, h)))
    x0, y0, x1, y1 = max(0, x - r), max(0, y - r), min(w, x + r + 1), min(h, y + r + 1)
    smooth = cv2.medianBlur(image[y0:y1, x0:x1], 3)
    mask = np.zeros((y1 - y0 + 2, x1 - x0 + 2), np.uint8)
    # Dark faces get a tighter tolerance: a black cube's top is close to floor in shadow.
    tol = (
        float(np.clip(0.12 * smooth[y - y0, x - x0].astype(float).mean(), 4, FACE_TOLERANCE)),
    ) * 3
    cv2.floodFill(
        smooth,
        mask,
        (x - x0, y - y0),
        0,
        tol,
        tol,
        4 | cv2.FLOODFILL_MASK_ONLY | cv2.FLOODFILL_FIXED_RANGE | (255 << 8),
    )
    out = np.zeros((h, w), bool)
    out[y0:y1, x0:x1] = mask[1:-1, 1:-1] > 0
    return out


def _trim(mask: np.ndarray, point, radius: float) -> np.ndarray:
    """The part of a face mask within `radius` of the click (a face that leaked into a
    shadow of the same darkness keeps only the cube's part)."""
    h, w = mask.shape
    yy, xx = np.ogrid[:h, :w]
    return mask & ((xx - point[0]) ** 2 + (yy - point[1]) ** 2 <= radius**2)


def fit_area_field(xy: np.ndarray, areas: np.ndarray) -> tuple[float, ...]:
    """Coefficients of area = c0 + c1 x + c2 y + c3 (x² + y²) over the rectified tray
    (x, y from -0.5 to 0.5), damped toward a constant when few cubes were clicked."""
    if len(areas) < 4:
        return (float(np.median(areas)), 0.0, 0.0, 0.0)
    A = np.column_stack([np.ones(len(xy)), xy[:, 0], xy[:, 1], (xy**2).sum(axis=1)])
    damping = np.diag([0.0, 1.0, 1.0, 1.0]) * (0.5 if len(areas) >= 8 else 3.0)
    coef = np.linalg.solve(A.T @ A + damping, A.T @ areas)
    return tuple(float(v) for v in coef)


def fit_side_field(xy: np.ndarray, offsets: np.ndarray) -> tuple[float, ...]:
    """Coefficients (cx, cy, k) of offset = (cx, cy) - k (x, y): how far a lone cube's
    silhouette centre lies from its top's at (x, y) (rectified px from the tray's middle).
    A cube shows the sides that face the camera, so the offset points to the floor below
    the camera and grows with the distance from it. Empty with fewer than two cubes."""
    if len(xy) < 2:
        return ()
    A = np.zeros((2 * len(xy), 3))
    A[0::2, 0], A[1::2, 1] = 1.0, 1.0
    A[0::2, 2], A[1::2, 2] = -xy[:, 0], -xy[:, 1]
    coef, *_ = np.linalg.lstsq(A, offsets.reshape(-1), rcond=None)
    return tuple(float(v) for v in coef)


def _outline_scores(counter: Counter, frame: np.ndarray) -> np.ndarray:
    """Per fine pixel (vision.tops), the best square outline's edge strength within
    OUTLINE_SEARCH pixels (a click is rarely at the exact centre of its top)."""
    _, edges = counter.outlines(frame)
    k = 2 * OUTLINE_SEARCH + 1
    return cv2.dilate(outline_score(edges, counter.cube_size * FINE), np.ones((k, k), np.uint8))


def _click_outlines(counter: Counter, score: np.ndarray, clicks) -> np.ndarray:
    """The outline scores at the clicks (frame pixels)."""
    h, w = score.shape
    at = np.clip(np.round(counter.fine.to_rect(clicks)).astype(int), 0, (w - 1, h - 1))
    return score[at[:, 1], at[:, 0]].astype(float)


def _outline_strength(counter: Counter, frame: np.ndarray, clicks) -> float | None:
    """Edge strength of a clicked top's outline: the median over the clicks."""
    strength = float(np.median(_click_outlines(counter, _outline_scores(counter, frame), clicks)))
    return strength if strength > 0 else None


def _floor_outline(score: np.ndarray, floor: np.ndarray, clicks: list, side: float) -> float:
    """The FLOOR_OUTLINE_QUANTILE of the outline scores on the bare floor: pixels of the
    `floor` mask (rectified) two cubes or more from every click and from the tray's edge."""
    away = floor.astype(np.uint8)
    for x, y in clicks:
        cv2.circle(away, (int(round(x)), int(round(y))), int(round(2 * side)), 0, -1)
    m = int(np.ceil(side))
    away[:m], away[-m:], away[:, :m], away[:, -m:] = 0, 0, 0, 0
    fine = cv2.resize(away, (score.shape[1], score.shape[0]), interpolation=cv2.INTER_NEAREST) > 0
    return float(np.percentile(score[fine], FLOOR_OUTLINE_QUANTILE)) if fine.any() else 0.0


def _floor(rect: np.ndarray, exclude: np.ndarray) -> tuple[FloorField, np.ndarray]:
    """The floor's brightness field and where the floor is: the share of the tray closest
    to its median colour, refined after evening out the light."""
    field = FloorField((rect.shape[1], rect.shape[0]), np.median(rect.reshape(-1, 3), axis=0))
    image = rect
    for _ in range(3):
        px = image.reshape(-1, 3).astype(np.float32)
        d = np.linalg.norm(px - np.median(px[~exclude.reshape(-1)], axis=0), axis=1)
        mask = (d <= np.quantile(d[~exclude.reshape(-1)], FLOOR_SHARE)).reshape(
            rect.shape[:2]
        ) & ~exclude
        field.fit(rect, mask, step=1)
        image = field.normalise(rect)
    return field, mask


def build_profile(
    frame: np.ndarray,
    corners_px,
    samples: dict[str, list[tuple[float, float]]],
    camera_controls: dict | None = None,
) -> tuple[Profile, QualityReport]:
    """Profile and quality report from one frame; CalibrationError names any bad input."""
    size = _check_frame(frame)
    try:
        corners = check_corners(corners_px, size)
    except VisionError as e:
        raise CalibrationError(str(e)) from None
    if not samples:
        raise CalibrationError("no colour samples: click at least one cube of each colour")
    points = {}
    for name, pts in samples.items():
        if not name or not name.replace("-", "").replace("_", "").isalnum():
            raise CalibrationError(f"colour name {name!r}: use letters, digits, - or _")
        pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
        if len(pts) == 0:
            raise CalibrationError(f"colour {name}: no click given")
        for x, y in pts:
            if not (0 <= x < size[0] and 0 <= y < size[1]):
                raise CalibrationError(
                    f"click for {name} at ({x:g},{y:g}) is outside the {size[0]}x{size[1]} frame"
                )
        points[name] = pts

    # The cube size first, on a full-resolution view; then everything else at the scale
    # where a cube is CUBE_PIXELS across.
    nat_w, nat_h = natural_size(corners)
    natural = TrayGeometry(corners, (max(8, round(nat_w)), max(8, round(nat_h))))
    rect = natural.rectify(frame)
    tops = []
    for name, pts in points.items():
        for (x, y), (rx, ry) in zip(pts, natural.to_rect(pts), strict=True):
            if not (0 <= rx < rect.shape[1] and 0 <= ry < rect.shape[0]):
                raise CalibrationError(
                    f"click for {name} at ({x:g},{y:g}) is outside the tray corners: click "
                    f"the top of a cube on the tray floor away from the walls (against "
                    f"the far wall, a cube's top may show over the wall)"
                )
            tops.append(np.count_nonzero(_clicked_face(rect, (rx, ry))))
    top_size = float(np.sqrt(np.median(tops)))
    scale = min(1.0, CUBE_PIXELS / max(top_size, 1.0))
    rect_size = (max(8, round(nat_w * scale)), max(8, round(nat_h * scale)))
    geometry = TrayGeometry(corners, rect_size)
    rect = cv2.blur(geometry.rectify(frame), (3, 3))

    clicks = {name: geometry.to_rect(pts) for name, pts in points.items()}
    raw_faces = {name: [_clicked_face(rect, p) for p in pts] for name, pts in clicks.items()}
    exclude = np.logical_or.reduce([m for ms in raw_faces.values() for m in ms])
    border = np.ones(exclude.shape, bool)
    border[FLOOR_BORDER:-FLOOR_BORDER, FLOOR_BORDER:-FLOOR_BORDER] = False
    field, floor = _floor(
        rect, (cv2.dilate(exclude.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0) | border
    )
    norm = field.normalise(rect)
    floor_px = norm[floor]
    faces = {name: [_clicked_face(norm, p) for p in pts] for name, pts in clicks.items()}
    rng = np.random.default_rng(0)
    colour_px = {name: _sample(norm[np.logical_or.reduce(ms)], rng) for name, ms in faces.items()}
    floor_px = _sample(floor_px, rng)
    model = ColourModel(floor_px, colour_px)

    # A click on a cube grows over its face, bounded by the cube's edges; one on the floor,
    # or on a top that looks like the floor (black on a grey tray), leaks far beyond.
    areas = np.array([float(m.sum()) for ms in faces.values() for m in ms])
    side = float(np.sqrt(np.median(areas)))
    for name, masks in faces.items():
        masks[:] = [
            _trim(m, p, 0.6 * side) if m.sum() > LEAKED_FACES * side * side else m
            for m, p in zip(masks, clicks[name], strict=True)
        ]
    colour_px = {name: _sample(norm[np.logical_or.reduce(ms)], rng) for name, ms in faces.items()}
    model = ColourModel(floor_px, colour_px)

    # Colour cannot tell a click on the floor from one on a floor-coloured top (black on a
    # grey tray: the floor in shadow has its colour); lightness can, when the top is darker
    # than the floor's deepest shadow or lighter than the lit floor; and so can the top's
    # outline: a cube's sharp edges stand out from the floor's texture. (Not where the
    # square round the click runs off the floor: the top of a cube against the far wall
    # shows over the wall.)
    counter = Counter(geometry, model, 1.0, top_size * scale, size, floor_field=field.coef)
    labels = counter.labels(rect)
    # (the walls' shadows as measured, when deeper than the default: a coarse felt's grain
    # passes for a faint shadow along the walls)
    floor_light = FloorLightness.measure(
        norm[floor], model.floor_reference, min(counter.shadow_level, DEFAULT_SHADOW)
    )
    score = _outline_scores(counter, frame)
    floor_outline = _floor_outline(score, floor, [p for ps in clicks.values() for p in ps], side)
    for name, pts in points.items():
        outlines = _click_outlines(counter, score, pts)
        face_colours = np.array([np.median(norm[m], axis=0) for m in faces[name]])
        to_floor = model.class_distances(face_colours)[:, 0]
        apart = [floor_light.apart(v) for v in lightness(face_colours)]
        inside = [
            min(rx, ry, rect_size[0] - rx, rect_size[1] - ry) > 0.5 * side + 1
            for rx, ry in clicks[name]
        ]
        for (x, y), outline, d, light, checked in zip(
            pts, outlines, to_floor, apart, inside, strict=True
        ):
            if (
                checked
                and d < FLOOR_LIKE
                and light <= floor_light.needed
                and outline <= FLOOR_OUTLINE_MARGIN * floor_outline
            ):
                raise CalibrationError(
                    f"click for {name} at ({x:g},{y:g}) hit the tray floor, not a cube (it has the "
                    f"floor's colour and lightness and no cube's edges round it); click on the "
                    f"middle of a cube's top"
                )

    # One cube's top and its silhouette: the median over the clicked cubes (a median, so a
    # click on a cube touching others does not inflate them).
    insets = floor_insets(floor_labels(labels))
    counter = Counter(
        geometry, model, 1.0, top_size * scale, size, floor_field=field.coef, insets=insets
    )
    coarse = counter.resolve(counter.labels(rect))
    comps, _ = find_blobs(coarse, len(model.names), 1.0, top_size * scale)
    silhouettes, tops = {}, []
    for k, pts in enumerate(clicks.values()):
        _, top_comps = cv2.connectedComponents((coarse == k + 1).astype(np.uint8), connectivity=4)
        for rx, ry in pts:
            at = min(int(ry), rect_size[1] - 1), min(int(rx), rect_size[0] - 1)
            ys, xs = np.nonzero(top_comps == top_comps[at]) if top_comps[at] else ((), ())
            top = float(len(xs))
            if top:
                tops.append(top)
            if comps[at]:
                silhouettes.setdefault(comps[at], []).append(
                    (top, (np.mean(xs), np.mean(ys)) if top else None)
                )
    if not silhouettes or not tops:
        raise CalibrationError(
            "no clicked cube stands out from the tray floor; check the clicks and the light"
        )
    top_area = float(np.median(tops))
    # Lone cubes (one click, one top's worth of top) give the silhouette's size across the
    # tray: it grows away from the point below the camera, where more side shows.
    lone = [
        (comp, tops_in[0][1])
        for comp, tops_in in silhouettes.items()
        if len(tops_in) == 1 and 0.7 * top_area <= tops_in[0][0] <= 1.3 * top_area
    ]
    samples_xy, areas, tops_xy, offsets = [], [], [], []
    for comp, top_xy in lone or [(c, None) for c in silhouettes]:
        ys, xs = np.nonzero(comps == comp)
        samples_xy.append((xs.mean() / rect_size[0] - 0.5, ys.mean() / rect_size[1] - 0.5))
        areas.append(float(len(xs)))
        if top_xy is not None:
            tops_xy.append(top_xy)
            offsets.append((xs.mean() - top_xy[0], ys.mean() - top_xy[1]))
    cube_area = float(np.median(areas))
    area_field = fit_area_field(np.array(samples_xy), np.array(areas))
    side_field = fit_side_field(
        np.array(tops_xy).reshape(-1, 2) - np.array(rect_size) / 2, np.array(offsets).reshape(-1, 2)
    )
    cube_size = float(np.sqrt(top_area))
    outline_strength = _outline_strength(
        Counter(geometry, model, cube_area, cube_size, size, floor_field=field.coef),
        frame,
        [p for pts in points.values() for p in pts],
    )

    w, h = size
    profile = Profile(
        frame_size=size,
        corners=tuple((float(x) / w, float(y) / h) for x, y in corners),
        rect_size=rect_size,
        cube_size=cube_size,
        cube_area=cube_area,
        floor_pixels=floor_px,
        colour_pixels=colour_px,
        clicks={n: tuple((float(x) / w, float(y) / h) for x, y in p) for n, p in points.items()},
        floor_field=tuple(float(v) for v in field.coef),
        shadow_level=counter.shadow_level,
        floor_insets=insets,
        area_field=area_field,
        side_field=side_field,
        outline_strength=outline_strength,
        camera_controls=dict(camera_controls or {}),
    )
    warnings = (
        []
        if side_field
        else [
            "fewer than two cubes standing alone were clicked, so where cubes show their sides "
            "is not known and more counts of piles will be doubted; click two or more loose "
            "cubes in different parts of the tray"
        ]
    )
    like_shadow = frozenset(model.names[k - 1] for k in counter.dark_colours)
    return profile, quality_report(model, colour_px, cube_size, warnings, like_shadow, floor_light)


def make_counter(
    profile: Profile, frame_size: tuple[int, int], learned: tuple[str, ...] = LEARNED
) -> Counter:
    """A counter for frames of `frame_size` (width, height), at any resolution, using the
    shipped forests named in `learned` and rules instead of the others (to grow them
    again): "counts" (vision.split), "dark" (vision.dark), "net" (vision.net, with "counts"),
    "darknet" (vision.net, with "dark")."""
    corners = profile.corners_px(frame_size)
    try:
        corners = check_corners(corners, frame_size)
    except VisionError as e:
        raise CalibrationError(
            f"calibration does not fit a {frame_size[0]}x{frame_size[1]} frame: {e}"
        ) from None
    model = ColourModel(profile.floor_pixels, profile.colour_pixels)
    return Counter(
        TrayGeometry(corners, tuple(profile.rect_size)),
        model,
        profile.cube_area,
        profile.cube_size,
        frame_size,
        floor_field=profile.floor_field or None,
        shadow_level=profile.shadow_level,
        insets=profile.floor_insets or None,
        area_field=profile.area_field or None,
        side_field=profile.side_field or None,
        outline_strength=profile.outline_strength,
        forest=count_forest() if "counts" in learned else None,
        judge=dark_forest() if "dark" in learned else None,
        net=count_net() if "net" in learned else None,
        dark_net=dark_net() if "darknet" in learned else None,
    )
