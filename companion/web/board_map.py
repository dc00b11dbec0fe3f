"""The board as a map (`GET /map`): an HTML fragment holding the SVG map of the game in play
(or of the configured map before a game starts) and its key. The Game and Table pages fetch
it whenever the state changes (`static/map.js`); the drawing is `mapview.py` + `_map_board.html`.
"""

from __future__ import annotations

from flask import Blueprint, render_template

from companion.rules.units import describe
from companion.service.turns import board as cached_board
from companion.web import mapview, service
from companion.web.pages_api import app_config

bp = Blueprint("board_map", __name__)


@bp.get("/map")
def fragment():
    svc = service()
    state = svc.state() if svc is not None else {}
    game = state.get("game")
    board = cached_board(game["map"] if game else app_config().game.map)
    drawn = mapview.view(board, game, state.get("automaton"), state.get("battle"))
    return render_template("_map_board.html", **drawn, describe=describe)
