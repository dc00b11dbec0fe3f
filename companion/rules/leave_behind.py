"""Leave-behind (card): how many units an army leaves when it departs, and which."""

from __future__ import annotations

from companion.rules.board import Board
from companion.rules.units import Units, minus, take_cheapest, total

NON_CITY_LEAVE = 1  # "Non-urban territory: always leave 1 unit."


def required(board: Board, territory: str) -> int:
    """A city leaves its tax value; any other territory leaves 1."""
    return board.tax[territory] if board.is_city(territory) else NON_CITY_LEAVE


def split(board: Board, territory: str, units: Units) -> tuple[dict[str, int], dict[str, int]]:
    """(stays, moves): the cheapest units stay (footmen, archers, siege engines, cavalry)."""
    stays = take_cheapest(units, min(required(board, territory), total(units)))
    return stays, minus(units, stays)
