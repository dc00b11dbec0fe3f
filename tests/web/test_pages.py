"""Every page route through Flask's test client, with a real TableService where a page needs
one: a real SQLite store, a camera reading a rendered tray photo from a folder, and the
panel on gpiozero's MockFactory."""

from __future__ import annotations

import re
import time
import tomllib
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.config import load_config
from companion.service.table import TableService
from companion.store import Store
from firmware.files import ImageFolderSource
from firmware.panel import make_panel
from firmware.scene import layout, random_setup, render
from tests.calibration.photo import photo
from tests.web.conftest import csrf, post_json

STATIC = Path(__file__).resolve().parents[2] / "companion" / "web" / "static"
TRAY = {"red": 2, "blue": 3, "yellow": 1, "green": 2}


@pytest.fixture(scope="module")
def scene():
    rng = np.random.default_rng(7)
    setup = random_setup(rng, colours=("red", "blue", "yellow", "green"))
    poses = layout(setup, TRAY, "scattered", rng)
    return render(setup, poses, rng)


@pytest.fixture
def service(config, scene, tmp_path):
    folder = tmp_path / "camera"
    folder.mkdir()
    cv2.imwrite(str(folder / "tray.png"), scene.image)
    source = ImageFolderSource(folder, fps=20, loop=True, realtime=True)
    panel = make_panel("mock", config.panel.pins, 0.3)
    svc = TableService(config, Store.in_dir(config.data_dir), source, panel=panel)
    svc.start()
    deadline = time.monotonic() + 5
    while svc.latest_frame is None and time.monotonic() < deadline:
        time.sleep(0.02)
    yield svc
    svc.stop()
    panel.close()
    svc.store.close()


@pytest.fixture
def live(make_app, service):
    app = make_app(service=service)
    return app, app.test_client()


# ---- the pages themselves ----


@pytest.mark.parametrize(
    "url,marks",
    [
        (
            "/",
            [
                'id="now"',
                'id="counts"',
                'id="declare-form"',
                'id="ledger"',
                'id="undo"',
                'id="prime-tower"',
                "7 cubes of each player and\n      10 green farmers",
                'id="automaton-dice"',
            ],
        ),
        (
            "/game",
            [
                'id="new-form"',
                'id="board"',
                'id="filter-text"',
                'id="move-form"',
                'id="buy-form"',
                'id="new-physical-dice"',
                'id="automaton-dice"',
            ],
        ),
        ("/calibrate", ['id="canvas"', 'id="snap"', 'id="profiles"', 'data-step="6"']),
        (
            "/settings",
            [
                'id="settings-form"',
                'id="pin-form"',
                'name="csrf_token"',
                'name="panel.pins.led_ready"',
            ],
        ),
        ("/unlock", ["no PIN is needed"]),
    ],
)
def test_pages_render_without_a_service(client, url, marks):
    r = client.get(url)
    assert r.status_code == 200 and r.content_type.startswith("text/html")
    page = r.data.decode()
    for mark in marks:
        assert mark in page, mark
    assert re.search(r'<meta name="csrf-token" content="[\w-]{30,}">', page)


def test_table_page_names_the_configured_colours(client):
    page = client.get("/").data.decode()
    colours = re.search(r'<script type="application/json" id="colours">(.*?)</script>', page).group(
        1
    )
    assert '"farmer": "green"' in colours and '"red"' in colours


# ---- no external URL anywhere ----


def _external(text: str) -> list[str]:
    return re.findall(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s\"'<>]*", text, re.I)


def test_no_page_or_asset_names_another_server(live):
    _, client = live
    for url in ("/", "/game", "/calibrate", "/settings", "/unlock"):
        page = client.get(url).data.decode()
        assert not _external(page), (url, _external(page))
        for asset in re.findall(r'(?:src|href)="([^"]+)"', page):
            assert (
                asset.startswith("/") and not asset.startswith("//") or asset.startswith("data:")
            ), asset
    files = list(STATIC.rglob("*"))
    assert any(f.suffix == ".js" for f in files) and any(f.suffix == ".css" for f in files)
    for f in files:
        if f.is_file():
            text = client.get(f"/static/{f.relative_to(STATIC)}").data.decode()
            assert not _external(text), (f.name, _external(text))
            assert not re.search(r"https?:", text), f.name


# ---- the outcome preview and the board ----


def test_outcome_preview_uses_the_rules(client):
    r = post_json(
        client,
        "/api/pages/outcome",
        {
            "attacker": "blue",
            "defender": "red",
            "thrown": {"blue": 4, "red": 3},
            "emerged": {"blue": 3, "red": 4, "green": 1},
        },
    )
    o = r.get_json()["outcome"]
    assert o["result"] == "held" and o["defender_strength"] == 5 and o["to_province"] == {"red": 2}


@pytest.mark.parametrize(
    "body,message",
    [
        ([1, 2], "expected a JSON object"),
        ({"attacker": "blue", "defender": "red", "thrown": {"blue": 2}}, "missing key 'emerged'"),
        (
            {"attacker": "blue", "defender": "red", "thrown": {"blue": 2}, "emerged": {"red": -1}},
            "negative",
        ),
        (
            {"attacker": "blue", "defender": "blue", "thrown": {"blue": 2}, "emerged": {}},
            "also the attacker",
        ),
        (
            {"attacker": "blue", "defender": None, "thrown": {"blue": 2}, "emerged": {}, "x": 1},
            "unknown key 'x'",
        ),
    ],
)
def test_outcome_preview_bad_input(client, body, message):
    r = post_json(client, "/api/pages/outcome", body)
    assert r.status_code == 400 and message in r.get_json()["error"]


def test_board_lists_the_map(client):
    b = client.get("/api/pages/board").get_json()
    assert b["map"] == "risk-europe" and len(b["territories"]) == 49
    england = next(t for t in b["territories"] if t["name"] == "England")
    assert england["city"] == "London" and england["tax"] == 3 and "Wales" in england["adjacent"]
    r = client.get("/api/pages/board?map=../../etc/passwd")
    assert r.status_code == 400 and "not a shipped map" in r.get_json()["error"]


# ---- settings ----


def _settings_form(client, **changes):
    page = client.get("/settings").data.decode()
    form = dict(re.findall(r'<input id="[^"]+" name="([^"]+)"[^>]*value="([^"]*)"', page))
    form.update({"panel.mode": "mock", "speech.enabled": "on", "csrf_token": csrf(client)})
    form.update(changes)
    return form


def test_settings_save_writes_a_config_the_service_accepts(make_app, tmp_path):
    path = tmp_path / "conf" / "config.toml"
    app = make_app(COMPANION_CONFIG_PATH=str(path))
    client = app.test_client()
    r = client.post(
        "/settings",
        data=_settings_form(
            client,
            **{
                "camera.fps": "10",
                "colours.players": "Red, blue, orange",
                "panel.pins.button_next": "24",
                "speech.words_per_minute": "200",
            },
        ),
    )
    assert r.status_code == 200 and "Saved to" in r.data.decode()
    config, sources = load_config(path)
    assert config.camera.fps == 10 and config.colours.players == ("red", "blue", "orange")
    assert config.panel.pins["button_next"] == 24 and config.speech.words_per_minute == 200
    assert sources["camera.fps"].startswith("file")
    # Keys the page does not show survive a save.
    path.write_text(path.read_text() + "\n[web]\nport = 9000\n")
    client.post("/settings", data=_settings_form(client))
    assert tomllib.loads(path.read_text())["web"]["port"] == 9000


def test_settings_switch_the_odds_off_and_on(make_app, tmp_path):
    path = tmp_path / "config.toml"
    client = make_app(COMPANION_CONFIG_PATH=str(path)).test_client()
    assert 'name="game.show_odds" checked' in client.get("/settings").data.decode()  # default on
    client.post("/settings", data=_settings_form(client))  # the box left unticked
    assert load_config(path)[0].game.show_odds is False
    client.post("/settings", data=_settings_form(client, **{"game.show_odds": "on"}))
    assert load_config(path)[0].game.show_odds is True


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"camera.fps": "fast"}, "frames per second: expected a whole number, got 'fast'"),
        ({"camera.fps": "500"}, "[camera] fps: expected 1 to 120, got 500"),
        ({"colours.farmer": "red"}, "farmer: 'red' is also a player colour"),
        ({"colours.players": "red"}, "at least two player colours"),
        ({"panel.pins.led_ready": "6"}, "BCM 6 is given to led_ready and led_counting"),
        ({"panel.pins.led_ready": "40"}, "BCM 40 is not a GPIO"),
        ({"panel.mode": "laser"}, "expected one of auto, gpio, mock, off"),
        ({"panel.long_press": "0"}, "long_press: expected 0.2 to 10"),
        ({"camera.source": ""}, "[camera] source: expected a non-empty text"),
    ],
)
def test_settings_bad_input_is_named_and_nothing_is_lost(make_app, tmp_path, changes, message):
    path = tmp_path / "config.toml"
    path.write_text("[camera]\nfps = 12\n")
    app = make_app(COMPANION_CONFIG_PATH=str(path))
    client = app.test_client()
    form = _settings_form(client, **changes)
    r = client.post("/settings", data=form)
    page = r.data.decode()
    assert r.status_code == 400 and message in page.replace("&#39;", "'").replace("&#34;", '"'), (
        page[:3000]
    )
    assert path.read_text() == "[camera]\nfps = 12\n"
    for key, value in changes.items():
        if key != "panel.mode":
            assert f'value="{value}"' in page  # what was typed is still in the form


def test_settings_without_csrf_token_is_refused(client, tmp_path):
    form = _settings_form(client)
    del form["csrf_token"]
    r = client.post("/settings", data=form)
    assert r.status_code == 403 and "reload the page" in r.data.decode()


def test_virtual_panel_mirrors_leds_and_presses_buttons(live, service):
    app, client = live
    page = client.get("/settings").data.decode()
    assert 'id="virtual-panel"' in page and "hold recount: undo" in page
    service.panel.show_phase("idle")
    state = client.get("/settings/panel").get_json()
    assert state["modes"]["ready"] == "on" and state["leds"]["ready"] is True
    pressed = []
    service.panel.when_button = lambda name, long: pressed.append((name, long))
    r = post_json(client, "/settings/panel/press", {"name": "confirm"})
    assert r.status_code == 200
    r = post_json(client, "/settings/panel/press", {"name": "next", "long": True})
    assert r.status_code == 200
    assert pressed == [("confirm", False), ("next", True)]
    for body, message in (
        ({"name": "explode"}, "expected one of arm, confirm"),
        ({"name": "arm", "long": "yes"}, "long: expected true or false"),
    ):
        r = post_json(client, "/settings/panel/press", body)
        assert r.status_code == 400 and message in r.get_json()["error"]


def test_panel_endpoints_without_a_panel(client):
    r = client.get("/settings/panel", headers={"Accept": "application/json"})
    assert r.status_code == 400 and "no panel" in r.get_json()["error"]


# ---- the calibration wizard's server side ----


def test_calibration_wizard_end_to_end(live, scene, service, config):
    app, client = live
    assert client.get("/calibrate/frame.jpg").content_type == "image/jpeg"
    shot = post_json(client, "/calibrate/snapshot").get_json()
    assert (shot["width"], shot["height"]) == (640, 480)
    img = client.get(f"/calibrate/frame/{shot['id']}.jpg")
    assert img.status_code == 200 and img.data[:2] == b"\xff\xd8"
    lock = post_json(client, "/calibrate/lock").get_json()
    assert "cannot lock" in lock["text"]  # an image folder has no exposure to lock
    samples = {c: [list(p) for p in pts[:2]] for c, pts in scene.clicks.items()}
    r = post_json(
        client,
        "/calibrate/build",
        {"snapshot": shot["id"], "corners": scene.corners.tolist(), "samples": samples},
    )
    assert r.status_code == 200, r.get_json()
    built = r.get_json()
    assert built["detected"]["counts"] == TRAY and built["detected"]["unknown"] == 0
    assert {c["colour"] for c in built["report"]["colours"]} == set(TRAY)
    assert client.get(built["image"]).data[:2] == b"\xff\xd8"
    test = post_json(client, "/calibrate/test-drop", {"draft": built["draft"]}).get_json()
    assert test["counted"]["counts"] == TRAY and test["truth"] is None
    r = post_json(client, "/calibrate/save", {"draft": built["draft"], "name": "evening light"})
    assert r.status_code == 200 and r.get_json()["saved"] == "evening light"
    assert (Path(config.data_dir) / "profiles" / "evening light.json").is_file()
    assert service.profile_path.is_file() and service.profile is not None
    assert "evening light" in client.get("/calibrate").data.decode()
    active = service.profile_path.read_bytes()
    service.profile_path.unlink()
    r = post_json(client, "/calibrate/restore", {"name": "evening light"})
    assert r.status_code == 200 and service.profile_path.read_bytes() == active


@pytest.mark.parametrize(
    "url,body,message",
    [
        (
            "/calibrate/build",
            {"snapshot": "nope", "corners": [], "samples": {}},
            "no longer in memory",
        ),
        (
            "/calibrate/build",
            {"corners": [[1, 1]] * 3, "samples": {"red": [[5, 5]]}},
            "no longer in memory",
        ),
        ("/calibrate/test-drop", {"draft": "gone"}, "no longer in memory"),
        ("/calibrate/save", {"draft": "gone", "name": "x"}, "no longer in memory"),
        ("/calibrate/restore", {"name": "../../etc/passwd"}, "profile name: 1 to 40 letters"),
        ("/calibrate/restore", {"name": "never saved"}, "no saved profile named 'never saved'"),
        ("/calibrate/demo-hints", None, "only for the simulated tray"),
        ("/calibrate/clear", {}, "take the cubes out of the tray by hand"),
        ("/calibrate/demo-layout", {}, "lay out one or two cubes"),
    ],
)
def test_calibration_bad_requests(live, url, body, message):
    _, client = live
    r = (
        client.get(url, headers={"Accept": "application/json"})
        if body is None
        else post_json(client, url, body)
    )
    assert r.status_code == 400 and message in r.get_json()["error"], r.get_json()


def test_calibration_build_checks_the_taps(live):
    _, client = live
    shot = post_json(client, "/calibrate/snapshot").get_json()["id"]
    corners = [[100, 100], [500, 100], [500, 400], [100, 400]]
    for body, message in (
        (
            {"corners": corners[:3], "samples": {"red": [[200, 200]]}},
            "tap all 4 tray corners (got 3)",
        ),
        ({"corners": corners, "samples": {}}, "tap at least one cube of each colour"),
        (
            {
                "corners": [[100, 100], [900, 100], [500, 400], [100, 400]],
                "samples": {"red": [[200, 200]]},
            },
            "outside the 640x480 picture",
        ),
        (
            {
                "corners": [[100, 100], [640.5, 100], [500, 400], [100, 400]],
                "samples": {"red": [[200, 200]]},
            },
            "corners: point (640.5, 100) is outside the 640x480 picture",
        ),
        (
            {"corners": corners, "samples": {"red": [[640, 200]]}},
            "samples for red: point (640, 200) is outside the 640x480 picture",
        ),
        ({"corners": corners, "samples": {"red": ["a", "b"]}}, "expected [x, y] numbers"),
        ({"corners": corners, "samples": {"red": [[600, 450]]}}, "outside"),
    ):
        r = post_json(client, "/calibrate/build", {"snapshot": shot, **body})
        assert r.status_code == 400 and message in r.get_json()["error"], (message, r.get_json())


def test_calibration_takes_tray_corners_on_the_pictures_edge(live, scene):
    # A tray that fills the picture: its corners on the outer edge of the last pixel row and
    # column are inside the picture (here the whole picture is taken for the tray).
    _, client = live
    shot = post_json(client, "/calibrate/snapshot").get_json()["id"]
    samples = {c: [list(p) for p in pts[:2]] for c, pts in scene.clicks.items()}
    whole = [[0, 0], [640, 0], [640, 480], [0, 480]]
    r = post_json(
        client, "/calibrate/build", {"snapshot": shot, "corners": whole, "samples": samples}
    )
    assert r.status_code == 200, r.get_json()
    assert {c["colour"] for c in r.get_json()["report"]["colours"]} == set(samples)


class TestAGreyTray:
    """A black cube on a light grey tray, photographed (tests/calibration/photo.py)."""

    @pytest.fixture
    def scene(self):
        cubes = [
            ("black", (52, 50, 50), (150, 130)),
            ("black", (52, 50, 50), (330, 300)),
            ("red", (40, 40, 170), (480, 140)),
            ("red", (40, 40, 170), (230, 360)),
        ]
        return photo((176, 176, 172), cubes, grain=30.0)

    def test_the_calibrate_page_accepts_black_on_a_grey_tray_and_refuses_the_floor(
        self, live, scene
    ):
        _, client = live
        shot = post_json(client, "/calibrate/snapshot").get_json()["id"]
        samples = {c: [list(p) for p in pts] for c, pts in scene.clicks.items()}
        body = {"snapshot": shot, "corners": scene.corners.tolist(), "samples": samples}
        r = post_json(client, "/calibrate/build", body)
        assert r.status_code == 200, r.get_json()
        built = r.get_json()
        assert built["detected"]["counts"] == {"black": 2, "red": 2}
        assert [c["colour"] for c in built["report"]["colours"]] == ["black", "red"]
        [line] = [x for x in built["report_lines"] if x.strip().startswith("black:")]
        assert "2 clicked" in line and "from the tray" in line
        x, y = scene.floor
        r = post_json(
            client, "/calibrate/build", {**body, "samples": {**samples, "black": [[x, y]]}}
        )
        assert r.status_code == 400
        assert f"click for black at ({x:g},{y:g}) is not on a cube" in r.get_json()["error"]


def test_calibration_without_a_service(client):
    r = post_json(client, "/calibrate/snapshot")
    assert r.status_code == 400 and "not running" in r.get_json()["error"]


@pytest.fixture
def sim_service(config):
    from firmware.simtray import SimulatedTray

    source = SimulatedTray(seed=5, realtime=True, leftovers={})
    svc = TableService(config, Store.in_dir(config.data_dir), source)
    svc.start()
    deadline = time.monotonic() + 5
    while svc.latest_frame is None and time.monotonic() < deadline:
        time.sleep(0.02)
    yield svc
    svc.stop()
    svc.store.close()


def test_calibration_on_the_simulated_tray(make_app, sim_service):
    """The demo helpers: lay cubes out, hint where to tap, test-drop with the truth, empty the
    tray."""
    client = make_app(service=sim_service).test_client()
    r = client.get("/calibrate/demo-hints", headers={"Accept": "application/json"})
    assert r.status_code == 400 and "put cubes in the simulated tray first" in r.get_json()["error"]
    laid = post_json(client, "/calibrate/demo-layout").get_json()["colours"]
    assert sim_service.source.contents() == {c: 1 for c in laid}
    hints = client.get("/calibrate/demo-hints").get_json()
    assert len(hints["corners"]) == 4 and set(hints["samples"]) == set(laid)
    time.sleep(0.3)  # a frame of the laid-out tray
    shot = post_json(client, "/calibrate/snapshot").get_json()["id"]
    lock = post_json(client, "/calibrate/lock").get_json()
    assert lock["controls"] == {} and "nothing to lock" in lock["text"]
    built = post_json(
        client,
        "/calibrate/build",
        {"snapshot": shot, "corners": hints["corners"], "samples": hints["samples"]},
    ).get_json()
    # (Exact counting is the image-folder wizard test's; here the demo helpers are under test.)
    assert {q["colour"] for q in built["report"]["colours"]} == set(laid)
    bad = post_json(
        client,
        "/calibrate/build",
        {
            "snapshot": shot,
            "corners": hints["corners"],
            "samples": {"re d": hints["samples"][laid[0]]},
        },
    )
    assert bad.status_code == 400 and "colour name 're d'" in bad.get_json()["error"]
    test = post_json(client, "/calibrate/test-drop", {"draft": built["draft"]}).get_json()
    assert test["truth"] == {c: n for c, n in sorted(sim_service.source.contents().items()) if n}
    assert sum(test["truth"].values()) > 0
    counted = {c: n for c, n in test["counted"]["counts"].items() if n}
    assert test["correct"] == (counted == test["truth"] and test["counted"]["unknown"] == 0)
    assert post_json(client, "/calibrate/clear").status_code == 200
    assert sim_service.source.contents() == {}


def test_test_drop_refused_while_a_battle_is_open(make_app, sim_service):
    client = make_app(service=sim_service).test_client()
    post_json(client, "/calibrate/demo-layout")
    hints = client.get("/calibrate/demo-hints").get_json()
    time.sleep(0.3)
    shot = post_json(client, "/calibrate/snapshot").get_json()["id"]
    draft = post_json(
        client,
        "/calibrate/build",
        {"snapshot": shot, "corners": hints["corners"], "samples": hints["samples"]},
    ).get_json()["draft"]
    assert (
        post_json(
            client,
            "/api/battles",
            {"attacker": "blue", "defender": "red", "thrown": {"blue": 1, "red": 1}},
        ).status_code
        == 201
    )
    r = post_json(client, "/calibrate/test-drop", {"draft": draft})
    assert r.status_code == 400 and "a battle is open" in r.get_json()["error"]
