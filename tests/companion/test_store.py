"""The SQLite store: commits, rollbacks, and refusing files that are not ours."""

from __future__ import annotations

import sqlite3

import pytest

from companion.store import FILE_NAME, SCHEMA_VERSION, Store, StoreError


def test_committed_steps_survive_reopening(tmp_path):
    store = Store.in_dir(tmp_path)
    with store.transaction() as tx:
        tx.add_step("start", "begin", None, {"supply": {"red": 3}})
        tx.put_battle(1, {"id": 1, "status": "waiting_for_throw"})
        tx.set_open("turn", {"player": "blue"})
        event = tx.add_event("battle_declared", "Battle 1", {"x": 1})
    store.close()
    again = Store.in_dir(tmp_path)
    assert again.last_step().ledger == {"supply": {"red": 3}}
    assert again.battle(1)["status"] == "waiting_for_throw"
    assert again.get_open("turn") == {"player": "blue"}
    assert [e["id"] for e in again.events()] == [event["id"]]
    assert again.next_battle_id() == 2
    again.close()


def test_a_failed_step_writes_nothing(tmp_path):
    store = Store.in_dir(tmp_path)
    with pytest.raises(RuntimeError):
        with store.transaction() as tx:
            tx.add_step("battle", "half", None, None)
            tx.add_event("battle_applied", "half")
            raise RuntimeError("crash in the middle")
    assert store.last_step() is None and store.events() == []
    store.close()


def test_a_text_file_is_refused_and_kept(tmp_path):
    path = tmp_path / FILE_NAME
    path.write_text("my shopping list\n" * 50)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not an SQLite file.*mv .*companion.sqlite3"):
        Store(path)
    assert path.read_bytes() == before


def test_another_programs_database_is_refused_and_kept(tmp_path):
    path = tmp_path / FILE_NAME
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE recipes (name TEXT)")
    db.execute("INSERT INTO recipes VALUES ('soup')")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="another program's SQLite database"):
        Store(path)
    assert path.read_bytes() == before


def test_a_damaged_database_is_refused_and_kept(tmp_path):
    store = Store.in_dir(tmp_path)
    with store.transaction() as tx:
        for _ in range(200):
            tx.add_event("x", "filler " * 20)
    store.close()
    path = tmp_path / FILE_NAME
    data = bytearray(path.read_bytes())
    data[4096:12288] = b"\xff" * 8192  # pages after the header overwritten
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged"):
        Store(path)
    assert path.read_bytes() == bytes(data)


def test_a_newer_format_is_refused(tmp_path):
    Store.in_dir(tmp_path).close()
    path = tmp_path / FILE_NAME
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer Tower Companion"):
        Store(path)


def test_a_data_directory_that_cannot_be_made_is_a_clear_error(tmp_path):
    (tmp_path / "taken").write_text("a file where the data directory should be")
    with pytest.raises(StoreError, match="cannot use the data directory"):
        Store.in_dir(tmp_path / "taken" / "data")
