"""The Game page (`/game`): new game, the board as a filterable table, human moves and
purchases (validated by the rules behind the API), the history with undo; the game's record
(download, import: `companion.record`) and its printable summary (`/game/summary`).

The page is a shell; its script reads `/api/state` and `/api/pages/board` and follows `/events`.
"""

from __future__ import annotations

import json
import time

from flask import Blueprint, Response, redirect, render_template, request, url_for

from companion.errors import CompanionError
from companion.record import check, export_game, import_game
from companion.rules.units import CASTLE, UNIT_TYPES
from companion.summary import game_summary
from companion.web import service
from companion.web.pages_api import app_config, shipped_maps
from companion.web.security import error_response

bp = Blueprint("game", __name__)


@bp.get("/game")
def index():
    config = app_config()
    setup = {
        "colours": list(config.colours.players),
        "maps": shipped_maps(),
        "map": config.game.map,
        "unit_types": list(UNIT_TYPES),
        "items": [*UNIT_TYPES, CASTLE],
        "physical_dice": config.game.physical_dice,
    }
    summary = game_summary(service().store) if service() is not None else None
    return render_template(
        "game.html",
        setup=setup,
        finished=bool(summary and summary["finished"]),
        imported=request.args.get("imported"),
    )


@bp.get("/game/export")
def export():
    """The whole game as one JSON file (as `companion export`), downloaded."""
    name = time.strftime("tower-companion-game-%Y%m%d-%H%M.json")
    return Response(
        json.dumps(export_game(service().store), ensure_ascii=False),
        mimetype="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@bp.post("/game/import")
def import_file():
    """A game file uploaded to continue here (as `companion import`); a wrong file changes
    nothing."""
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        return error_response(400, "choose the exported game file (.json) to import")
    try:
        rows = check(json.loads(upload.read().decode("utf-8")))
        svc = service()
        import_game(svc.store, rows, force=request.form.get("force") == "on")
    except (UnicodeDecodeError, json.JSONDecodeError):
        return error_response(400, f"{upload.filename}: not a JSON file; nothing was changed")
    except CompanionError as e:
        return error_response(400, f"{upload.filename}: {e}")
    svc.reload(
        f"Game imported from {upload.filename}: {len(rows['steps'])} steps, "
        f"{len(rows['battles'])} battles."
    )
    return redirect(url_for("game.index", imported=upload.filename), 303)


@bp.get("/game/summary")
def summary():
    """The game's summary, to print: its own plain page, no navigation."""
    return render_template("summary.html", s=game_summary(service().store))
