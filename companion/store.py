"""The durable record of a game: one SQLite file (WAL) in the data directory.

Tables: `steps` (every applied step with the game and ledger after it: the undo
stack), `battles` (each battle's record, updated at each phase change, with the
counted image), `events` (the announcement log), `open` (the open automaton turn
and other resumable work). Every change is one transaction committed with
synchronous=FULL before the caller acknowledges it, so after a crash or power cut
the service reopens exactly where it was. Nothing is written unless something
happened at the table.

A file that is not ours (not SQLite, corrupt, another program's database, or a
newer format) is never touched: opening it raises StoreError saying what is wrong
and how to start fresh.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from companion.errors import CompanionError

FILE_NAME = "companion.sqlite3"
# PRAGMA application_id marks the file as ours ("TowC").
APPLICATION_ID = 0x546F7743
SCHEMA_VERSION = 1
_SQLITE_HEADER = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE steps (
    id INTEGER PRIMARY KEY,
    time REAL NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    game TEXT,
    ledger TEXT,
    data TEXT NOT NULL
);
CREATE TABLE battles (
    id INTEGER PRIMARY KEY,
    data TEXT NOT NULL,
    image BLOB
);
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    time REAL NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE open (
    name TEXT PRIMARY KEY,
    data TEXT NOT NULL
);
"""


class StoreError(CompanionError):
    """The database file cannot be used; the message says why and how to start fresh."""


@dataclass(frozen=True)
class Step:
    id: int
    time: float
    kind: str
    text: str
    game: dict | None
    ledger: dict | None
    data: dict

    def summary(self) -> dict:
        return {"id": self.id, "time": self.time, "kind": self.kind, "text": self.text}


def _fresh_hint(path: Path) -> str:
    return (
        f"the file was left as it is; to start fresh, move it away "
        f"(mv {path} {path}.old) or use another data directory (--data DIR)"
    )


class Store:
    """One open database. Safe to share between threads (one lock around the connection)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            existed = self.path.exists() and self.path.stat().st_size > 0
            if existed:
                self._check_header()
        except OSError as e:
            raise StoreError(f"{self.path}: cannot use the data directory: {e.strerror}") from None
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot open the database: {e}") from None
        try:
            if existed:
                self._check_ours()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            if not existed:
                self._create()
        except sqlite3.Error as e:
            self._db.close()
            raise StoreError(
                f"{self.path}: cannot write the database ({e}); check that the data "
                "directory is writable and the disk not full"
            ) from None
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def in_dir(cls, data_dir: str | Path) -> Store:
        return cls(Path(data_dir) / FILE_NAME)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- opening -----------------------------------------------------------------

    def _check_header(self) -> None:
        with open(self.path, "rb") as f:
            header = f.read(len(_SQLITE_HEADER))
        if header != _SQLITE_HEADER:
            raise StoreError(
                f"{self.path}: not a Tower Companion database (not an SQLite file); "
                + _fresh_hint(self.path)
            )

    def _check_ours(self) -> None:
        try:
            check = self._db.execute("PRAGMA quick_check").fetchone()[0]
            app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise StoreError(
                f"{self.path}: the database is damaged ({e}); " + _fresh_hint(self.path)
            ) from None
        if check != "ok":
            raise StoreError(
                f"{self.path}: the database is damaged ({check}); " + _fresh_hint(self.path)
            )
        if app_id != APPLICATION_ID:
            raise StoreError(
                f"{self.path}: another program's SQLite database, not Tower Companion's; "
                + _fresh_hint(self.path)
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: written by a newer Tower Companion (format {version}, "
                f"this one reads {SCHEMA_VERSION}); upgrade, or " + _fresh_hint(self.path)
            )

    def _create(self) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    self._db.execute(statement)
            self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self._db.execute("COMMIT")

    # --- writing -----------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """All writes of one step; committed (and on disk) when the block ends without error."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield Transaction(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # --- reading -----------------------------------------------------------------

    def last_step(self) -> Step | None:
        row = self._one(
            "SELECT id, time, kind, text, game, ledger, data FROM steps ORDER BY id DESC LIMIT 1"
        )
        return _step(row) if row else None

    def steps(self, limit: int = 50) -> list[Step]:
        rows = self._all(
            "SELECT id, time, kind, text, game, ledger, data FROM steps ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [_step(r) for r in reversed(rows)]

    def step_count(self) -> int:
        return self._one("SELECT count(*) FROM steps")[0]

    def battle(self, battle_id: int) -> dict | None:
        row = self._one("SELECT data FROM battles WHERE id = ?", (battle_id,))
        return json.loads(row[0]) if row else None

    def battle_image(self, battle_id: int) -> bytes | None:
        row = self._one("SELECT image FROM battles WHERE id = ?", (battle_id,))
        return row[0] if row else None

    def battles(self, limit: int = 20) -> list[dict]:
        rows = self._all("SELECT data FROM battles ORDER BY id DESC LIMIT ?", (limit,))
        return [json.loads(r[0]) for r in reversed(rows)]

    def next_battle_id(self) -> int:
        return (self._one("SELECT max(id) FROM battles")[0] or 0) + 1

    def events(self, after: int = 0, limit: int = 100) -> list[dict]:
        rows = self._all(
            "SELECT id, time, kind, text, data FROM events WHERE id > ? ORDER BY id DESC LIMIT ?",
            (after, limit),
        )
        return [
            {"id": r[0], "time": r[1], "kind": r[2], "text": r[3], "data": json.loads(r[4])}
            for r in reversed(rows)
        ]

    def get_open(self, name: str) -> dict | None:
        row = self._one("SELECT data FROM open WHERE name = ?", (name,))
        return json.loads(row[0]) if row else None

    def rows(self) -> dict[str, list[dict]]:
        """Every row of every table, as stored (JSON columns decoded, images as bytes): the
        whole record of the table, for export."""
        return {
            "steps": [
                {
                    "id": r[0],
                    "time": r[1],
                    "kind": r[2],
                    "text": r[3],
                    "game": json.loads(r[4]) if r[4] is not None else None,
                    "ledger": json.loads(r[5]) if r[5] is not None else None,
                    "data": json.loads(r[6]),
                }
                for r in self._all(
                    "SELECT id, time, kind, text, game, ledger, data FROM steps ORDER BY id"
                )
            ],
            "battles": [
                {"id": r[0], "data": json.loads(r[1]), "image": r[2]}
                for r in self._all("SELECT id, data, image FROM battles ORDER BY id")
            ],
            "events": [
                {"id": r[0], "time": r[1], "kind": r[2], "text": r[3], "data": json.loads(r[4])}
                for r in self._all("SELECT id, time, kind, text, data FROM events ORDER BY id")
            ],
            "open": [
                {"name": r[0], "data": json.loads(r[1])}
                for r in self._all("SELECT name, data FROM open ORDER BY name")
            ],
        }

    def _one(self, sql: str, args: tuple = ()) -> tuple | None:
        with self._lock:
            return self._db.execute(sql, args).fetchone()

    def _all(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()


class Transaction:
    """Writes inside Store.transaction(); each returns what a caller needs to announce it."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def add_step(
        self, kind: str, text: str, game: dict | None, ledger: dict | None, data: dict | None = None
    ) -> Step:
        now = time.time()
        cursor = self._db.execute(
            "INSERT INTO steps (time, kind, text, game, ledger, data) VALUES (?, ?, ?, ?, ?, ?)",
            (now, kind, text, _dump(game), _dump(ledger), json.dumps(data or {})),
        )
        return Step(cursor.lastrowid, now, kind, text, game, ledger, data or {})

    def delete_step(self, step_id: int) -> None:
        self._db.execute("DELETE FROM steps WHERE id = ?", (step_id,))

    def put_battle(
        self, battle_id: int, data: dict, image: bytes | None = None, keep_image: bool = True
    ) -> None:
        if image is None and keep_image:
            self._db.execute(
                "INSERT INTO battles (id, data) VALUES (?, ?) "
                "ON CONFLICT(id) DO UPDATE SET data = excluded.data",
                (battle_id, json.dumps(data)),
            )
        else:
            self._db.execute(
                "INSERT INTO battles (id, data, image) VALUES (?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET data = excluded.data, image = excluded.image",
                (battle_id, json.dumps(data), image),
            )

    def add_event(self, kind: str, text: str, data: dict | None = None) -> dict:
        now = time.time()
        cursor = self._db.execute(
            "INSERT INTO events (time, kind, text, data) VALUES (?, ?, ?, ?)",
            (now, kind, text, json.dumps(data or {})),
        )
        return {"id": cursor.lastrowid, "time": now, "kind": kind, "text": text, "data": data or {}}

    def replace_rows(self, rows: dict[str, list[dict]]) -> None:
        """Every table emptied and filled with `rows` (as `Store.rows` gives them): an
        imported game, ids and times as they were."""
        for table in ("steps", "battles", "events", "open"):
            self._db.execute(f"DELETE FROM {table}")
        self._db.executemany(
            "INSERT INTO steps (id, time, kind, text, game, ledger, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    r["id"],
                    r["time"],
                    r["kind"],
                    r["text"],
                    _dump(r["game"]),
                    _dump(r["ledger"]),
                    json.dumps(r["data"]),
                )
                for r in rows["steps"]
            ],
        )
        self._db.executemany(
            "INSERT INTO battles (id, data, image) VALUES (?, ?, ?)",
            [(r["id"], json.dumps(r["data"]), r["image"]) for r in rows["battles"]],
        )
        self._db.executemany(
            "INSERT INTO events (id, time, kind, text, data) VALUES (?, ?, ?, ?, ?)",
            [
                (r["id"], r["time"], r["kind"], r["text"], json.dumps(r["data"]))
                for r in rows["events"]
            ],
        )
        self._db.executemany(
            "INSERT INTO open (name, data) VALUES (?, ?)",
            [(r["name"], json.dumps(r["data"])) for r in rows["open"]],
        )

    def set_open(self, name: str, data: dict | None) -> None:
        if data is None:
            self._db.execute("DELETE FROM open WHERE name = ?", (name,))
        else:
            self._db.execute(
                "INSERT INTO open (name, data) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET data = excluded.data",
                (name, json.dumps(data)),
            )


def _dump(value: dict | None) -> str | None:
    return None if value is None else json.dumps(value)


def _step(row: tuple) -> Step:
    return Step(
        row[0],
        row[1],
        row[2],
        row[3],
        json.loads(row[4]) if row[4] is not None else None,
        json.loads(row[5]) if row[5] is not None else None,
        json.loads(row[6]),
    )
