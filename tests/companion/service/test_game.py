"""The game through the API: new game, a person's moves, the automaton's turns and its battles."""

from __future__ import annotations

PLAYERS = [{"colour": "red", "automaton": False}, {"colour": "blue", "automaton": True}]


def new_game(client, seed=3):
    r = client.post("/api/game", json={"seed": seed, "players": PLAYERS})
    assert r.status_code == 201, r.get_json()
    return r.get_json()


def test_a_round_with_an_automaton_decision_confirmed_and_its_battle_declared(client):
    new_game(client)
    state = client.get("/api/state").get_json()
    board_before = state["ledger"]["board"]
    assert board_before == {"blue": 10, "red": 10}  # the solo setup's 10 footmen each
    r = client.post("/api/automaton/next", json={}).get_json()
    assert r["status"] == "human" and r["player"] == "red"
    r = client.post("/api/automaton/next", json={}).get_json()
    assert r["status"] == "waiting" and r["player"] == "blue" and r["text"].startswith("Blue")
    # Nothing changes until the table confirms.
    assert client.get("/api/state").get_json()["ledger"]["board"] == board_before
    assert client.post("/api/automaton/next", json={}).status_code == 409
    assert client.post("/api/automaton/confirm", json={}).get_json()["status"] == "done"
    state = client.get("/api/state").get_json()
    bought = sum(state["ledger"]["board"].values()) - 20
    assert state["history"][-1]["kind"] == "automaton" and bought >= 0
    # Second cards, then the round's battles: the service declares them itself.
    while True:
        r = client.post("/api/automaton/next", json={}).get_json()
        if r["status"] == "waiting":
            client.post("/api/automaton/confirm", json={})
        if r["status"] == "battles":
            break
    battle = client.get("/api/state").get_json()["battle"]
    assert (
        battle["origin"] == "automaton"
        and battle["territory"]
        and battle["status"] == "waiting_for_throw"
    )
    game = client.get("/api/state").get_json()["game"]
    assert game["territories"][battle["territory"]]["attacker"] == battle["attacker"]
    thrown = sum(battle["thrown"].values())
    r = client.post(
        f"/api/battles/{battle['id']}/confirm", json={"emerged": {battle["attacker"]: thrown}}
    )
    assert r.get_json()["outcome"]["result"] == "conquered"
    game = client.get("/api/state").get_json()["game"]
    assert "attacker" not in game["territories"][battle["territory"]]
    assert game["territories"][battle["territory"]]["units"][battle["attacker"]]


def test_people_move_and_buy_through_the_rules(client):
    new_game(client)
    game = client.get("/api/state").get_json()["game"]
    red = [
        (name, t["units"]["red"]) for name, t in game["territories"].items() if "red" in t["units"]
    ]
    r = client.post(
        "/api/game/move",
        json={"player": "red", "from": red[0][0], "to": "Atlantis", "units": {"footman": 1}},
    )
    assert r.status_code == 409 and "unknown territory 'Atlantis'" in r.get_json()["error"]
    r = client.post("/api/game/move", json={"player": "green", "from": "x", "to": "y", "units": {}})
    assert r.status_code == 400 and "not in this game" in r.get_json()["error"]
    r = client.post(
        "/api/game/purchase",
        json={"player": "red", "territory": red[0][0], "items": {"footman": 2}},
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["text"] == "Red buys 2 footmen for 2 coins."
    state = client.get("/api/state").get_json()
    assert state["ledger"]["board"]["red"] == 12 and state["game"]["players"]["red"]["coins"] == 3
    r = client.post(
        "/api/game/purchase",
        json={"player": "red", "territory": red[0][0], "items": {"cavalry": 2}},
    )
    assert r.status_code == 409 and "costs 6 coins" in r.get_json()["error"]


def test_undo_walks_back_automaton_steps_to_the_new_game(client):
    new_game(client)
    start = client.get("/api/state").get_json()
    decisions = []
    for _ in range(3):
        r = client.post("/api/automaton/next", json={}).get_json()
        if r["status"] == "waiting":
            decisions.append(r["text"])
            client.post("/api/automaton/confirm", json={})
    while client.post("/api/undo", json={}).status_code == 200:
        pass
    state = client.get("/api/state").get_json()
    assert state["game"] == start["game"] and state["ledger"] == start["ledger"]
    assert state["automaton"] is None and state["history"][-1]["kind"] == "new_game"
    # The same seed replays the same decisions.
    client.post("/api/automaton/next", json={})
    again = client.post("/api/automaton/next", json={}).get_json()
    assert again["text"] == decisions[0]


def test_bad_game_requests(client):
    assert client.post("/api/automaton/next", json={}).status_code == 409  # no game yet
    r = client.post("/api/game", json={"players": "red"})
    assert r.status_code == 400 and "players" in r.get_json()["error"]
    r = client.post("/api/game", json={"players": PLAYERS, "seed": -1})
    assert r.status_code == 400 and "seed" in r.get_json()["error"]
    r = client.post("/api/game", json={"players": [{"colour": "red"}, {"colour": "red"}]})
    assert r.status_code == 409 and "players" in r.get_json()["error"]
