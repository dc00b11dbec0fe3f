"""The Game page (`/game`): new game, the board as a filterable table, human moves and
purchases (validated by the rules behind the API), the history with undo.

The page is a shell; its script reads `/api/state` and `/api/pages/board` and follows `/events`.
"""
from __future__ import annotations

from flask import Blueprint, render_template

from companion.rules.units import CASTLE, UNIT_TYPES
from companion.web.pages_api import app_config, shipped_maps

bp = Blueprint("game", __name__)


@bp.get("/game")
def index():
    config = app_config()
    setup = {"colours": list(config.colours.players), "maps": shipped_maps(), "map": config.game.map,
             "unit_types": list(UNIT_TYPES), "items": [*UNIT_TYPES, CASTLE],
             "physical_dice": config.game.physical_dice}
    return render_template("game.html", setup=setup)
