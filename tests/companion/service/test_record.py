"""A whole game exported and imported (companion.record, `companion export` / `companion import`):
the same rows, the same state, and the game goes on."""

from __future__ import annotations

import base64
import json

import cv2
import numpy as np
import pytest

from companion.record import FORMAT, RecordError, check, export_game, import_game
from companion.service.table import TableService
from companion.store import Store
from tests.companion.commands.test_battle_cli import companion
from tests.companion.service.test_dice import physical

# What the state holds besides the game itself: the camera and the live bus are this process's.
LIVE = ("events", "camera", "speech", "panel")


def play(client):
    """A game with an automaton's die rolled at the table, a priming and a battle corrected."""
    turn = physical(client)
    assert turn["status"] == "needs_roll"
    client.post("/api/automaton/roll", json={"value": 2})
    client.post("/api/automaton/confirm", json={})
    prime = client.post("/api/prime", json={}).get_json()
    client.post(
        f"/api/battles/{prime['id']}/confirm", json={"emerged": {"blue": 5, "red": 6, "green": 8}}
    )
    battle = client.post(
        "/api/battles",
        json={"attacker": "blue", "defender": "red", "thrown": {"blue": 2, "red": 1}},
    ).get_json()
    client.post(f"/api/battles/{battle['id']}/confirm", json={"emerged": {"blue": 2, "red": 1}})
    # The round goes on: the next automaton decision is open when the game is exported.
    client.post("/api/automaton/next", json={})


def state(service):
    return {k: v for k, v in service.state().items() if k not in LIVE}


def test_export_import_gives_the_same_rows_state_and_history(
    client, service, store, config, tmp_path
):
    play(client)
    # The counted picture of the last battle (this service has no camera: one is stored here).
    picture = cv2.imencode(".jpg", np.full((48, 64, 3), 90, np.uint8))[1].tobytes()
    last = store.battles(limit=1)[0]
    with store.transaction() as tx:
        tx.put_battle(last["id"], last, image=picture)
    path = tmp_path / "game.json"
    run = companion("export", "--data", config.data_dir, "--out", str(path))
    assert run.returncode == 0, run.stderr
    exported = json.loads(path.read_text())
    assert exported["format"] == FORMAT and exported["version"] == 1
    kinds = [s["kind"] for s in exported["steps"]]
    assert {"new_game", "automaton", "prime", "battle"} <= set(kinds)
    assert all(b["data"]["corrected"] for b in exported["battles"])
    assert any("Dice rolled at the table: 2" in s["text"] for s in exported["steps"])
    assert base64.b64decode(exported["battles"][-1]["image"]) == picture

    other = tmp_path / "other"
    run = companion("import", str(path), "--data", str(other))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"Imported {len(exported['steps'])} steps")
    copy = Store.in_dir(other)
    try:
        assert copy.rows() == store.rows()
        twin = TableService(config, copy, None)
        try:
            assert state(twin) == state(service)
            # The game goes on from there on both alike.
            assert twin.automaton_next() == service.automaton_next()
            assert state(twin)["game"] == state(service)["game"]
        finally:
            twin.stop()
    finally:
        copy.close()


def test_a_game_in_progress_is_not_overwritten_without_force(client, service, store, tmp_path):
    play(client)
    rows = check(json.loads(json.dumps(export_game(store))))
    target = tmp_path / "target"
    companion("import", "-", "--data", str(target), stdin=json.dumps(export_game(store)))
    before = Store.in_dir(target)
    try:
        with pytest.raises(RecordError, match="a game is in progress here .* nothing was changed"):
            import_game(before, rows)
        run = companion("import", "-", "--data", str(target), stdin=json.dumps(export_game(store)))
        assert run.returncode == 2 and "--force" in run.stderr
        assert (
            companion(
                "import",
                "-",
                "--data",
                str(target),
                "--force",
                stdin=json.dumps(export_game(store)),
            ).returncode
            == 0
        )
    finally:
        before.close()


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r.update(format="something"), "not a Tower Companion game file"),
        (lambda r: r.update(version=2), "written by a newer Tower Companion (format version 2"),
        (lambda r: r.update(version="1"), "version: expected a whole number"),
        (lambda r: r.pop("battles"), "battles: expected a list of rows"),
        (lambda r: r["steps"].clear(), "steps: a game file has at least its first step"),
        (lambda r: r["steps"][0].pop("kind"), "steps[0]: missing key 'kind'"),
        (lambda r: r["steps"][0].update(colour=1), "steps[0]: unknown key 'colour'"),
        (
            lambda r: r["steps"][-1].update(id=r["steps"][0]["id"]),
            "steps: a row's id is given twice",
        ),
        (lambda r: r["steps"][-1]["game"].update(players=3), "does not load"),
        (
            lambda r: r["battles"][0]["data"].pop("attacker"),
            "battles[0] (battle 1): not a battle record",
        ),
        (lambda r: r["battles"][0].update(image="###"), "battles[0].image: not base64"),
    ],
)
def test_a_wrong_file_is_named_and_changes_nothing(client, store, tmp_path, change, message):
    play(client)
    record = export_game(store)
    record["battles"][0]["image"] = None
    change(record)
    target = tmp_path / "target"
    run = companion("import", "-", "--data", str(target), stdin=json.dumps(record))
    assert run.returncode == 2 and run.stdout == ""
    [line] = run.stderr.splitlines()
    assert line.startswith("companion import: error: ") and message in line
    assert not target.exists()  # nothing was created, let alone written


def test_exporting_a_data_dir_without_a_game_database_is_an_error(tmp_path):
    run = companion("export", "--data", str(tmp_path))
    assert run.returncode == 2 and "no companion database here" in run.stderr
    assert list(tmp_path.iterdir()) == []
