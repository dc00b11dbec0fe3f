"""The Game page's record: download, import (upload form), and the printable summary."""

from __future__ import annotations

import io
import json

from tests.companion.service.test_record import play


def csrf(client) -> str:
    return client.get("/api/session").get_json()["csrf"]


def upload(client, record, force=False, name="game.json"):
    data = {"csrf_token": csrf(client), "file": (io.BytesIO(record), name)}
    if force:
        data["force"] = "on"
    return client.post("/game/import", data=data, content_type="multipart/form-data")


def test_download_and_import_on_the_game_page(client, service, store, tmp_path):
    play(client)
    r = client.get("/game/export")
    assert r.status_code == 200 and "attachment" in r.headers["Content-Disposition"]
    exported = r.data
    assert json.loads(exported)["steps"][-1]["id"] == store.last_step().id
    page = client.get("/game").data.decode()
    assert 'id="export-link"' in page and "Summary so far" in page  # the game is not won yet
    # A game is in progress here: refused without the box ticked, and nothing changes.
    rows = store.rows()
    r = upload(client, exported)
    assert r.status_code == 400 and "a game is in progress here" in r.data.decode()
    assert store.rows() == rows
    # A wrong file: named, nothing changes.
    r = upload(client, b"{not json", name="broken.json")
    assert r.status_code == 400
    assert "broken.json: not a JSON file; nothing was changed" in r.data.decode()
    newer = {"format": "tower-companion-game", "version": 9}
    r = upload(client, json.dumps(newer).encode(), force=True)
    assert r.status_code == 400 and "newer Tower Companion" in r.data.decode()
    assert store.rows() == rows
    # A battle declared since, then the file imported back over it: the service takes the
    # file's game up at once.
    declared = client.post(
        "/api/battles",
        json={"attacker": "red", "defender": None, "thrown": {"red": 1}},
        headers={"X-CSRF-Token": csrf(client)},
    )
    assert declared.status_code == 201
    assert store.rows() != rows
    r = upload(client, exported, force=True)
    assert r.status_code == 303 and r.headers["Location"].endswith("/game?imported=game.json")
    assert store.rows()["steps"] == rows["steps"] and store.rows()["battles"] == rows["battles"]
    state = client.get("/api/state").get_json()
    assert state["battle"] is None and state["history"][-1]["id"] == rows["steps"][-1]["id"]
    assert state["automaton"] == rows["open"][0]["data"]
    assert (
        state["events"][-1]["text"] == "Game imported from game.json: "
        f"{len(rows['steps'])} steps, {len(rows['battles'])} battles."
    )
    assert "Imported game.json" in client.get("/game?imported=game.json").data.decode()


def test_the_summary_says_who_won_the_battles_the_tower_and_the_corrections(client, service):
    assert "No game has been started yet." in client.get("/game/summary").data.decode()
    play(client)
    page = client.get("/game/summary").data.decode()
    assert "The game so far" in page and "Round 1, no winner yet" in page
    assert "<nav" not in page and "summary.css" in page  # printable: no navigation
    # The battle: blue attacked red with 2 against 1 and 2 blue, 1 red came out: conquered.
    assert '<tr data-colour="blue"><td>blue (automaton)</td>' in page
    blue = page.split('data-colour="blue"')[1].split("</tr>")[0]
    red = page.split('data-colour="red"')[1].split("</tr>")[0]
    assert [c.split("<")[0] for c in blue.split('class="num">')[1:]][1:] == ["1", "0", "0"]
    assert [c.split("<")[0] for c in red.split('class="num">')[1:]][1:] == ["0", "1", "0"]
    # Two throws: the priming (7 + 7 + 10 in, 19 out) and the battle (3 in, 3 out).
    assert "2 throws (the priming included): 27 cubes went in, 22 came out" in page
    assert "from 2 throws" in page
    # Both counts were typed in (no camera here): shown as such beside what was confirmed.
    assert page.count("(typed in, not counted)") == 2
    assert "5 blue, 8 green, 6 red" in page


def test_a_finished_game_links_its_summary(client, service, store):
    play(client)
    last = store.last_step()
    won = {**last.game, "winner": "blue"}
    with store.transaction() as tx:
        tx.add_step("battle", "Blue has 7 crowns.", won, last.ledger, last.data)
    service.reload("Blue won.")
    assert "Summary of the game" in client.get("/game").data.decode()
    page = client.get("/game/summary").data.decode()
    assert "Game summary" in page and f"Blue won in round {won['round']}" in page
    assert "blue (automaton) — winner" in page
