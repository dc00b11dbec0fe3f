"""The JSON API on the Flask test client, with a service that has no camera (counts typed in)."""

from __future__ import annotations

from companion.service.table import TableService
from companion.store import Store

SEED_1 = {
    "attacker": "blue",
    "defender": "red",
    "revolt_markers": 0,
    "thrown": {"blue": 4, "red": 3},
}
SEED_1_EMERGED = {"blue": 3, "red": 4, "green": 1}


def declare(client, body=SEED_1):
    response = client.post("/api/battles", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_declare_says_what_goes_into_the_tower(client):
    battle = declare(client, {"attacker": "red", "defender": None, "thrown": {"red": 2}})
    assert battle["status"] == "waiting_for_throw"
    assert battle["into_tower"] == {"green": 1, "red": 2}  # one farmer defends an empty province
    state = client.get("/api/state").get_json()
    assert state["phase"] == "waiting_for_throw" and state["battle"]["id"] == battle["id"]
    assert (
        state["events"][-1]["text"]
        == "Battle 1: red attacks an empty province. Throw 2 red and 1 green farmer."
    )


def test_seed_example_confirmed_with_typed_counts(client):
    battle = declare(client)
    r = client.post(f"/api/battles/{battle['id']}/confirm", json={"emerged": SEED_1_EMERGED})
    assert r.status_code == 200, r.get_json()
    applied = r.get_json()
    assert applied["status"] == "applied" and applied["corrected"] is True
    assert applied["outcome"]["result"] == "held"
    assert applied["outcome"]["to_supply"] == {"blue": 3, "green": 1, "red": 2}
    assert applied["outcome"]["to_province"] == {"red": 2}
    assert client.get(f"/api/battles/{battle['id']}").get_json()["status"] == "applied"
    ledger = client.get("/api/state").get_json()["ledger"]
    # The thrown armies left the board and 2 red came back; 1 blue stayed in the tower, while
    # a red and the farmer came out of a tower that was never primed: miscounts the user sees.
    assert ledger["board"] == {"red": 2}
    assert ledger["tower"] == {"blue": 1, "green": -1, "red": -1}
    assert ledger["cup"] == {}
    warnings = client.get("/api/state").get_json()["ledger_warnings"]
    assert any("tower estimate for green is -1" in w for w in warnings)


def test_the_cup_is_thrown_with_the_next_battle(client):
    b = declare(client, {"attacker": "blue", "defender": "red", "thrown": {"blue": 2, "red": 1}})
    client.post(f"/api/battles/{b['id']}/confirm", json={"emerged": {"blue": 2, "yellow": 1}})
    nxt = declare(client, {"attacker": "red", "defender": "blue", "thrown": {"red": 1, "blue": 1}})
    assert nxt["cup"] == {"yellow": 1}
    assert nxt["into_tower"] == {"blue": 1, "red": 1, "yellow": 1}


def test_phase_rules_answer_409(client):
    b = declare(client)
    assert client.post("/api/battles", json=SEED_1).status_code == 409
    r = client.post(f"/api/battles/{b['id']}/confirm", json={})
    assert r.status_code == 409 and 'give "emerged"' in r.get_json()["error"]
    r = client.post("/api/undo", json={})
    assert r.status_code == 409 and "confirm or cancel" in r.get_json()["error"]
    r = client.post(f"/api/battles/{b['id']}/recount", json={})
    assert r.status_code == 409 and "not calibrated" in r.get_json()["error"]
    assert (
        client.post(f"/api/battles/{b['id']}/cancel", json={}).get_json()["status"] == "cancelled"
    )
    r = client.post(f"/api/battles/{b['id']}/cancel", json={})
    assert r.status_code == 409 and "cancelled" in r.get_json()["error"]
    assert client.get("/api/battles/99").status_code == 404


def test_bad_input_answers_400_with_the_problem(client):
    r = client.post("/api/battles", data="{not json", content_type="application/json")
    assert r.status_code == 400 and "not valid JSON" in r.get_json()["error"]
    r = client.post("/api/battles", json={**SEED_1, "colour": "x"})
    assert r.status_code == 400 and "unknown key 'colour'" in r.get_json()["error"]
    r = client.post("/api/battles", json={"attacker": "blue", "thrown": {"blue": 1}})
    assert r.status_code == 400 and "missing key 'defender'" in r.get_json()["error"]
    r = client.post("/api/battles", json={**SEED_1, "thrown": {"blue": -1}})
    assert r.status_code == 400 and "negative" in r.get_json()["error"]
    b = declare(client)
    r = client.post(f"/api/battles/{b['id']}/confirm", json={"emerged": {"blue": "three"}})
    assert r.status_code == 400 and "emerged.blue" in r.get_json()["error"]
    # Nothing was lost: the battle is still open.
    assert client.get("/api/state").get_json()["battle"]["status"] == "waiting_for_throw"


def test_undo_goes_back_to_the_start_and_no_further(client):
    start = client.get("/api/state").get_json()["ledger"]
    for emerged in ({"blue": 4}, {"red": 3}):
        b = declare(client)
        client.post(f"/api/battles/{b['id']}/confirm", json={"emerged": emerged})
    assert client.get("/api/state").get_json()["can_undo"]
    assert client.post("/api/undo", json={}).status_code == 200
    assert client.get("/api/battles/2").get_json()["status"] == "undone"
    assert client.post("/api/undo", json={}).status_code == 200
    state = client.get("/api/state").get_json()
    assert state["ledger"] == start and not state["can_undo"]
    r = client.post("/api/undo", json={})
    assert r.status_code == 409 and "start of the game" in r.get_json()["error"]


def test_a_restart_resumes_the_open_battle(config, tmp_path):
    store = Store.in_dir(config.data_dir)
    service = TableService(config, store, None)
    record = service.declare_battle(SEED_1)
    store.close()
    store = Store.in_dir(config.data_dir)
    again = TableService(config, store, None)
    assert again.battle == record
    applied = again.confirm(record.id, SEED_1_EMERGED)
    assert applied.outcome["result"] == "held"
    assert [e.kind for e in again.bus.recent(5)] == ["battle_declared", "battle_applied"]
    store.close()


def test_a_quiet_table_writes_nothing(client, config):
    from pathlib import Path

    files = sorted(Path(config.data_dir).glob("companion.sqlite3*"))
    before = [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files]
    for _ in range(20):
        client.get("/api/state")
        client.get("/api/events")
    after = [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files]
    assert before == after


def test_speech_can_be_muted(client):
    r = client.post("/api/speech", json={"muted": "yes"})
    assert r.status_code == 400 and "true or false" in r.get_json()["error"]
    assert client.post("/api/speech", json={"muted": True}).get_json() == {
        "available": False,
        "muted": False,
    }


def test_priming_the_tower_fills_the_ledgers_tower(client):
    r = client.post(
        "/api/game",
        json={
            "seed": 1,
            "players": [
                {"colour": "red", "automaton": False},
                {"colour": "blue", "automaton": True},
            ],
        },
    )
    assert r.status_code == 201
    r = client.post("/api/prime", json={})
    assert r.status_code == 201
    prime = r.get_json()
    assert prime["kind"] == "prime" and prime["into_tower"] == {"red": 7, "blue": 7, "green": 10}
    assert client.get("/api/state").get_json()["events"][-1]["text"] == (
        "Prime the tower for the game: throw 7 red, 7 blue and 10 green. "
        "What comes out goes back to the supply."
    )
    r = client.post(
        f"/api/battles/{prime['id']}/confirm", json={"emerged": {"red": 5, "blue": 6, "green": 8}}
    )
    assert r.status_code == 200 and r.get_json()["outcome"] is None
    ledger = client.get("/api/state").get_json()["ledger"]
    assert ledger["tower"] == {"blue": 1, "green": 2, "red": 2}
    # A later battle can release the primed cubes without a miscount.
    b = declare(client, {"attacker": "blue", "defender": None, "thrown": {"blue": 1}})
    client.post(f"/api/battles/{b['id']}/confirm", json={"emerged": {"blue": 2, "green": 2}})
    state = client.get("/api/state").get_json()
    assert state["ledger"]["tower"] == {"green": 1, "red": 2} and state["ledger_warnings"] == []
