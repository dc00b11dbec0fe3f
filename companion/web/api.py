"""The JSON API of the table service (issue 6); the pages use it too.

Errors are `{"error": MESSAGE}`: 400 for bad JSON or input, 404 for an unknown battle,
409 for a request that does not fit the current phase or the rules.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request

from companion.errors import CompanionError
from companion.rules.state import StateError
from companion.service.phases import PhaseError
from companion.throws import record_odds
from companion.web import service
from companion.web.pages_api import app_config

bp = Blueprint("api", __name__, url_prefix="/api")


class BadRequest(CompanionError):
    """The request body is not what the endpoint takes."""


def body(required: bool = False) -> dict[str, Any]:
    """The request's JSON object ({} when there is no body and none is required)."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if required:
            raise BadRequest("expected a JSON object in the request body")
        return {}
    try:
        data = request.get_json(force=True)
    except Exception:
        raise BadRequest("the request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadRequest(f"expected a JSON object, got {type(data).__name__}")
    return data


def only(data: dict, *keys: str) -> None:
    unknown = sorted(set(data) - set(keys))
    if unknown:
        raise BadRequest(f"unknown key {unknown[0]!r} (known: {', '.join(keys) or 'none'})")


@bp.errorhandler(PhaseError)
@bp.errorhandler(StateError)
def _conflict(e: CompanionError):
    # The request is well formed but the phase or the rules do not allow it.
    return jsonify(error=str(e)), 409


@bp.errorhandler(LookupError)
def _missing(e: LookupError):
    return jsonify(error=str(e.args[0]) if e.args else "not found"), 404


@bp.errorhandler(CompanionError)
def _bad(e: CompanionError):
    return jsonify(error=str(e)), 400


@bp.get("/state")
def state():
    return jsonify(service().state())


@bp.post("/battles")
def declare():
    record = service().declare_battle(body(required=True))
    return jsonify(record.to_dict()), 201


@bp.post("/prime")
def prime():
    """The priming throw at setup; then counted and confirmed like a battle."""
    only(body())
    return jsonify(service().prime_tower().to_dict()), 201


@bp.get("/battles/<int:battle_id>")
def battle(battle_id: int):
    """The battle's record, with its odds before the throw (null for the priming, or when the
    table plays without odds: `game.show_odds`)."""
    svc = service()
    record = svc.get_battle(battle_id)
    odds = record_odds(svc.store, record) if app_config().game.show_odds else None
    return jsonify({**record.to_dict(), "odds": odds.to_dict() if odds else None})


@bp.get("/battles/<int:battle_id>/image.jpg")
def battle_image(battle_id: int):
    image = service().battle_image(battle_id)
    if image is None:
        raise LookupError(f"battle {battle_id} has no counted image")
    return Response(image, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


@bp.post("/battles/<int:battle_id>/confirm")
def confirm(battle_id: int):
    data = body()
    only(data, "emerged")
    return jsonify(service().confirm(battle_id, data.get("emerged")).to_dict())


@bp.post("/battles/<int:battle_id>/recount")
def recount(battle_id: int):
    only(body())
    return jsonify(service().recount(battle_id).to_dict())


@bp.post("/battles/<int:battle_id>/cancel")
def cancel(battle_id: int):
    only(body())
    return jsonify(service().cancel(battle_id).to_dict())


@bp.post("/undo")
def undo():
    only(body())
    return jsonify(service().undo())


@bp.get("/events")
def event_log():
    """The stored announcement log after event `after` (default: the last 100)."""
    after = request.args.get("after", "0")
    if not after.isdigit():
        raise BadRequest(f"after: expected an event id, got {after!r}")
    return jsonify(events=service().store.events(after=int(after)))


@bp.post("/speech")
def speech():
    data = body(required=True)
    only(data, "muted")
    if not isinstance(data.get("muted"), bool):
        raise BadRequest(f"muted: expected true or false, got {data.get('muted')!r}")
    return jsonify(service().set_muted(data["muted"]))


@bp.post("/game")
def new_game():
    return jsonify(service().new_game(body(required=True))), 201


@bp.post("/game/move")
def move():
    return jsonify(service().human_move(body(required=True)))


@bp.post("/game/purchase")
def purchase():
    return jsonify(service().human_purchase(body(required=True)))


@bp.post("/automaton/next")
def automaton_next():
    only(body())
    return jsonify(service().automaton_next())


@bp.post("/automaton/roll")
def automaton_roll():
    """{"value": n}: the physical die the table rolled for the automaton's decision."""
    data = body(required=True)
    only(data, "value")
    if "value" not in data:
        raise BadRequest("missing key 'value' (the number the die shows)")
    return jsonify(service().automaton_roll(data["value"]))


@bp.post("/automaton/confirm")
def automaton_confirm():
    only(body())
    return jsonify(service().automaton_confirm())
