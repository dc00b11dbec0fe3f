"""The pages in real headless Chromium against a real server (`companion serve --demo`,
waitress, the simulated tray), driven like a person: clicks, taps on the picture, forms.

Screenshots of every page at phone and laptop widths go to test-artifacts/screenshots/.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from companion.benchmarks.service import DEMO_CONFIG, ServerProcess, free_port

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}
PAGES = {"table": "/", "game": "/game", "calibrate": "/calibrate", "settings": "/settings"}


def _serve(data_dir):
    server = ServerProcess(data_dir, seed=3).start()
    try:
        yield server
    finally:
        # Killed, not stopped: a clean shutdown is the service tests' business, and a killed
        # server loses nothing (every step is on disk before it is acknowledged).
        server.kill()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the battle, the game and the page tour, which run in that order."""
    yield from _serve(tmp_path_factory.mktemp("web") / "data")


@pytest.fixture
def fresh_server(tmp_path):
    """A server of its own, for a test that changes the calibration and the tray."""
    yield from _serve(tmp_path / "data")


class Watched:
    """A page whose requests and script errors are recorded: the test fails on any script
    error and on any request to another server."""

    def __init__(self, browser, base: str, viewport):
        self.context = browser.new_context(viewport=viewport)
        self.page = self.context.new_page()
        self.base = base
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        # A 4xx answer the page shows as a message is expected; a 5xx or a script error is not.
        self.page.on(
            "console",
            lambda m: (
                m.type == "error" and "status of 4" not in m.text and self.errors.append(m.text)
            ),
        )
        self.page.set_default_timeout(15000)

    def goto(self, path: str):
        # The MJPEG preview never finishes loading: wait for the document, not every image.
        self.page.goto(self.base + path, wait_until="domcontentloaded")
        self.page.wait_for_load_state("load")
        return self.page

    def shot(self, name: str):
        SHOTS.mkdir(parents=True, exist_ok=True)
        # From the top, so the sticky header sits where a person sees it.
        self.page.evaluate("window.scrollTo(0, 0)")
        width = self.page.viewport_size["width"]
        self.page.screenshot(
            path=str(SHOTS / f"{name}-{'phone' if width < 600 else 'laptop'}.png"), full_page=True
        )

    def check(self):
        outside = [
            u for u in self.requests if not (u.startswith(self.base) or u.startswith("data:"))
        ]
        assert not outside, f"requests to other servers: {outside}"
        assert not self.errors, f"script errors: {self.errors}"

    def close(self):
        self.context.close()


@pytest.fixture
def phone(browser, server):
    w = Watched(browser, server.url, PHONE)
    yield w
    w.close()


@pytest.fixture
def laptop(browser, server):
    w = Watched(browser, server.url, LAPTOP)
    yield w
    w.close()


def _tap(page, canvas, x: float, y: float, width: int, height: int):
    """Click the canvas where image pixel (x, y) is shown."""
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    page.mouse.click(box["x"] + x * box["width"] / width, box["y"] + y * box["height"] / height)


def test_calibration_wizard_makes_a_profile_that_counts_a_drop(browser, fresh_server):
    server = fresh_server
    phone = Watched(browser, server.url, PHONE)
    try:
        _wizard(phone, server)
    finally:
        phone.close()


def _wizard(phone, server):
    page = phone.goto("/calibrate")
    page.click("#lock")
    page.wait_for_selector("#lock-result:has-text('nothing to lock')")
    page.click("#layout")
    page.wait_for_selector("#flash:has-text('One cube of each colour')")
    page.wait_for_timeout(500)  # a few camera frames of the laid-out tray
    page.click("#snap")
    canvas = page.wait_for_selector("#canvas:visible")
    hints = page.evaluate("fetch('/calibrate/demo-hints').then(r => r.json())")
    size = page.evaluate(
        "[document.getElementById('canvas').width, document.getElementById('canvas').height]"
    )
    corners = hints["corners"]
    # The first corner is tapped off its mark, then dragged onto it.
    (x0, y0) = corners[0]
    _tap(page, canvas, x0 + 25, y0 + 18, *size)
    for x, y in corners[1:]:
        _tap(page, canvas, x, y, *size)
    assert page.inner_text("#corner-count").startswith("4 of 4")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    sx, sy = box["width"] / size[0], box["height"] / size[1]
    page.mouse.move(box["x"] + (x0 + 25) * sx, box["y"] + (y0 + 18) * sy)
    page.mouse.down()
    page.mouse.move(box["x"] + (x0 + 10) * sx, box["y"] + (y0 + 8) * sy, steps=4)
    page.mouse.move(box["x"] + x0 * sx, box["y"] + y0 * sy, steps=4)
    page.mouse.up()
    phone.shot("calibrate-corners")
    page.click("#corners-done")
    for colour, points in hints["samples"].items():
        page.click(f"#palette button[data-colour='{colour}']")
        for x, y in points:
            _tap(page, canvas, x, y, *size)
    assert "Not tapped yet" not in page.inner_text("#sample-list")
    page.click("#build")
    found = page.wait_for_selector("#detected-counts").inner_text()
    for colour in hints["samples"]:
        assert f"1 {colour}" in found, found
    assert "unknown" not in found
    phone.shot("calibrate-check")
    page.click("#to-test")
    # A drop can land in a pile that hides a cube from any camera; the page then says
    # "Not right" next to the truth. A person drops again: up to four drops, one must count right
    # (this server's first drop always buries a green cube under the others).
    verdicts = []
    for _ in range(4):
        with page.expect_response("**/calibrate/test-drop", timeout=20000) as answer:
            page.click("#test")
        page.wait_for_selector("#test-verdict")
        verdict = page.inner_text("#test-verdict")
        # The page passes on the counter's doubt, and only then.
        assert page.locator("#test-doubt").count() == int(
            not answer.value.json()["counted"]["sure"]
        )
        counted, truth = page.inner_text("#test-counts"), page.inner_text("#test-truth")
        # The verdict agrees with what was counted and what lies in the tray.
        assert verdict.startswith("Correct") == (
            counted[len("Counted ") :] == truth[len("In the tray: ") :]
        ), (verdict, counted, truth)
        verdicts.append((counted, truth))
        if verdict.startswith("Correct"):
            break
    page.locator("#test-result img").evaluate(
        "img => img.complete || new Promise(r => { img.onload = r; })"
    )
    phone.shot("calibrate-test-drop")
    assert verdict.startswith("Correct"), verdicts
    page.click("#to-save")
    page.fill("#profile-name", "browser test")
    page.click("#save-form button[type=submit]")
    page.wait_for_selector("#flash:has-text('Saved')")
    phone.shot("calibrate-saved")
    profile = server.data_dir / "profiles" / "browser test.json"
    assert json.loads(profile.read_text())["format"] == "tower-companion-calibration"
    # The profile the test drop counted right is the one the service now counts with.
    assert (server.data_dir / "calibration.json").read_bytes() == profile.read_bytes()
    assert server.get("/api/state")[1]["calibrated"] is True
    # Restoring an earlier profile from the list works the same way.
    page.click("#profiles button.restore[data-name='browser test']")
    page.wait_for_selector("#flash:has-text('Restored')")
    phone.check()


def test_battle_from_declaration_to_confirmed_outcome_with_a_correction(phone, laptop, server):
    page = phone.goto("/")
    page.select_option("#attacker", "blue")
    page.fill("#attacker-armies", "4")
    page.select_option("#defender", "red")
    page.fill("#defender-armies", "3")
    page.click("#declare-submit")
    # In the demo the simulated tray drops the cubes at once, so "Throw 4 blue, 3 red" is brief:
    # what goes into the tower stays on the battle card.
    page.wait_for_selector("#battle-into:has-text('Into the tower: 4 blue and 3 red')")
    page.wait_for_selector("#battle-status:has-text('counted')", timeout=25000)
    counted = server.get("/api/state")[1]["battle"]
    battle_id, emerged = counted["id"], counted["emerged"]
    shown = {
        row.get_attribute("data-colour"): int(row.query_selector(".value").inner_text())
        for row in page.query_selector_all(".stepper")
    }
    assert {c: n for c, n in shown.items() if n} == emerged
    assert page.inner_text("#outcome")
    # The page says whether the camera doubts its count, as the record does.
    assert ("not sure" in page.inner_text("#battle-confidence")) == counted["unsure"]
    assert page.locator("#battle-unsure").count() == int(counted["unsure"])
    phone.shot("table-counted")
    laptop.goto("/").wait_for_selector("#battle-status:has-text('counted')")
    laptop.shot("table-counted")
    # The table saw one more red cube than the camera: correct it, the outcome follows.
    page.click("button[aria-label='one red more']")
    red = shown.get("red", 0) + 1
    page.wait_for_selector(f".stepper[data-colour='red'].changed .value:text-is('{red}')")
    corrected = {**emerged, "red": red}
    preview = server.post(
        "/api/pages/outcome",
        {
            "attacker": "blue",
            "defender": "red",
            "thrown": counted["thrown"],
            "cup": counted["cup"],
            "emerged": corrected,
        },
    )[1]["outcome"]
    page.wait_for_selector(f"#outcome:has-text('red {preview['defender_strength']}')")
    phone.shot("table-corrected")
    page.click("#confirm")
    page.wait_for_selector("#declare:visible")
    applied = server.get(f"/api/battles/{battle_id}")[1]
    assert applied["status"] == "applied" and applied["corrected"] is True
    assert applied["emerged"] == {c: n for c, n in sorted(corrected.items()) if n}
    assert applied["outcome"]["result"] == preview["result"]
    page.wait_for_selector(f"#history li:has-text('Battle {battle_id} confirmed')")
    # The live page of the other device followed without a reload.
    laptop.page.wait_for_selector("#declare:visible")
    laptop.page.wait_for_selector(f"#history li:has-text('Battle {battle_id} confirmed')")
    ledger = server.get("/api/state")[1]["ledger"]
    for colour, n in ledger["cup"].items():
        assert laptop.page.inner_text(f"#ledger tr[data-colour='{colour}'] td:nth-child(5)") == str(
            n
        )
    phone.shot("table-confirmed")
    # Undo takes the confirmed battle back: the ledger is as before it.
    before = server.get("/api/state")[1]
    page.click("#undo")
    page.wait_for_selector(f"#history li:has-text('Undone: Battle {battle_id} confirmed')")
    after = server.get("/api/state")[1]
    assert server.get(f"/api/battles/{battle_id}")[1]["status"] == "undone"
    assert after["ledger"]["cup"] == {} and after["ledger"] != before["ledger"]
    # Recount re-reads the tray; cancel (after the page asks) drops the battle, changing nothing.
    page.click("#declare-submit")
    page.wait_for_selector("#battle-status:has-text('counted')", timeout=25000)
    second = server.get("/api/state")[1]["battle"]["id"]
    page.click("#recount")
    page.wait_for_selector("#battle-status:has-text('counted')")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#cancel")
    page.wait_for_selector("#declare:visible")
    assert server.get(f"/api/battles/{second}")[1]["status"] == "cancelled"
    assert server.get("/api/state")[1]["ledger"] == after["ledger"]
    phone.check()
    laptop.check()


def test_the_table_page_primes_the_tower(phone, server):
    page = phone.goto("/")
    page.wait_for_selector("#prime:visible")
    tower = server.get("/api/state")[1]["ledger"]["tower"]
    page.click("#prime-tower")
    page.wait_for_selector("#battle-title:text-is('Priming the tower')")
    record = server.get("/api/state")[1]["battle"]
    assert record["kind"] == "prime" and not page.is_visible("#prime")
    throw = ", ".join(f"7 {c}" for c in record["thrown"])
    assert page.inner_text("#battle-into") == (
        f"Prime the tower: throw {throw} and 10 green (green = the farmers); "
        "what comes out goes back to the supply."
    )
    page.wait_for_selector("#battle-status:has-text('counted')", timeout=25000)
    emerged = server.get("/api/state")[1]["battle"]["emerged"]
    into = sum(record["into_tower"].values())
    page.wait_for_selector(
        f"#outcome:has-text('{into - sum(emerged.values())} of the {into} cubes stay in the tower')"
    )
    assert page.inner_text("#outcome .result").startswith("Back to the supply: ")
    assert page.inner_text("#cancel") == "Cancel priming"
    # One more farmer came out than the camera saw: the table corrects it, then confirms.
    page.click("button[aria-label='one green more']")
    page.wait_for_selector(
        f"#outcome:has-text('{into - sum(emerged.values()) - 1} of the {into} cubes')"
    )
    phone.shot("table-priming")
    page.click("#confirm")
    page.wait_for_selector("#declare:visible")
    page.wait_for_selector("#history li:has-text('Tower primed')")
    state = server.get("/api/state")[1]
    assert state["primed"] is True and not page.is_visible("#prime")
    corrected = {**emerged, "green": emerged.get("green", 0) + 1}
    added = {c: state["ledger"]["tower"].get(c, 0) - tower.get(c, 0) for c in record["into_tower"]}
    assert added == {c: n - corrected.get(c, 0) for c, n in record["into_tower"].items()}
    phone.check()


def test_a_declared_battle_shows_its_odds(phone, server):
    page = phone.goto("/")
    page.select_option("#attacker", "blue")
    page.fill("#attacker-armies", "5")
    page.select_option("#defender", "red")
    page.fill("#defender-armies", "2")
    page.click("#declare-submit")
    page.wait_for_selector("#battle-odds:visible")
    battle_id = server.get("/api/state")[1]["battle"]["id"]
    odds = server.get(f"/api/battles/{battle_id}")[1]["odds"]
    c = {r: round(p * 100) for r, p in odds["chances"].items()}
    assert " ".join(page.inner_text("#odds-chances").split()) == (
        f"Odds before the throw: blue conquers {c['conquered']} %, held {c['held']} %, "
        f"devastated {c['devastated']} %."
    )
    assert page.inner_text("#odds-expected").startswith("Expected out of the tower: ")
    assert f"{odds['expected']['blue']:.1f} blue" in page.inner_text("#odds-expected")
    # The priming before was the tower's first throw the companion saw.
    assert page.inner_text("#odds-tower").startswith("This tower keeps about ")
    throws = odds["stickiness"]["throws"]
    assert page.inner_text("#odds-tower").endswith(f"from {throws} throw{'s' * (throws != 1)}.")
    phone.shot("table-odds")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#cancel")
    page.wait_for_selector("#declare:visible")
    phone.check()


def fill_new_game(page, seed: int) -> None:
    """The Game page's new-game form: red a person, blue an automaton, this seed."""
    page.select_option("select[name='colour-0']", "red")
    page.select_option("select[name='role-0']", "player")
    page.select_option("select[name='colour-1']", "blue")
    page.select_option("select[name='role-1']", "automaton")
    page.fill("#new-seed", str(seed))


def test_new_game_set_up_and_an_automaton_turn_confirmed(laptop, phone, server):
    page = laptop.goto("/game")
    page.wait_for_selector("#new-details[open]")
    fill_new_game(page, 7)
    page.click("#new-submit")
    page.wait_for_selector("#now:has-text('Round 1')")
    game = server.get("/api/state")[1]["game"]
    assert set(game["players"]) == {"red", "blue"} and game["players"]["blue"]["automaton"] is True
    # The board: every territory, filterable; the solo setup is on it.
    assert len(page.query_selector_all("#board tbody tr")) == 49
    capital = game["players"]["red"]["capital"]
    page.fill("#filter-text", capital)
    rows = page.query_selector_all("#board tbody tr")
    assert [r.get_attribute("data-territory") for r in rows] == [capital]
    assert "red:" in rows[0].inner_text() and "footm" in rows[0].inner_text()
    page.fill("#filter-text", "")
    page.select_option("#filter-owner", "blue")
    owned = {r.get_attribute("data-territory") for r in page.query_selector_all("#board tbody tr")}
    assert owned == {t for t, v in game["territories"].items() if "blue" in v["units"]}
    page.select_option("#filter-owner", "")
    laptop.shot("game-started")
    # A move the rules refuse is named, and nothing changes.
    page.select_option("#move-player", "red")
    page.select_option("#move-from", capital)
    page.fill("#move-footman", "99")
    page.click("#move-submit")
    # (an error's flash, not the "New game set up." one, which may still be showing)
    flash = page.wait_for_selector("#flash:not(.ok):visible").inner_text()
    assert "footm" in flash, flash
    assert server.get("/api/state")[1]["game"]["territories"] == game["territories"]
    page.fill("#move-footman", "0")
    # Purchases go through the rules too: too dear is refused by name, a fair one is made.
    page.select_option("#buy-player", "red")
    page.select_option("#buy-where", capital)
    page.fill("#buy-castle", "1")
    page.click("#buy-submit")
    page.wait_for_selector("#flash:has-text('costs 12 coins')")
    page.fill("#buy-castle", "0")
    page.fill("#buy-footman", "2")
    page.click("#buy-submit")
    page.wait_for_selector("#flash:has-text('Bought')")
    page.wait_for_selector("#players tr[data-colour='red'] td:nth-child(2):text-is('3')")
    bought = server.get("/api/state")[1]["game"]
    assert (
        bought["territories"][capital]["units"]["red"]["footman"]
        == game["territories"][capital]["units"]["red"]["footman"] + 2
    )
    # Step through the round until the automaton has decided; its move waits for the table.
    # Each click waits for the step before it to be answered: once the automaton has
    # decided, the button stays disabled, and a guessed pause can end before the page shows it.
    for _ in range(8):
        page.wait_for_selector("#automaton:visible, #automaton-next:enabled:not([aria-busy])")
        if page.is_visible("#automaton"):
            break
        with page.expect_response(lambda r: r.request.method == "POST"):
            page.click("#automaton-next")
    page.wait_for_selector("#automaton:visible")
    turn = server.get("/api/state")[1]["automaton"]
    assert turn["status"] == "waiting" and turn["player"] == "blue"
    assert page.inner_text("#automaton-text") == turn["text"]
    laptop.shot("game-automaton")
    # The table page shows the same announcement, and its confirm button applies the move.
    table = phone.goto("/")
    table.wait_for_selector(f"#automaton-text:has-text('{turn['text'][:30]}')")
    phone.shot("table-automaton")
    table.click("#automaton-confirm")
    table.wait_for_selector("#automaton-confirm", state="hidden")
    state = server.get("/api/state")[1]
    assert state["automaton"]["status"] == "done"
    assert state["history"][-1]["text"] == f"Confirmed: {turn['text']}"
    # The game page followed live, without a reload.
    page.wait_for_selector("#automaton", state="hidden")
    page.wait_for_selector(f"#history li:has-text('Confirmed: {turn['text'][:30]}')")
    laptop.check()
    phone.check()


def test_the_game_is_downloaded_summed_up_and_imported_back(laptop, server, tmp_path):
    page = laptop.goto("/game")
    with page.expect_download() as download:
        page.click("#export-link")
    path = tmp_path / "game.json"
    download.value.save_as(path)
    exported = json.loads(path.read_text())
    state = server.get("/api/state")[1]
    assert exported["format"] == "tower-companion-game"
    assert exported["steps"][-1]["id"] == state["history"][-1]["id"]
    # The summary so far: its own page to print, without the navigation.
    page.click("#summary-link")
    page.wait_for_selector("#summary-title:text-is('The game so far')")
    assert page.locator("nav").count() == 0
    assert page.inner_text("#summary-result").startswith(
        f"Round {state['game']['round']}, no winner yet"
    )
    rows = page.query_selector_all("#summary-players tbody tr")
    assert {r.get_attribute("data-colour") for r in rows} == set(state["game"]["players"])
    laptop.shot("game-summary")
    # A battle declared and cancelled since, then the downloaded game imported over it: the
    # game is as it was, and that battle never was.
    status, battle = server.post(
        "/api/battles", {"attacker": "red", "defender": None, "thrown": {"red": 1}}
    )
    assert status == 201
    server.post(f"/api/battles/{battle['id']}/cancel", {})
    page = laptop.goto("/game")
    page.set_input_files("#import-file", str(path))
    page.click("#import-submit")
    page.wait_for_selector("#error-message:has-text('a game is in progress here')")
    page = laptop.goto("/game")
    page.set_input_files("#import-file", str(path))
    page.check("#import-force")
    page.click("#import-submit")
    page.wait_for_selector("#imported:has-text('Imported game.json')")
    after = server.get("/api/state")[1]
    assert after["game"] == state["game"] and after["history"] == state["history"]
    assert server.get(f"/api/battles/{battle['id']}")[0] == 404
    laptop.check()


def test_physical_dice_are_asked_for_on_the_game_and_table_pages(laptop, phone, server):
    page = laptop.goto("/game")
    page.click("#new-details summary")
    fill_new_game(page, 0)  # blue's first decision is a tie between two expansions
    page.check("#new-physical-dice")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#new-submit")
    page.wait_for_selector("#now:has-text('Round 1')")
    assert server.get("/api/state")[1]["physical_dice"] is True
    # Step until the server asks for a roll; each click waits for the step before it to be
    # answered (on a busy machine the page can lag behind the server by more than a guess).
    for _ in range(4):
        turn = server.get("/api/state")[1]["automaton"]
        if turn and turn["status"] == "needs_roll":
            break
        page.wait_for_selector("#automaton-next:enabled:not([aria-busy])")
        with page.expect_response(lambda r: r.request.method == "POST"):
            page.click("#automaton-next")
    page.wait_for_selector("#automaton-dice:visible")
    turn = server.get("/api/state")[1]["automaton"]
    assert turn["status"] == "needs_roll" and page.inner_text("#automaton-text") == turn["text"]
    assert (
        page.query_selector_all("#automaton-dice button")
        and len(page.query_selector_all("#automaton-dice button")) == turn["roll"]["sides"]
    )
    # once the click's action is over, the button stays as the new state left it: disabled
    page.wait_for_selector("#automaton-next:not([aria-busy])")
    assert not page.is_visible("#automaton-confirm") and page.is_disabled("#automaton-next")
    laptop.shot("game-roll")
    # The Table page asks too; the number tapped there decides, and the Game page follows.
    table = phone.goto("/")
    table.wait_for_selector("#now:has-text('Roll a die for Blue and tap the number it shows.')")
    assert table.inner_text("#automaton-text") == turn["text"]
    phone.shot("table-roll")
    table.click("#automaton-dice button[data-value='2']")
    table.wait_for_selector("#automaton-confirm:visible")
    decided = server.get("/api/state")[1]["automaton"]
    assert decided["status"] == "waiting" and decided["rolls"] == [2]
    table.wait_for_selector("#history li:has-text('Rolled 2 at the table.')")
    page.wait_for_selector("#automaton-dice", state="hidden")
    page.wait_for_selector(f"#automaton-text:text-is('{decided['text']}')")
    table.click("#automaton-confirm")
    table.wait_for_selector("#automaton-confirm", state="hidden")
    assert server.get("/api/state")[1]["history"][-1]["text"].endswith(
        "Dice rolled at the table: 2 (d2)."
    )
    laptop.check()
    phone.check()


def test_every_page_at_phone_and_laptop_width(phone, laptop):
    for w in (phone, laptop):
        for name, path in PAGES.items():
            page = w.goto(path)
            # (No wait_for_function: polling it needs eval, which the page's CSP forbids.)
            if page.query_selector("#now"):
                page.wait_for_selector("#now:not(:has-text('Loading'))")
            page.wait_for_timeout(300)
            # Nothing is wider than the screen: no sideways scrolling on a phone.
            overflow = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, (
                f"{name} is {overflow}px wider than the {w.page.viewport_size['width']}px screen"
            )
            # Colours are named in words wherever a swatch is shown.
            for chip in page.query_selector_all(".chip"):
                assert chip.inner_text().strip(), "a colour chip without its name"
            w.shot(name)
        w.check()
    # Assets as the browser fetched them carry no address of another server.
    for url in {u for u in phone.requests if "/static/" in u}:
        text = phone.page.evaluate("url => fetch(url).then(r => r.text())", url)
        assert not re.search(r"https?://", text), url


@pytest.fixture
def network_server(tmp_path):
    """`companion serve --demo` listening on every address (0.0.0.0), as on the Pi: the PIN
    rules apply. Its first start prints the new PIN, which the table then types in."""
    port = free_port()
    config = tmp_path / "config.toml"
    config.write_text(DEMO_CONFIG)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "companion",
            "serve",
            "--demo",
            "--config",
            str(config),
            "--data",
            str(tmp_path / "data"),
            "--host",
            "0.0.0.0",
            "--port",
            str(port),
            "--seed",
            "3",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        pin = None
        for line in process.stdout:  # the start-up lines, then the server is up
            found = re.search(r"The table's PIN is (\d+)", line)
            if found:
                pin = found.group(1)
                break
        assert pin, "companion serve did not print a new PIN at its first start"
        yield f"http://127.0.0.1:{port}", pin
    finally:
        process.kill()
        process.wait(timeout=10)


def test_on_the_network_the_pin_unlocks_changes_and_the_camera(browser, network_server):
    base, pin = network_server
    phone = Watched(browser, base, PHONE)
    page = phone.page
    try:
        page = phone.goto("/")
        # Locked: the game can be watched, but not changed, and the camera stays dark.
        page.wait_for_selector("#now:not(:has-text('Loading'))")
        assert "This phone is locked" in page.inner_text("#locked-banner")
        phone.shot("table-locked")
        assert page.request.get(base + "/stream.mjpg").status == 403
        page.click("#declare-submit")
        assert "needs the table's PIN" in page.wait_for_selector("#flash:visible").inner_text()
        page.click("a.lockstate.locked")
        page.fill("#pin", "0000" if pin != "0000" else "1111")
        page.click("button[type=submit]")
        assert page.inner_text("#unlock-error") == "wrong PIN"
        phone.shot("unlock")
        page.fill("#pin", pin)
        page.click("button[type=submit]")
        page.wait_for_url(base + "/")
        page.wait_for_load_state("load")
        assert page.query_selector("#locked-banner") is None
        assert page.request.get(base + "/calibrate/frame.jpg").status == 200
        cookie = next(c for c in phone.context.cookies() if c["name"] == "companion_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
        page.click("#declare-submit")
        page.wait_for_selector("#battle:visible")
        page.wait_for_selector("#stream:visible")
        page.wait_for_selector("#battle-status:has-text('counted')", timeout=25000)
        phone.shot("table-unlocked")
        # The wrong PIN and the refused declaration were 4xx answers shown as messages.
        phone.check()
    finally:
        phone.close()
