"""A whole game as one versioned JSON file (issue 43): export it, import it on another companion.

The file holds every row of the store: the steps (set-up, every move, purchase, automaton
decision with its die rolls, battle and undo point, each with the game and ledger after it),
the battles (thrown, counted and confirmed cubes, whether the table corrected the count, the
counted picture as base64 JPEG), the announcement log (which keeps each count as the camera
made it, before a correction) and the open work (an automaton turn, a die awaited). Imported,
the store holds exactly those rows, so the game continues where it stood.

A file is checked completely before anything is written; a wrong one changes nothing.
"""

from __future__ import annotations

import base64
import binascii
import time
from typing import Any

from companion.errors import CompanionError
from companion.rules.ledger import Ledger
from companion.service import turns
from companion.service.phases import BattleRecord
from companion.store import Store

FORMAT = "tower-companion-game"
VERSION = 1
# Each table's columns and their JSON types.
COLUMNS = {
    "steps": {
        "id": int,
        "time": (int, float),
        "kind": str,
        "text": str,
        "game": (dict, type(None)),
        "ledger": (dict, type(None)),
        "data": dict,
    },
    "battles": {"id": int, "data": dict, "image": (str, type(None))},
    "events": {"id": int, "time": (int, float), "kind": str, "text": str, "data": dict},
    "open": {"name": str, "data": (dict, list, str, int, float, bool, type(None))},
}


class RecordError(CompanionError):
    """A game file cannot be imported; the message names what is wrong."""


def export_game(store: Store) -> dict[str, Any]:
    rows = store.rows()
    for battle in rows["battles"]:
        image = battle["image"]
        battle["image"] = base64.b64encode(image).decode("ascii") if image is not None else None
    return {"format": FORMAT, "version": VERSION, "exported": time.time(), **rows}


def in_progress(store: Store) -> str | None:
    """What an import would overwrite that the table may want to keep: a game not yet won."""
    last = store.last_step()
    game = last.game if last is not None else None
    if game is not None and not game.get("winner"):
        return f"a game is in progress here (round {game.get('round')}, {store.step_count()} steps)"
    return None


def import_game(store: Store, rows: dict[str, list[dict]], force: bool = False) -> None:
    """Replace the store's rows with a file's rows (as `check` gives them); refuses a game in
    progress unless `force`."""
    if not force:
        busy = in_progress(store)
        if busy:
            raise RecordError(
                f"{busy}: nothing was changed; import with --force (on the page: "
                'tick "replace the game in progress") to replace it'
            )
    with store.transaction() as tx:
        tx.replace_rows(rows)


def check(record: Any) -> dict[str, list[dict]]:
    """The file's rows, checked (types, ids, that each game, ledger and battle loads); images
    decoded. Raises RecordError naming the first problem."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise RecordError(f'not a Tower Companion game file (expected "format": "{FORMAT}")')
    version = record.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RecordError(f"version: expected a whole number, got {version!r}")
    if version > VERSION:
        raise RecordError(
            f"written by a newer Tower Companion (format version {version}, this "
            f"one reads {VERSION}): upgrade this companion to import it"
        )
    if version < 1:
        raise RecordError(f"version: {version} is not a game file version")
    rows = {}
    for table, columns in COLUMNS.items():
        if not isinstance(record.get(table), list):
            raise RecordError(f"{table}: expected a list of rows")
        rows[table] = [_row(table, n, row, columns) for n, row in enumerate(record[table])]
        key = "name" if table == "open" else "id"
        keys = [row[key] for row in rows[table]]
        if len(set(keys)) != len(keys):
            raise RecordError(f"{table}: a row's {key} is given twice")
    if not rows["steps"]:
        raise RecordError("steps: a game file has at least its first step")
    for n, step in enumerate(rows["steps"]):
        try:
            turns.load(step["game"])
            Ledger(**(step["ledger"] or {})).totals()
        except Exception as e:  # any way a stored game or ledger fails to load is the file's
            raise RecordError(
                f"steps[{n}] (step {step['id']}): its game or ledger does not load: {e}"
            ) from None
    for n, battle in enumerate(rows["battles"]):
        try:
            # its cubes into the tower are what a loaded battle is first asked for
            _ = BattleRecord.from_dict(battle["data"]).into_tower
        except Exception as e:
            raise RecordError(
                f"battles[{n}] (battle {battle['id']}): not a battle record: {e}"
            ) from None
        if battle["image"] is not None:
            try:
                battle["image"] = base64.b64decode(battle["image"], validate=True)
            except binascii.Error:
                raise RecordError(f"battles[{n}].image: not base64") from None
    return rows


def _row(table: str, n: int, row: Any, columns: dict) -> dict:
    if not isinstance(row, dict):
        raise RecordError(f"{table}[{n}]: expected an object")
    unknown = sorted(set(row) - set(columns))
    if unknown:
        raise RecordError(f"{table}[{n}]: unknown key {unknown[0]!r}")
    for column, kind in columns.items():
        if column not in row:
            raise RecordError(f"{table}[{n}]: missing key {column!r}")
        value = row[column]
        if isinstance(value, bool) and kind in (int, (int, float)) or not isinstance(value, kind):
            raise RecordError(
                f"{table}[{n}].{column}: unexpected {type(value).__name__} {str(value)[:40]!r}"
            )
    return dict(row)
