"""The calibration wizard (`/calibrate`): snapshot, corners, colour taps, check, test drop, save.

The browser holds the clicks; the server holds the frames and draft profiles in memory (a
few of each, nothing written) until the table saves one. Saved profiles live in
`DATA/profiles/NAME.json`; the active one is the service's profile file, and earlier ones
can be restored.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from flask import Blueprint, Response, current_app, jsonify, render_template, request

from calibration import Profile, build_profile, load_profile, make_counter, save_profile
from calibration.errors import CalibrationError
from companion.errors import CompanionError
from companion.web import service as app_service
from companion.web.pages_api import app_config
from firmware.simtray import SimulatedTray

bp = Blueprint("calibrate", __name__, url_prefix="/calibrate")

PROFILES_DIR = "profiles"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _-]{0,39}$")
KEEP = 4  # snapshots and drafts kept in memory (one wizard at a time is usual)
DROP_TIMEOUT = 12.0  # seconds a test drop may take to settle
LATE_CUBES = 1.0  # seconds to watch on after the tray settles, for a cube that trickles out late
TEST_DROP = 1  # cubes of each calibrated colour in a simulated test drop
JPEG_QUALITY = 85


class WizardError(CompanionError):
    """A wizard request cannot be done; the message says what to do."""


class Wizard:
    """Frames the table tapped on and the profiles built from them, by id (memory only)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.snapshots: OrderedDict[str, np.ndarray] = OrderedDict()
        self.drafts: OrderedDict[str, Profile] = OrderedDict()  # built, not saved yet
        self.images: OrderedDict[str, bytes] = OrderedDict()
        self.hints: dict | None = None  # the simulated tray's calibration taps (demo only)

    def keep(self, table: OrderedDict, value: Any) -> str:
        key = secrets.token_hex(6)
        with self.lock:
            table[key] = value
            while len(table) > KEEP:
                table.popitem(last=False)
        return key

    def get(self, table: OrderedDict, key: Any, what: str) -> Any:
        with self.lock:
            if not isinstance(key, str) or key not in table:
                raise WizardError(f"that {what} is no longer in memory: take a new picture")
            return table[key]


def wizard() -> Wizard:
    return current_app.extensions.setdefault("companion_calibrate", Wizard())


def profiles_dir() -> Path:
    return Path(app_config().data_dir) / PROFILES_DIR


def _service():
    service = app_service()
    if service is None:
        raise WizardError("the table service is not running")
    return service


def _live_frame() -> np.ndarray:
    service = _service()
    frame = service.latest_frame
    if frame is None:
        raise WizardError(
            f"no camera picture yet ({service.camera_status.get('detail') or 'camera starting'})"
        )
    return frame.image.copy()


def _jpeg(image: np.ndarray) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise WizardError("could not encode the picture")
    return data.tobytes()


def _jpeg_response(data: bytes) -> Response:
    return Response(data, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


def _body() -> dict:
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise WizardError("expected a JSON object")
    return data


def _points(
    value: Any, what: str, size: tuple[int, int], edge: bool = False
) -> list[tuple[float, float]]:
    """[x, y] points inside the picture; with `edge`, on its outer edge too (tray corners)."""
    if not isinstance(value, list):
        raise WizardError(f"{what}: expected a list of [x, y] points")
    points = []
    for p in value:
        if (
            not isinstance(p, (list, tuple))
            or len(p) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p)
        ):
            raise WizardError(f"{what}: expected [x, y] numbers, got {p!r}")
        x, y = float(p[0]), float(p[1])
        w, h = size
        if not ((0 <= x <= w and 0 <= y <= h) if edge else (0 <= x < w and 0 <= y < h)):
            raise WizardError(
                f"{what}: point ({x:g}, {y:g}) is outside the {size[0]}x{size[1]} picture"
            )
        points.append((x, y))
    return points


def _name(value: Any) -> str:
    if not isinstance(value, str) or not NAME_RE.match(value.strip()):
        raise WizardError(
            "profile name: 1 to 40 letters, digits, spaces, - or _, starting with a letter or digit"
        )
    return value.strip()


def _profiles() -> list[dict]:
    folder = profiles_dir()
    if not folder.is_dir():
        return []
    files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    return [
        {
            "name": p.stem,
            "saved": time.strftime("%Y-%m-%d %H:%M", time.localtime(p.stat().st_mtime)),
        }
        for p in files
    ]


def _count_summary(counter, image: np.ndarray) -> tuple[dict, str]:
    from vision import annotate  # vision's drawing of every counted cube

    result = counter.count(image)
    image_id = wizard().keep(wizard().images, _jpeg(annotate(image, result)))
    return {
        "counts": dict(result.counts),
        "unknown": int(result.unknown),
        "confidence": round(float(result.confidence), 3),
        "sure": result.sure,
    }, image_id


@bp.get("")
def index():
    service = app_service()
    source = getattr(service, "source", None)
    return render_template(
        "calibrate.html",
        profiles=_profiles(),
        demo=isinstance(source, SimulatedTray),
        colours=[*app_config().colours.players, app_config().colours.farmer],
        calibrated=getattr(service, "profile", None) is not None,
    )


@bp.get("/frame.jpg")
def frame():
    """The live camera picture, unannotated (what the table taps on)."""
    return _jpeg_response(_jpeg(_live_frame()))


@bp.post("/snapshot")
def snapshot():
    image = _live_frame()
    key = wizard().keep(wizard().snapshots, image)
    return jsonify(id=key, width=image.shape[1], height=image.shape[0])


@bp.get("/frame/<key>.jpg")
def snapshot_image(key: str):
    return _jpeg_response(_jpeg(wizard().get(wizard().snapshots, key, "picture")))


@bp.get("/image/<key>.jpg")
def counted_image(key: str):
    return _jpeg_response(wizard().get(wizard().images, key, "picture"))


@bp.post("/lock")
def lock():
    """Let exposure and white balance settle to the light as it is (and a focusing lens
    focus on the tray), then lock them; the values are stored with the profile and
    restored with it."""
    source = getattr(_service(), "source", None)
    if isinstance(source, SimulatedTray):
        return jsonify(
            controls={},
            text="The simulated camera has fixed exposure and white balance: nothing to lock.",
        )
    if not hasattr(source, "relock"):
        return jsonify(
            controls={},
            text="This camera cannot lock exposure and white balance; "
            "keep the room light steady while calibrating.",
        )
    controls = source.relock()
    shown = ", ".join(f"{k} {v}" for k, v in controls.items())
    locked = (
        "Focus, exposure and white balance"
        if "LensPosition" in controls
        else "Exposure and white balance"
    )
    return jsonify(controls=controls, text=f"{locked} locked: {shown}.")


@bp.post("/build")
def build():
    data = _body()
    image = wizard().get(wizard().snapshots, data.get("snapshot"), "picture")
    size = (image.shape[1], image.shape[0])
    corners = _points(data.get("corners"), "corners", size, edge=True)
    if len(corners) != 4:
        raise WizardError(f"corners: tap all 4 tray corners (got {len(corners)})")
    samples = data.get("samples")
    if not isinstance(samples, dict) or not samples:
        raise WizardError("samples: tap at least one cube of each colour")
    clicks = {}
    for colour, points in samples.items():
        if not isinstance(colour, str):
            raise WizardError("samples: colour names must be text")
        if points:
            clicks[colour.strip().lower()] = _points(points, f"samples for {colour}", size)
    if not clicks:
        raise WizardError("samples: tap at least one cube of each colour")
    controls = data.get("camera_controls") or {}
    if not isinstance(controls, dict):
        raise WizardError("camera_controls: expected an object")
    profile, report = build_profile(image, corners, clicks, camera_controls=controls)
    counted, image_id = _count_summary(make_counter(profile, size), image)
    key = wizard().keep(wizard().drafts, profile)
    return jsonify(
        draft=key,
        report=report.to_dict(),
        report_lines=report.lines(),
        detected=counted,
        image=f"/calibrate/image/{image_id}.jpg",
    )


def _next_settled(service, detector, deadline: float, late: float = 0.0) -> np.ndarray:
    """Feed the camera's new frames to `detector` until it reports a settled tray; then watch
    `late` seconds more and take any later settled state (a cube that came out last)."""
    last_index, image, until = None, None, deadline
    while time.monotonic() < until:
        frame = service.latest_frame
        if frame is None or frame.index == last_index:
            time.sleep(0.02)
            continue
        last_index = frame.index
        event = detector.update(frame.image, frame.timestamp, frame.index)
        if event is not None:
            if image is None:
                until = min(deadline, time.monotonic() + late)
            image = event.image.copy()
    if image is None:
        raise WizardError(f"the tray did not settle within {DROP_TIMEOUT:g} s: try the test again")
    return image


@bp.post("/test-drop")
def test_drop():
    """Count the tray with the draft profile. On the simulated tray the companion empties the
    tray, drops TEST_DROP cubes of each calibrated colour and reports what really lies in it."""
    from vision.settle import SettleDetector

    data = _body()
    draft: Profile = wizard().get(wizard().drafts, data.get("draft"), "draft profile")
    service = _service()
    if getattr(service, "battle", None) is not None:
        raise WizardError("a battle is open: confirm or cancel it before a test drop")
    source = service.source
    truth = None
    if isinstance(source, SimulatedTray):
        source.clear()
        detector, deadline = SettleDetector(), time.monotonic() + DROP_TIMEOUT
        _next_settled(service, detector, deadline)  # the empty tray, before the drop
        source.drop({c: TEST_DROP for c in draft.colours})
        image = _next_settled(service, detector, deadline, LATE_CUBES)
        truth = {c: n for c, n in sorted(source.contents().items()) if n}
    else:
        image = _live_frame()
    counted, image_id = _count_summary(make_counter(draft, (image.shape[1], image.shape[0])), image)
    result = {"counted": counted, "image": f"/calibrate/image/{image_id}.jpg", "truth": truth}
    if truth is not None:
        result["correct"] = {c: n for c, n in counted["counts"].items() if n} == truth and counted[
            "unknown"
        ] == 0
    return jsonify(result)


@bp.post("/clear")
def clear():
    """Empty the simulated tray (on real hardware the table lifts the cubes out)."""
    source = _service().source
    if not hasattr(source, "clear"):
        raise WizardError("take the cubes out of the tray by hand")
    source.clear()
    return jsonify(ok=True)


@bp.post("/save")
def save():
    data = _body()
    draft: Profile = wizard().get(wizard().drafts, data.get("draft"), "draft profile")
    name = _name(data.get("name"))
    folder = profiles_dir()
    folder.mkdir(parents=True, exist_ok=True)
    save_profile(draft, folder / f"{name}.json")
    _activate(draft)
    return jsonify(saved=name, profiles=_profiles())


@bp.post("/restore")
def restore():
    name = _name(_body().get("name"))
    path = profiles_dir() / f"{name}.json"
    if not path.is_file():
        raise WizardError(f"no saved profile named {name!r}")
    _activate(load_profile(path))
    return jsonify(restored=name)


def _activate(profile) -> None:
    service = _service()
    save_profile(profile, service.profile_path)
    service.set_profile(profile)


@bp.post("/demo-layout")
def demo_layout():
    """Lay one cube of each colour apart in the simulated tray, as a person calibrating would,
    and keep where that person would tap (shown on request as hints)."""
    source = _service().source
    if not hasattr(source, "calibration_clicks"):
        raise WizardError("lay out one or two cubes of each colour in the tray by hand")
    corners, samples = source.calibration_clicks()
    wizard().hints = {
        "corners": [[float(x), float(y)] for x, y in corners],
        "samples": {c: [[float(x), float(y)] for x, y in pts] for c, pts in samples.items()},
    }
    return jsonify(colours=sorted(samples))


@bp.get("/demo-hints")
def demo_hints():
    """Where a person would tap on the simulated tray laid out by /demo-layout (demo only)."""
    if not hasattr(getattr(_service(), "source", None), "calibration_clicks"):
        raise WizardError("hints exist only for the simulated tray")
    if wizard().hints is None:
        raise WizardError("put cubes in the simulated tray first")
    return jsonify(wizard().hints)


def _error(e: Exception):
    from companion.web.security import error_response

    return error_response(400, str(e))


bp.register_error_handler(CalibrationError, _error)
