"""GET /api/battles/<id> gives the odds before the throw, from the ledger and the table's throws."""

from __future__ import annotations

import pytest

from companion.config import load_config
from companion.service.table import TableService
from companion.store import Store
from companion.web import create_app

PLAYERS = [{"colour": "red", "automaton": False}, {"colour": "blue", "automaton": False}]


def prime(client, emerged):
    client.post("/api/game", json={"seed": 1, "players": PLAYERS})
    p = client.post("/api/prime", json={}).get_json()
    client.post(f"/api/battles/{p['id']}/confirm", json={"emerged": emerged})
    return p


def test_a_declared_battle_has_its_odds(client):
    p = prime(client, {"red": 5, "blue": 6, "green": 8})
    assert client.get(f"/api/battles/{p['id']}").get_json()["odds"] is None  # priming: no odds
    b = client.post(
        "/api/battles",
        json={"attacker": "blue", "defender": "red", "thrown": {"blue": 6, "red": 1}},
    ).get_json()
    odds = client.get(f"/api/battles/{b['id']}").get_json()["odds"]
    assert set(odds["chances"]) == {"conquered", "held", "devastated"}
    assert sum(odds["chances"].values()) == pytest.approx(1, abs=0.002)
    assert odds["chances"]["conquered"] > 0.7  # six against one and a tower of few red
    # The tower holds what the priming left (2 red, 1 blue, 2 green): they may come out too.
    assert odds["inside"] == {"blue": 1, "green": 2, "red": 2}
    assert 0 < odds["expected"]["green"] < 2
    # One throw seen: the priming, where 19 of 24 came out of an empty tower.
    assert odds["stickiness"]["throws"] == 1
    assert odds["stickiness"]["text"].endswith("from 1 throw")
    # The same battle asked again gets the same odds; they are what they were before the throw
    # once it is applied.
    assert client.get(f"/api/battles/{b['id']}").get_json()["odds"] == odds
    client.post(f"/api/battles/{b['id']}/confirm", json={"emerged": {"blue": 9, "red": 1}})
    assert client.get(f"/api/battles/{b['id']}").get_json()["odds"] == odds


def test_the_stickiness_follows_the_throws(client):
    prime(client, {"red": 7, "blue": 7, "green": 10})  # nothing stayed in the tower
    before = None
    for _ in range(6):
        b = client.post(
            "/api/battles", json={"attacker": "blue", "defender": None, "thrown": {"blue": 4}}
        ).get_json()
        odds = client.get(f"/api/battles/{b['id']}").get_json()["odds"]
        if before is not None:
            assert odds["stickiness"]["keep"] < before  # every cube comes out: it keeps less
        before = odds["stickiness"]["keep"]
        client.post(f"/api/battles/{b['id']}/confirm", json={"emerged": {"blue": 4, "green": 1}})
    assert before < 0.1


def test_a_table_without_odds_gets_none(tmp_path):
    config, _ = load_config(
        None,
        {
            "data_dir": str(tmp_path),
            "speech.enabled": False,
            "panel.mode": "off",
            "game.show_odds": False,
        },
    )
    store = Store.in_dir(tmp_path)
    service = TableService(config, store, None)
    try:
        client = create_app(service, config, "127.0.0.1").test_client()
        b = client.post(
            "/api/battles", json={"attacker": "blue", "defender": None, "thrown": {"blue": 1}}
        ).get_json()
        assert client.get(f"/api/battles/{b['id']}").get_json()["odds"] is None
    finally:
        service.stop()
        store.close()
