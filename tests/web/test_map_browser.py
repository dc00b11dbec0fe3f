"""The board as a map in real headless Chromium against a real server (`companion serve
--demo`, waitress): a game in progress drawn at phone and laptop widths, a tap on a territory
filling the Game page's forms (the rules answer as they do for the forms), zoom by button and
by pinch, and the automaton's move drawn on the Game page and, small, on the Table page.

Screenshots go where the other browser tests put theirs: test-artifacts/screenshots/.
"""

from __future__ import annotations

import pytest

from tests.web.test_browser import LAPTOP, PHONE, Watched, _serve, fill_new_game

pytestmark = pytest.mark.browser

# The pieces' paint in app.js (TC.paint), as the browser computes it.
RED, BLUE = "rgb(215, 38, 61)", "rgb(47, 111, 223)"

# The bounding boxes of every territory's name and units on the map, in page pixels.
LABEL_BOXES = """() => [...document.querySelectorAll('#map g.t')].map((g) => {
  const boxes = [...g.querySelectorAll('text.name, text.units')]
    .map((t) => t.getBoundingClientRect()).map((b) => [b.left, b.top, b.right, b.bottom]);
  return [g.dataset.territory, boxes];
})"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from _serve(tmp_path_factory.mktemp("map") / "data")


def _overlapping(boxes):
    flat = [(name, b) for name, bs in boxes for b in bs]
    return [
        (a, c)
        for i, (a, p) in enumerate(flat)
        for c, q in flat[i + 1 :]
        if a != c and p[0] < q[2] - 1 and q[0] < p[2] - 1 and p[1] < q[3] - 1 and q[1] < p[3] - 1
    ]


def _view_box(page):
    return [float(v) for v in page.get_attribute("#map svg", "viewBox").split()]


def test_the_map_of_a_game_in_progress_at_both_widths(browser, server):
    laptop = Watched(browser, server.url, LAPTOP)
    phone = Watched(browser, server.url, PHONE)
    try:
        _game_in_progress(laptop, phone, server)
    finally:
        laptop.close()
        phone.close()


def _game_in_progress(laptop, phone, server):
    page = laptop.goto("/game")
    page.wait_for_selector("#new-details[open]")
    fill_new_game(page, 7)
    page.click("#new-submit")
    page.wait_for_selector("#now:has-text('Round 1')")
    game = server.get("/api/state")[1]["game"]
    capital = game["players"]["red"]["capital"]
    page.wait_for_selector("#map svg g.t")
    assert page.locator("#map g.t").count() == 49
    # Owners in their colour, named by initial on the disc and in the key.
    disc = page.locator(f"#map g.t[data-territory='{capital}'] .disc")
    assert disc.evaluate("d => getComputedStyle(d).fill") == RED
    assert page.text_content(f"#map g.t[data-territory='{capital}'] text.initial") == "R"
    blue = game["players"]["blue"]["capital"]
    assert (
        page.locator(f"#map g.t[data-territory='{blue}'] .disc").evaluate(
            "d => getComputedStyle(d).fill"
        )
        == BLUE
    )
    assert "R = red" in page.inner_text("#map .map-key")
    assert _overlapping(page.evaluate(LABEL_BOXES)) == []

    # A tap on the capital: what is there, and a purchase placed there through the form.
    page.click(f"#map g.t[data-territory='{capital}'] .disc")
    details = page.wait_for_selector("#map-details:visible")
    assert "Held by" in details.inner_text() and "footm" in details.inner_text()
    page.click("#map-details button:has-text('Buy and place here')")
    assert page.input_value("#buy-player") == "red" and page.input_value("#buy-where") == capital
    page.fill("#buy-footman", "2")
    page.click("#buy-submit")
    page.wait_for_selector("#flash:has-text('Bought')")
    here = server.get("/api/state")[1]["game"]["territories"][capital]
    footmen = here["units"]["red"]["footman"]
    here = f"#map g.t[data-territory='{capital}']"
    page.wait_for_selector(f"{here} text.units:has-text('{footmen}F')")
    # A move offered from there goes through the same rules as the form: too many is refused.
    page.click(f"#map g.t[data-territory='{capital}'] .disc")
    move = page.locator("#map-details button:has-text('Move to')").first
    to = move.inner_text().removeprefix("Move to ")
    move.click()
    assert (
        page.input_value("#move-player"),
        page.input_value("#move-from"),
        page.input_value("#move-to"),
    ) == ("red", capital, to)
    page.fill("#move-footman", "99")
    page.click("#move-submit")
    assert "footm" in page.wait_for_selector("#flash:not(.ok):visible").inner_text()
    page.fill("#move-footman", "0")

    # Zoom by button, and back to the whole map.
    whole = _view_box(page)
    page.click("#map button[data-zoom='in']")
    assert _view_box(page)[2] == pytest.approx(whole[2] / 1.5, rel=0.01)
    page.click("#map button[data-zoom='fit']")
    assert _view_box(page) == pytest.approx(whole, abs=0.2)

    # Step to the automaton's move: drawn as an arrow with its units, its battle ringed.
    turn = None
    for _ in range(10):
        turn = server.get("/api/state")[1]["automaton"]
        if turn and turn["status"] == "waiting" and page.locator("#map .arrow").count():
            break
        if turn and turn["status"] == "waiting":
            with page.expect_response(lambda r: r.request.method == "POST"):
                page.click("#automaton-confirm")
        else:
            page.wait_for_selector("#automaton-next:enabled:not([aria-busy])")
            with page.expect_response(lambda r: r.request.method == "POST"):
                page.click("#automaton-next")
        page.wait_for_timeout(300)
    moves = [a for a in turn["actions"] if a.get("path")]
    assert moves, turn["text"]
    page.wait_for_selector("#map .arrow")
    assert page.locator("#map .arrow").count() == len(moves)
    label = page.text_content("#map .arrow-label").strip()
    assert label.startswith("Blue ")
    fights = {a["to"] for a in moves if a["battle"]}
    assert {
        g.get_attribute("data-territory") for g in page.query_selector_all("#map g.t.fight")
    } == fights
    page.wait_for_selector("#flash", state="hidden")  # the refused move's message, gone
    laptop.shot("game-map")

    # On a phone: nothing wider than the screen, the same map; pinched open it zooms in.
    game_page = phone.goto("/game")
    game_page.wait_for_selector("#map .arrow")
    overflow = game_page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    phone.shot("game-map")
    before = _view_box(game_page)
    game_page.locator("#map .map-view").evaluate(PINCH)
    after = _view_box(game_page)
    assert after[2] == pytest.approx(before[2] / 2, rel=0.05)
    game_page.click("#map button[data-zoom='in']")
    game_page.locator("#map").scroll_into_view_if_needed()
    game_page.locator("#map").screenshot(path=str(_shot_path("game-map-zoomed-phone")))

    # The Table page: the move small, zoomed on it.
    table = phone.goto("/")
    table.wait_for_selector("#map .arrow")
    assert table.locator("#map:visible").count() == 1
    assert _view_box(table)[2] < whole[2]
    phone.shot("table-map")
    table.click("#automaton-confirm")
    table.wait_for_selector("#automaton-confirm", state="hidden")
    if not fights:
        table.wait_for_selector("#map", state="hidden")
    laptop.check()
    phone.check()


# Two fingers on the map moving apart to twice their distance (pointer events, as a phone sends).
PINCH = """(view) => {
  const r = view.querySelector('svg').getBoundingClientRect();
  const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
  const send = (type, id, x) => view.dispatchEvent(new PointerEvent(type, {pointerId: id,
    pointerType: 'touch', clientX: x, clientY: cy, bubbles: true, cancelable: true}));
  send('pointerdown', 1, cx - 40); send('pointerdown', 2, cx + 40);
  send('pointermove', 1, cx - 80); send('pointermove', 2, cx + 80);
  send('pointerup', 1, cx - 80); send('pointerup', 2, cx + 80);
}"""


def _shot_path(name):
    from tests.web.test_browser import SHOTS

    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS / f"{name}.png"
