"""JSON endpoints the pages need beyond the service's API (`api.py`), and the pages' access
to the app's configuration and service.

`POST /api/pages/outcome`: the outcome corrected counts would give, from the rules
(the Table page shows it while a player taps + and -, before confirming).
`GET /api/pages/board?map=NAME`: a shipped map's territories, cities, tax and neighbours.
"""

from __future__ import annotations

from importlib import resources

from flask import Blueprint, current_app, jsonify, request

from companion.config import Config
from companion.rules.battle import BattleError, battle_from_dict, resolve
from companion.rules.board import MapError, load_map
from companion.web import CONFIG_KEY

bp = Blueprint("pages_api", __name__, url_prefix="/api/pages")


def app_config() -> Config:
    """The configuration the app was created with."""
    return current_app.config[CONFIG_KEY]


@bp.post("/outcome")
def outcome():
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise BattleError(
            "expected a JSON object with attacker, defender, thrown, emerged "
            "(and optionally cup, revolt_markers)"
        )
    battle = battle_from_dict({"cup": {}, **data}, app_config().colours.farmer)
    return jsonify(outcome=resolve(battle).to_dict())


@bp.get("/board")
def board():
    """The map the Game page draws its territory table from: cities, tax, neighbours."""
    name = request.args.get("map") or app_config().game.map
    if name not in shipped_maps():
        raise MapError(f"map {name!r}: not a shipped map (shipped: {', '.join(shipped_maps())})")
    b = load_map(name)
    return jsonify(
        name=b.name,
        map=name,
        maps=shipped_maps(),
        territories=[
            {
                "name": t,
                "city": b.cities.get(t),
                "tax": b.tax_of(t),
                "adjacent": list(b.adjacent[t]),
            }
            for t in b.territories
        ],
    )


def shipped_maps() -> list[str]:
    folder = resources.files("companion") / "maps"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))
