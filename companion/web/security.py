"""Who may change things at the table: the PIN, unlocked sessions, CSRF tokens.

Rules (issue 7):
- Bound to loopback, nobody else can reach the server, so no PIN is asked.
- Bound to any other address, every state-changing request and the camera stream need a
  session unlocked with the table's PIN. Reading the game (pages, /api/state, /events) stays open.
- Every state-changing request carries a CSRF token (form field `csrf_token` or header
  `X-CSRF-Token`), loopback included: a web page open in the same browser could otherwise
  post to 127.0.0.1. A JSON request without any cookie is exempt (scripts, curl): browsers
  cannot send `application/json` across sites without a CORS preflight this app never grants,
  and without a cookie it carries no unlocked session.
- The PIN is created at first start and stored only as a salted hash in the data directory;
  `init_app` returns the new PIN once so `companion serve` can print and log it.
- PIN attempts are rate limited per client address, with a global cap against many addresses.
- On loopback only loopback Host names are answered (no DNS rebinding from a web page).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    current_app,
    jsonify,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from werkzeug.exceptions import HTTPException
from werkzeug.security import check_password_hash, generate_password_hash

from calibration.errors import CalibrationError
from companion.errors import CompanionError
from firmware.errors import FirmwareError
from vision.errors import VisionError

PIN_FILE = "web-pin.json"
SECRET_FILE = "web-secret.key"
PIN_DIGITS = 6  # length of the PIN made at first start
PIN_LENGTHS = (4, 12)  # a PIN the table chooses: this many digits, inclusive
SESSION_HOURS = 24  # an unlocked phone stays unlocked for a game evening
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
# What shows the camera (the stream, calibration pictures, a battle's counted picture):
# watching it needs an unlocked session off loopback.
CAMERA_PATHS = ("/stream.mjpg",)
CAMERA_PREFIXES = ("/calibrate/frame", "/calibrate/image/")
CAMERA_SUFFIX_UNDER = ("/api/battles/", "/image.jpg")
EXTENSION = "companion_security"


class PinError(CompanionError):
    """A PIN was wrong, malformed or asked too often."""


def is_loopback(host: str) -> bool:
    """True when a server bound to `host` can only be reached from this machine."""
    host = (host or "").strip().strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_pin_format(pin: object, what: str = "PIN") -> str:
    """Return the PIN as text, or raise PinError naming what is wrong with it."""
    if not isinstance(pin, str) or not pin.strip():
        raise PinError(f"{what}: enter the digits")
    pin = pin.strip()
    low, high = PIN_LENGTHS
    if not pin.isascii() or not pin.isdigit():
        raise PinError(f"{what}: use digits 0-9 only")
    if not low <= len(pin) <= high:
        raise PinError(f"{what}: use {low} to {high} digits, got {len(pin)}")
    return pin


class PinStore:
    """The PIN's salted hash in the data directory; written only when created or changed."""

    def __init__(self, data_dir: str | os.PathLike):
        self.path = Path(data_dir) / PIN_FILE
        self._record: dict | None = None

    def ensure(self) -> str | None:
        """Load the PIN record; create one at first start and return its PIN (else None)."""
        if self.path.exists():
            try:
                record = json.loads(self.path.read_text(encoding="utf-8"))
                if not isinstance(record, dict) or not isinstance(record.get("hash"), str):
                    raise ValueError("no hash")
            except (OSError, ValueError) as e:
                raise CompanionError(
                    f"{self.path}: not a PIN file ({e}); delete it to get a new PIN "
                    "at the next start"
                ) from None
            self._record = record
            return None
        pin = "".join(secrets.choice("0123456789") for _ in range(PIN_DIGITS))
        self._write(pin)
        return pin

    @property
    def generation(self) -> str:
        """Changes with every new PIN, so sessions unlocked with the old one end."""
        return self._record["id"] if self._record else ""

    def verify(self, pin: str) -> bool:
        return bool(self._record) and check_password_hash(self._record["hash"], pin)

    def change(self, new_pin: str) -> None:
        self._write(check_pin_format(new_pin, "new PIN"))

    def _write(self, pin: str) -> None:
        record = {
            "hash": generate_password_hash(pin),
            "id": secrets.token_hex(8),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        # Owner-only: the hash is slow to attack, but nobody else needs to read it.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(record, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        self._record = record


@dataclass
class AttemptLimiter:
    """Failed PIN attempts: a few free ones per client, then a doubling wait; a global cap.

    A 6-digit PIN has a million values; at most `global_limit` guesses an hour from all
    addresses together makes guessing it take years.
    """

    free: int = 5
    base_wait: float = 30.0
    max_wait: float = 3600.0
    global_limit: int = 60
    global_window: float = 3600.0
    clock: Callable[[], float] = time.monotonic
    _clients: dict[str, tuple[int, float]] = field(default_factory=dict)
    _recent: deque = field(default_factory=deque)

    def wait(self, client: str) -> float:
        """Seconds this client must wait before its next attempt (0 = may try now)."""
        now = self.clock()
        while self._recent and now - self._recent[0] > self.global_window:
            self._recent.popleft()
        waits = [0.0]
        if len(self._recent) >= self.global_limit:
            waits.append(self._recent[0] + self.global_window - now)
        failures, last = self._clients.get(client, (0, 0.0))
        if failures >= self.free:
            delay = min(self.max_wait, self.base_wait * 2 ** (failures - self.free))
            waits.append(last + delay - now)
        return max(waits)

    def failed(self, client: str) -> None:
        now = self.clock()
        failures, _ = self._clients.get(client, (0, 0.0))
        self._clients[client] = (failures + 1, now)
        self._recent.append(now)
        if len(self._clients) > 10000:  # bound memory against address floods
            cutoff = now - self.max_wait
            self._clients = {c: v for c, v in self._clients.items() if v[1] >= cutoff}

    def succeeded(self, client: str) -> None:
        self._clients.pop(client, None)


class Security:
    """The app's PIN, limiter and rules; one per app, in `app.extensions`."""

    def __init__(self, data_dir: str | os.PathLike, bound_host: str):
        self.store = PinStore(data_dir)
        self.limiter = AttemptLimiter()
        self.loopback = is_loopback(bound_host)
        self.bound_host = bound_host

    def unlocked(self) -> bool:
        return self.loopback or (
            bool(self.store.generation) and session.get("unlocked") == self.store.generation
        )

    def try_pin(self, pin: object, client: str) -> None:
        """Unlock this session with `pin`, or raise PinError saying why not."""
        wait = self.limiter.wait(client)
        if wait > 0:
            raise PinError(f"too many wrong PINs: try again in {_duration(wait)}")
        pin = check_pin_format(pin)
        if not self.store.verify(pin):
            self.limiter.failed(client)
            raise PinError("wrong PIN")
        self.limiter.succeeded(client)
        session.permanent = True
        session["unlocked"] = self.store.generation

    def change_pin(self, current: object, new: object, repeat: object, client: str) -> None:
        """Set a new PIN. Off loopback the current PIN is asked again (an unlocked phone left
        on the table must not be enough); on loopback it is not, so a forgotten PIN can be reset."""
        new = check_pin_format(new, "new PIN")
        if new != (repeat or "").strip():
            raise PinError("new PIN: the two entries differ")
        if not self.loopback:
            wait = self.limiter.wait(client)
            if wait > 0:
                raise PinError(f"too many wrong PINs: try again in {_duration(wait)}")
            if not self.store.verify(check_pin_format(current, "current PIN")):
                self.limiter.failed(client)
                raise PinError("current PIN is wrong")
            self.limiter.succeeded(client)
        self.store.change(new)
        if not self.loopback:
            session["unlocked"] = self.store.generation


def _duration(seconds: float) -> str:
    seconds = max(1, int(seconds + 0.999))
    return f"{seconds} s" if seconds < 120 else f"{(seconds + 59) // 60} min"


def security() -> Security:
    return current_app.extensions[EXTENSION]


def csrf_token() -> str:
    """This session's CSRF token (made on first use); templates put it in forms and a meta tag."""
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(32)
    return token


def client_address() -> str:
    return request.remote_addr or "unknown"


def wants_json() -> bool:
    if request.path.startswith("/api/") or request.is_json:
        return True
    accept = request.accept_mimetypes
    return accept.best_match(["application/json", "text/html"]) == "application/json"


def error_response(status: int, message: str):
    """A one-line message for the user: JSON for scripts and fetches, a page for browsers."""
    if wants_json():
        return jsonify(error=message), status
    return render_template("error.html", status=status, message=message), status


def _csrf_ok() -> bool:
    if request.is_json and not request.cookies:
        return True
    expected = session.get("csrf")
    sent = request.headers.get(CSRF_HEADER) or request.form.get(CSRF_FIELD, "")
    return bool(expected) and bool(sent) and hmac.compare_digest(str(sent), str(expected))


def _is_camera() -> bool:
    path = request.path
    prefix, suffix = CAMERA_SUFFIX_UNDER
    return (
        path in CAMERA_PATHS
        or path.startswith(CAMERA_PREFIXES)
        or (path.startswith(prefix) and path.endswith(suffix))
    )


def _guard():
    sec = security()
    if sec.loopback and not is_loopback(urlsplit("//" + request.host).hostname or ""):
        # DNS rebinding: another site's name pointed at 127.0.0.1 would make its pages
        # "same origin" with this server; on loopback only loopback names are served.
        return error_response(
            403, f"this companion answers only to its loopback address, not {request.host!r}"
        )
    changing = request.method not in ("GET", "HEAD", "OPTIONS")
    if changing and not _csrf_ok():
        return error_response(
            403,
            "this form has expired (missing or wrong CSRF token): reload the page and try again",
        )
    if sec.unlocked() or request.endpoint in ("security.unlock", "security.lock", "static"):
        return None
    if changing or _is_camera():
        what = "watching the camera" if _is_camera() and not changing else "changing anything"
        return error_response(403, f"locked: {what} needs the table's PIN; unlock at /unlock")
    return None


def _headers(response):
    # No external URL may load: the page must work with no network beyond the Pi.
    response.headers.setdefault(
        "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'",
    )
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault("X-Frame-Options", "DENY")
    return response


def _handle_http_error(e: HTTPException):
    if e.code is None or e.code < 400:
        return e
    messages = {
        404: f"no page at {request.path}",
        405: f"{request.method} is not allowed on {request.path}",
        413: "the upload is too large",
    }
    return error_response(e.code, messages.get(e.code, e.description or e.name))


def _handle_user_error(e: Exception):
    return error_response(400, str(e))


def _handle_crash(e: Exception):
    current_app.logger.exception("unexpected error on %s %s", request.method, request.path)
    return error_response(500, "something went wrong inside the companion; the log has the details")


bp = Blueprint("security", __name__)


@bp.route("/unlock", methods=["GET", "POST"])
def unlock():
    sec = security()
    nxt = _safe_next(request.values.get("next"))
    if request.method == "GET":
        return render_template(
            "unlock.html", next=nxt, error=None, loopback=sec.loopback, unlocked=sec.unlocked()
        )
    data = request.get_json(silent=True) if request.is_json else request.form
    try:
        sec.try_pin((data or {}).get("pin"), client_address())
    except PinError as e:
        if wants_json():
            return jsonify(error=str(e)), 403
        return render_template(
            "unlock.html", next=nxt, error=str(e), loopback=sec.loopback, unlocked=False
        ), 403
    if wants_json():
        return jsonify(unlocked=True, csrf=csrf_token())
    return redirect(nxt)


@bp.post("/lock")
def lock():
    session.pop("unlocked", None)
    if wants_json():
        return jsonify(unlocked=security().unlocked())
    return redirect(url_for("security.unlock"))


@bp.get("/api/session")
def session_info():
    """What the page needs to know about this browser's rights."""
    sec = security()
    return jsonify(unlocked=sec.unlocked(), pin_required=not sec.loopback, csrf=csrf_token())


def _safe_next(target: str | None) -> str:
    # Only paths on this server: never redirect a phone to another site.
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


def _read_secret(data_dir: Path) -> bytes:
    path = data_dir / SECRET_FILE
    if path.exists():
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    key = secrets.token_bytes(32)
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


def init_app(app: Flask, data_dir: str | os.PathLike, bound_host: str) -> str | None:
    """Install the PIN, session, CSRF and error rules on `app`.

    Returns the new PIN when it was created now (first start), else None: the caller
    (`companion serve`) prints it to the console and the log. The PIN itself is never stored.
    """
    data_dir = Path(data_dir)
    sec = Security(data_dir, bound_host)
    new_pin = sec.store.ensure()
    app.extensions[EXTENSION] = sec
    # Sessions survive a restart: the key lives in the data directory, written once.
    app.secret_key = _read_secret(data_dir)
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_NAME="companion_session",
        PERMANENT_SESSION_LIFETIME=timedelta(hours=SESSION_HOURS),
        MAX_CONTENT_LENGTH=app.config.get("MAX_CONTENT_LENGTH") or 2 * 1024 * 1024,
    )
    app.before_request(_guard)
    app.after_request(_headers)
    app.register_error_handler(HTTPException, _handle_http_error)
    for error in (CompanionError, CalibrationError, FirmwareError, VisionError):
        app.register_error_handler(error, _handle_user_error)
    app.register_error_handler(Exception, _handle_crash)
    app.context_processor(
        lambda: {"csrf_token": csrf_token, "security": sec, "unlocked": sec.unlocked()}
    )
    app.register_blueprint(bp)
    return new_pin
