"""The PIN, sessions, CSRF and error rules of the web app (companion/web/security.py)."""

from __future__ import annotations

import json
import os
import stat

import pytest
from flask import Blueprint

from companion.web.security import (
    EXTENSION,
    PIN_FILE,
    AttemptLimiter,
    PinError,
    check_pin_format,
    is_loopback,
)
from tests.web.conftest import FakeClock, csrf, post_json, unlock

OUTCOME = {
    "attacker": "blue",
    "defender": "red",
    "thrown": {"blue": 4, "red": 3},
    "emerged": {"blue": 3, "red": 4, "green": 1},
}


def test_pin_made_at_first_start_stored_hashed_owner_only(make_app, config):
    app = make_app()
    pin = app.config["NEW_PIN"]
    assert pin and pin.isdigit() and len(pin) == 6
    path = os.path.join(config.data_dir, PIN_FILE)
    text = open(path).read()
    assert pin not in text
    assert json.loads(text)["hash"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # A restart keeps the PIN and does not hand it out again.
    again = make_app()
    assert again.config["NEW_PIN"] is None


def test_corrupt_pin_file_is_a_clear_error_and_kept(make_app, config):
    os.makedirs(config.data_dir)
    path = os.path.join(config.data_dir, PIN_FILE)
    open(path, "w").write("not json")
    with pytest.raises(Exception, match="not a PIN file.*delete it"):
        make_app()
    assert open(path).read() == "not json"


@pytest.mark.parametrize(
    "host,expected",
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("127.0.1.1", True),
        ("0.0.0.0", False),
        ("192.168.1.20", False),
        ("::", False),
        ("pi.local", False),
    ],
)
def test_loopback_hosts(host, expected):
    assert is_loopback(host) is expected


@pytest.mark.parametrize(
    "pin,message",
    [
        ("", "enter the digits"),
        ("12a4", "digits 0-9 only"),
        ("123", "4 to 12 digits, got 3"),
        ("1" * 13, "got 13"),
        ("١٢٣٤", "digits 0-9 only"),
        (None, "enter the digits"),
    ],
)
def test_pin_format_errors(pin, message):
    with pytest.raises(PinError, match=message):
        check_pin_format(pin)


def test_loopback_needs_no_pin_but_still_csrf(client):
    assert post_json(client, "/api/pages/outcome", OUTCOME).status_code == 200
    r = post_json(client, "/api/pages/outcome", OUTCOME, token=None)
    assert r.status_code == 403 and "CSRF" in r.get_json()["error"]
    r = post_json(client, "/api/pages/outcome", OUTCOME, token="wrong")
    assert r.status_code == 403


def test_json_script_without_cookies_is_exempt_from_csrf(app):
    # A script (curl) sends JSON and no cookie: a browser cannot forge that across sites.
    fresh = app.test_client(use_cookies=False)
    assert fresh.post("/api/pages/outcome", json=OUTCOME).status_code == 200
    # A cross-site form post (no JSON) is never exempt.
    r = fresh.post("/api/pages/outcome", data={"attacker": "blue"})
    assert r.status_code == 403


def test_network_locks_changes_and_the_camera_until_unlocked(make_app):
    app = make_app(host="0.0.0.0")
    client = app.test_client()
    for page in ("/", "/game", "/calibrate", "/settings", "/api/session"):
        assert client.get(page).status_code == 200, page
    assert client.get("/api/session").get_json()["unlocked"] is False
    r = post_json(client, "/api/pages/outcome", OUTCOME)
    assert r.status_code == 403 and "needs the table's PIN" in r.get_json()["error"]
    r = client.get("/stream.mjpg")
    assert r.status_code == 403 and b"watching the camera" in r.data
    for camera in (
        "/calibrate/frame.jpg",
        "/calibrate/frame/abc.jpg",
        "/calibrate/image/abc.jpg",
        "/api/battles/1/image.jpg",
    ):
        assert client.get(camera).status_code == 403, camera
    unlock(app, client)
    assert client.get("/api/session").get_json()["unlocked"] is True
    assert post_json(client, "/api/pages/outcome", OUTCOME).status_code == 200
    # Another phone is still locked.
    other = app.test_client()
    assert post_json(other, "/api/pages/outcome", OUTCOME).status_code == 403
    # Locking again.
    r = client.post("/lock", data={"csrf_token": csrf(client)})
    assert r.status_code == 302
    assert post_json(client, "/api/pages/outcome", OUTCOME).status_code == 403


def test_unlock_page_and_errors(make_app):
    app = make_app(host="192.168.1.5")
    client = app.test_client()
    page = client.get("/unlock").data.decode()
    assert 'name="csrf_token"' in page and 'name="pin"' in page
    r = client.post("/unlock", data={"pin": "12", "csrf_token": csrf(client)})
    assert r.status_code == 403 and "use 4 to 12 digits, got 2" in r.data.decode()
    wrong = "000000" if app.config["NEW_PIN"] != "000000" else "111111"
    r = client.post("/unlock", data={"pin": wrong, "csrf_token": csrf(client)})
    assert r.status_code == 403 and "wrong PIN" in r.data.decode()
    r = client.post("/unlock", json={"pin": wrong}, headers={"X-CSRF-Token": csrf(client)})
    assert r.status_code == 403 and r.get_json() == {"error": "wrong PIN"}
    # Without a CSRF token even the right PIN is refused (login CSRF).
    r = client.post("/unlock", data={"pin": app.config["NEW_PIN"]})
    assert r.status_code == 403


def test_unlock_redirects_only_within_the_server(make_app):
    app = make_app(host="0.0.0.0")
    client = app.test_client()
    for target, expected in (
        ("/game", "/game"),
        ("//evil.example/x", "/"),
        ("https://evil.example", "/"),
        ("/\\evil.example", "/"),
    ):
        client.post("/lock", data={"csrf_token": csrf(client)})
        r = client.post(
            "/unlock",
            data={"pin": app.config["NEW_PIN"], "next": target, "csrf_token": csrf(client)},
        )
        assert r.status_code == 302 and r.headers["Location"] == expected, target


def test_pin_attempts_are_rate_limited_per_client(make_app):
    app = make_app(host="0.0.0.0")
    clock = app.extensions[EXTENSION].limiter.clock
    client = app.test_client()
    pin = app.config["NEW_PIN"]
    wrong = "999999" if pin != "999999" else "888888"
    token = csrf(client)
    for _ in range(5):
        assert (
            "wrong PIN"
            in client.post("/unlock", data={"pin": wrong, "csrf_token": token}).data.decode()
        )
    r = client.post("/unlock", data={"pin": pin, "csrf_token": token})
    assert r.status_code == 403 and "too many wrong PINs: try again in 30 s" in r.data.decode()
    # Another address is not blocked by this one's failures.
    other = app.test_client()
    r = other.post(
        "/unlock",
        data={"pin": pin, "csrf_token": csrf(other)},
        environ_base={"REMOTE_ADDR": "10.0.0.9"},
    )
    assert r.status_code == 302
    clock.now += 31
    assert client.post("/unlock", data={"pin": pin, "csrf_token": token}).status_code == 302


def test_limiter_doubles_the_wait_and_caps_all_clients():
    clock = FakeClock()
    limiter = AttemptLimiter(
        free=2, base_wait=10, max_wait=100, global_limit=7, global_window=3600, clock=clock
    )
    for _ in range(2):
        assert limiter.wait("a") == 0
        limiter.failed("a")
    assert limiter.wait("a") == 10
    limiter.failed("a")
    assert limiter.wait("a") == 20
    limiter.failed("a")
    limiter.failed("a")
    assert limiter.wait("a") == 80
    limiter.failed("a")
    assert limiter.wait("a") == 100  # capped
    limiter.succeeded("a")
    assert limiter.wait("a") == 0
    # A seventh failure in the hour reaches the global cap: every address must wait.
    limiter.failed("b")
    assert limiter.wait("c") == pytest.approx(3600)
    clock.now += 3601
    assert limiter.wait("c") == 0


def test_cookies_are_httponly_and_samesite(client):
    r = client.get("/api/session")
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "companion_session=" in cookie


def test_security_headers_forbid_other_origins(client):
    r = client.get("/")
    csp = r.headers["Content-Security-Policy"]
    assert (
        "default-src 'self'" in csp
        and "script-src 'self'" in csp
        and "frame-ancestors 'none'" in csp
    )
    assert r.headers["X-Content-Type-Options"] == "nosniff"


def test_errors_are_messages_never_tracebacks(make_app):
    app = make_app(PROPAGATE_EXCEPTIONS=False)
    boom = Blueprint("boom", __name__)

    @boom.get("/boom")
    def crash():
        raise RuntimeError("secret internal detail")

    app.register_blueprint(boom)
    client = app.test_client()
    r = client.get("/boom")
    assert r.status_code == 500
    text = r.data.decode()
    assert (
        "something went wrong" in text
        and "secret internal detail" not in text
        and "Traceback" not in text
    )
    r = client.get("/no/such/page")
    assert r.status_code == 404 and "no page at /no/such/page" in r.data.decode()
    r = client.get("/api/no-such-endpoint")
    assert r.status_code == 404 and r.get_json() == {"error": "no page at /api/no-such-endpoint"}
    r = post_json(client, "/", {})
    assert r.status_code == 405 and "POST is not allowed on /" in r.get_json()["error"]


def test_sessions_survive_a_restart_but_not_a_pin_change(make_app):
    app = make_app(host="0.0.0.0")
    pin = app.config["NEW_PIN"]
    phone, other = app.test_client(), app.test_client()
    unlock(app, phone)
    unlock(app, other)
    restarted = make_app(host="0.0.0.0")
    phone_cookie = phone.get_cookie("companion_session")
    after = restarted.test_client()
    after.set_cookie("companion_session", phone_cookie.value)
    assert after.get("/api/session").get_json()["unlocked"] is True
    r = phone.post(
        "/settings/pin",
        data={"current": pin, "new": "24681357", "repeat": "24681357", "csrf_token": csrf(phone)},
    )
    assert r.status_code == 200 and "PIN changed" in r.data.decode()
    assert phone.get("/api/session").get_json()["unlocked"] is True
    assert other.get("/api/session").get_json()["unlocked"] is False
    r = other.post("/unlock", data={"pin": pin, "csrf_token": csrf(other)})
    assert "wrong PIN" in r.data.decode()
    assert (
        other.post("/unlock", data={"pin": "24681357", "csrf_token": csrf(other)}).status_code
        == 302
    )


def test_pin_change_rules(make_app):
    app = make_app(host="0.0.0.0")
    client = app.test_client()
    pin = app.config["NEW_PIN"]
    # Changing the PIN is a change: locked phones cannot.
    r = client.post(
        "/settings/pin",
        data={"current": pin, "new": "1234", "repeat": "1234", "csrf_token": csrf(client)},
    )
    assert r.status_code == 403
    unlock(app, client)
    cases = [
        (
            {"current": "0000" if pin != "0000" else "1111", "new": "4321", "repeat": "4321"},
            "current PIN is wrong",
        ),
        ({"current": pin, "new": "4321", "repeat": "4322"}, "the two entries differ"),
        ({"current": pin, "new": "43x1", "repeat": "43x1"}, "new PIN: use digits 0-9 only"),
        ({"current": "", "new": "4321", "repeat": "4321"}, "current PIN: enter the digits"),
    ]
    for form, message in cases:
        r = client.post("/settings/pin", data={**form, "csrf_token": csrf(client)})
        assert r.status_code == 400 and message in r.data.decode(), message


def test_loopback_pin_change_needs_no_current_pin(app, client):
    r = client.post(
        "/settings/pin", data={"new": "97531", "repeat": "97531", "csrf_token": csrf(client)}
    )
    assert r.status_code == 200 and "PIN changed" in r.data.decode()
    assert app.extensions[EXTENSION].store.verify("97531")


@pytest.mark.parametrize(
    "host,status",
    [
        ("localhost", 200),
        ("127.0.0.1:8080", 200),
        ("[::1]:8080", 200),
        ("evil.example", 403),
        ("evil.example:8080", 403),
        ("192.168.1.9:8080", 403),
    ],
)
def test_loopback_answers_only_loopback_names(client, host, status):
    # A page of another site whose name was pointed at 127.0.0.1 (DNS rebinding) gets nothing.
    r = client.get("/api/session", headers={"Host": host})
    assert r.status_code == status
    if status == 403:
        assert "answers only to its loopback address" in r.get_json()["error"]


def test_network_server_answers_any_name(make_app):
    client = make_app(host="0.0.0.0").test_client()
    assert client.get("/api/session", headers={"Host": "pi.local:8080"}).status_code == 200
