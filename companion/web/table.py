"""The Table page (`/`): what to do now, the battle being counted, corrections, the ledger.

The page is a shell; its script reads `/api/state` and follows `/events`.
"""

from __future__ import annotations

from flask import Blueprint, render_template

from companion.rules.ledger import PRIME_FARMER_CUBES, PRIME_PLAYER_CUBES
from companion.web.pages_api import app_config

bp = Blueprint("table", __name__)


@bp.get("/")
def index():
    colours = app_config().colours
    return render_template(
        "table.html",
        colours={"players": list(colours.players), "farmer": colours.farmer},
        prime={"player_cubes": PRIME_PLAYER_CUBES, "farmer_cubes": PRIME_FARMER_CUBES},
    )
