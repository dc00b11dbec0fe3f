"""How the table's game, ledger and open turn are stored and shown (plain dicts)."""

from __future__ import annotations

from dataclasses import asdict

from companion.rules.ledger import Ledger


def shown(turn: dict | None) -> dict | None:
    """The open turn as the page sees it (without the proposed game, kept for the
    confirmation)."""
    return None if turn is None else {k: v for k, v in turn.items() if k != "proposed"}


def game_dict(game, log: bool = True) -> dict | None:
    if game is None:
        return None
    data = game.to_dict()
    if not log:
        data.pop("log", None)
    return data


def ledger_dict(ledger: Ledger) -> dict:
    return {k: dict(v) for k, v in asdict(ledger).items()}


def ledger_from(data: dict | None) -> Ledger:
    return Ledger(**(data or {}))
