"""The board as a map: the projection and layout (pure), and `GET /map` through Flask's test
client with a real TableService (no camera: counts are typed in) and a real SQLite store."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import pytest
from flask import render_template

from companion.config import load_config
from companion.rules.actions import MOVES
from companion.rules.board import board_from_dict, load_map
from companion.rules.units import describe
from companion.service.table import TableService
from companion.store import Store
from companion.web import create_app, mapview
from tests.web.conftest import post_json

SVG = "{http://www.w3.org/2000/svg}"
PLAYERS = [{"colour": "red", "automaton": False}, {"colour": "blue", "automaton": True}]


@pytest.fixture(scope="module")
def board():
    return load_map()


def test_the_projection_puts_west_left_and_north_up_within_the_width(board):
    places = mapview.project(board.at, 1000)
    xs = [p.x for p in places.values()]
    ys = [p.y for p in places.values()]
    assert min(xs) == pytest.approx(mapview.MARGIN) and min(ys) == pytest.approx(mapview.MARGIN)
    assert max(max(xs), max(ys)) == pytest.approx(1000 - mapview.MARGIN)
    assert places["Portugal"].x < places["France"].x < places["Poland"].x < places["Rusland"].x
    assert places["Finland"].y < places["Saxony"].y < places["Rome"].y < places["Tunisia"].y
    # Longitude is shrunk by the cosine of the middle latitude: a degree east is shorter
    # than a degree north.
    lats = [lat for _, lat in board.at.values()]
    shrink = math.cos(math.radians((min(lats) + max(lats)) / 2))
    per_degree_north = (places["Rome"].y - places["Saxony"].y) / (52.2 - 42.5)
    per_degree_east = (places["Poland"].x - places["France"].x) / (19.5 - 2.4)
    assert per_degree_east == pytest.approx(per_degree_north * shrink)


def _boxes_overlap(layout):
    places = list(layout.places.values())
    return [
        (a.name, b.name)
        for i, a in enumerate(places)
        for b in places[i + 1 :]
        if abs(a.x - b.x) < mapview.half_width(a.name) + mapview.half_width(b.name) - 1
        and abs(a.y - b.y) < mapview.ABOVE + mapview.BELOW
    ]


def test_the_layout_keeps_every_label_clear_of_the_others(board):
    projected = mapview.project(board.at)
    near = {n: (p.x, p.y) for n, p in projected.items()}
    crowded = [(a, b) for a in near for b in near if a < b and math.dist(near[a], near[b]) < 60]
    assert ("England", "Wales") in crowded  # as the crow flies they would overlap
    layout = mapview.layout(board)
    assert _boxes_overlap(layout) == []
    assert all(0 < p.x < layout.width and 0 < p.y < layout.height for p in layout.places.values())
    # Nudged, not rearranged: the west-east and north-south order of far places holds.
    p = layout.places
    assert p["Portugal"].x < p["France"].x < p["Poland"].x < p["Rusland"].x
    assert p["Finland"].y < p["Saxony"].y < p["Rome"].y < p["Tunisia"].y


def test_an_arrows_label_hides_no_territorys_disc(board):
    """On every Risk Europe link, a move's label of up to 10 letters ("Blue 2C 5F") goes
    beside the discs (a much longer one can cover one where the board is crowded)."""
    layout = mapview.layout(board)
    half = 10 * mapview.CHAR / 2 + 6
    hidden = []
    for a in board.territories:
        for b in board.adjacent[a]:
            ends = [(layout.places[t].x, layout.places[t].y) for t in (a, b)]
            x, y = mapview._label_at(ends, half, layout)
            hidden += [
                (a, b, p.name)
                for p in layout.places.values()
                if abs(x - p.x) < half + mapview.RADIUS
                and p.y - mapview.RADIUS - 11 < y < p.y + mapview.RADIUS + 11
            ]
    assert hidden == []


def test_a_map_without_places_is_laid_out_in_a_grid():
    names = [f"T{i}" for i in range(7)]
    board = board_from_dict(
        {
            "territories": [
                {
                    "name": n,
                    "adjacent": [m for m in names if m != n][:1]
                    if n == "T1"
                    else (["T1"] if n == "T0" else []),
                }
                for n in names
            ]
        }
    )
    layout = mapview.layout(board)
    assert set(layout.places) == set(names) and _boxes_overlap(layout) == []
    assert len({(p.x, p.y) for p in layout.places.values()}) == 7
    assert layout.places["T0"].y == layout.places["T2"].y < layout.places["T3"].y  # 3 a row


def test_initials_tell_every_colour_apart():
    assert mapview.initials(["red", "blue", "black", "yellow"]) == {
        "red": "R",
        "blue": "Blu",
        "black": "Bla",
        "yellow": "Y",
    }
    assert mapview.short({"footman": 3, "cavalry": 1, "siege_engine": 2}) == "1C 2S 3F"


# ---- GET /map ----


@pytest.fixture
def service(tmp_path):
    config, _ = load_config(
        None, {"data_dir": str(tmp_path / "data"), "speech.enabled": False, "panel.mode": "off"}
    )
    store = Store.in_dir(config.data_dir)
    svc = TableService(config, store, None)
    yield svc, config
    svc.stop()
    store.close()


@pytest.fixture
def client(service):
    svc, config = service
    app = create_app(svc, config, "127.0.0.1", test_config={"TESTING": True})
    return app.test_client()


def drawn(client) -> ET.Element:
    r = client.get("/map")
    assert r.status_code == 200 and r.content_type.startswith("text/html")
    return ET.fromstring(f"<div>{r.data.decode()}</div>")  # well-formed, or this fails


def territories(root) -> dict[str, ET.Element]:
    return {g.get("data-territory"): g for g in root.iter(f"{SVG}g") if g.get("data-territory")}


def test_the_map_before_a_game_has_every_territory_link_and_city(client, board):
    root = drawn(client)
    shown = territories(root)
    assert list(shown) == list(board.territories)
    lines = list(root.iter(f"{SVG}line"))
    pairs = {frozenset((a, b)) for a in board.adjacent for b in board.adjacent[a]}
    assert len(lines) == len(pairs)
    assert sum("sea" in line.get("class") for line in lines) == len(board.sea) == 11
    assert {n for n, g in shown.items() if g.get("data-city")} == set(board.cities)
    assert {n for n, g in shown.items() if g.get("data-crown")} == set(board.gold_crown_cities)
    assert shown["Saxony"].get("data-tax") == "4"
    assert shown["England"].get("data-adjacent").split("|") == list(board.adjacent["England"])
    assert all(g.get("data-owners") == "" for g in shown.values())
    assert not list(root.iter(f"{SVG}polyline"))


def _texts(g, cls):
    return [t.text for t in g.iter(f"{SVG}text") if t.get("class") == cls]


def test_the_map_of_a_game_shows_owners_units_and_the_automatons_move(client):
    assert post_json(client, "/api/game", {"seed": 3, "players": PLAYERS}).status_code == 201
    game = client.get("/api/state").get_json()["game"]
    shown = territories(drawn(client))
    for name, g in shown.items():
        units = game["territories"].get(name, {}).get("units", {})
        assert g.get("data-owners") == " ".join(units), name
        assert [p.get("data-paint") for p in g if "disc" in p.get("class", "").split()] == (
            list(units) or [None]
        )
        assert _texts(g, "units") == [
            f"{c[0].upper()} {mapview.short(u)}" for c, u in units.items()
        ]
    capital = game["players"]["red"]["capital"]
    assert _texts(shown[capital], "initial") == ["R"]
    assert "red: " in shown[capital].get("aria-label")
    # Step to an automaton's decision that moves: its move is drawn as an arrow, the battle it
    # starts ringed. (Decisions without a move are confirmed on the way.)
    moves = []
    for _ in range(12):
        turn = post_json(client, "/api/automaton/next").get_json()
        if turn["status"] != "waiting":
            continue
        moves = [a for a in turn["actions"] if a["action"] in MOVES]
        if moves:
            break
        assert post_json(client, "/api/automaton/confirm").get_json()["status"] == "done"
    assert moves and turn["player"] == "blue"
    root = drawn(client)
    arrows = [g for g in root.iter(f"{SVG}g") if g.get("class", "").split()[:1] == ["arrow"]]
    labels = [g for g in root.iter(f"{SVG}g") if g.get("class") == "arrow-label"]
    assert len(arrows) == len(labels) == len(moves)
    assert arrows[0].get("data-player") == labels[0].get("data-player") == "blue"
    assert f"from {moves[0]['from']} to {moves[0]['to']}" in arrows[0].get("aria-label")
    assert [p.get("class") for p in arrows[0]] == ["shaft-halo", "shaft"]
    label = "".join(t.text for t in labels[0].iter(f"{SVG}text"))
    assert label == f"Blue {mapview.short(moves[0]['units'])}"
    fights = {n for n, g in territories(root).items() if "fight" in g.get("class").split()}
    assert fights == {a["to"] for a in moves if a["battle"]}
    svg = next(root.iter(f"{SVG}svg"))
    assert svg.get("data-focus") != svg.get("data-full")
    # Confirmed: the arrow goes, the units stand where it pointed, and the attacked territory
    # is disputed until its battle.
    assert post_json(client, "/api/automaton/confirm").get_json()["status"] == "done"
    root = drawn(client)
    assert not list(root.iter(f"{SVG}polyline"))
    target = territories(root)[moves[0]["to"]]
    assert "blue" in target.get("data-owners").split()
    if moves[0]["attack"]:
        assert "disputed" in target.get("class").split() and "disputed" in target.get("aria-label")


def test_disputed_castles_revolts_and_an_open_battle_are_marked(make_app, board):
    """The drawing of states a short game may not reach: drawn from a game dict as the
    service's state has it."""
    game = {
        "map": "risk-europe",
        "players": {"red": {}, "blue": {}, "black": {}},
        "territories": {
            "Saxony": {
                "units": {"red": {"footman": 2}, "blue": {"cavalry": 1}},
                "attacker": "blue",
            },
            "England": {
                "units": {"black": {"footman": 1, "archer": 2}},
                "castle": True,
                "revolt_markers": 2,
            },
        },
    }
    battle = {"territory": "Saxony", "attacker": "blue", "defender": "red"}
    with make_app().test_request_context():
        html = render_template(
            "_map_board.html", describe=describe, **mapview.view(board, game, None, battle)
        )
    shown = territories(ET.fromstring(f"<div>{html}</div>"))
    saxony, england = shown["Saxony"], shown["England"]
    assert saxony.get("class").split() == ["t", "disputed", "fight"]
    assert [p.get("data-paint") for p in saxony if "disc" in p.get("class", "").split()] == [
        "red",
        "blue",
    ]
    assert _texts(saxony, "initial") == ["R/Blu"] and _texts(saxony, "units") == ["R 2F", "Blu 1C"]
    assert "disputed" in saxony.get("aria-label") and "battle here" in saxony.get("aria-label")
    assert england.get("data-castle") == "yes" and england.get("data-revolt") == "2"
    assert [g.get("class") for g in england if g.get("class") in ("castle", "revolt")] == [
        "castle",
        "revolt",
    ]
    assert "2 revolt markers" in england.get("aria-label")
    assert json.loads(england.get("data-units")) == {"black": "2 archers, 1 footman"}
    assert _texts(england, "units") == ["Bla 2A 1F"]
