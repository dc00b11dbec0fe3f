"""Fixtures for the rules tests: the shipped Risk Europe board and a state builder."""

from __future__ import annotations

import pytest

from companion.rules.board import load_map
from companion.rules.state import from_dict


@pytest.fixture(scope="session")
def board():
    return load_map()


@pytest.fixture
def make_state(board):
    """make_state({"Franconia": {"blue": {"footman": 2}}}, players={"blue": {"coins": 7}})"""

    def make(units=None, players=None, castles=(), **extra):
        territories = {name: {"units": per_colour} for name, per_colour in (units or {}).items()}
        for name in castles:
            territories.setdefault(name, {"units": {}})["castle"] = True
        data = {
            "players": {c: {"automaton": True, **p} for c, p in (players or {}).items()},
            "territories": territories,
            **extra,
        }
        return from_dict(data, board=board)

    return make
