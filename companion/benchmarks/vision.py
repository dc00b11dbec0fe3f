"""vision benchmark. PLACEHOLDER until its issue lands."""
from __future__ import annotations

from companion.errors import CompanionError


def add_arguments(parser) -> None:
    pass


def run(args) -> int:
    raise CompanionError("not built yet")
