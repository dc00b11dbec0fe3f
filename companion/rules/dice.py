"""Dice (docs/rules.md section 4): every roll is a seeded draw, or a value the table
supplies, and is logged.

A `Dice` is handed to every decision that may need a roll (ties, siege assaults, shuffles), so a
turn replays exactly from its seed. For physical dice, pass `source`: a callable asked for each
roll (`source(sides, reason) -> value`), e.g. one that prompts the table and waits.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from companion.errors import CompanionError

T = TypeVar("T")
DIE_SIDES = 6


class DiceError(CompanionError):
    """A supplied die value is impossible."""


@dataclass(frozen=True)
class Roll:
    sides: int
    value: int
    reason: str

    def to_dict(self) -> dict:
        return {"die": self.sides, "value": self.value, "reason": self.reason}


class Dice:
    def __init__(
        self, seed: int | None = None, source: Callable[[int, str], int] | None = None
    ) -> None:
        self._random = random.Random(seed)
        self._source = source
        self.log: list[Roll] = []

    def roll(self, reason: str, sides: int = DIE_SIDES, faces: Sequence[str] = ()) -> int:
        """One die of `sides` faces (1..sides), logged with why it was rolled. `faces` name what
        each value picks: a table rolling a physical die is told ("1 Saxony, 2 Bohemia")."""
        if self._source is not None:
            told = (
                f"{reason} ({', '.join(f'{i} {f}' for i, f in enumerate(faces, 1))})"
                if faces
                else reason
            )
            value = self._source(sides, told)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= sides:
                raise DiceError(
                    f"die roll for {reason}: {value!r} is not a value from 1 to {sides}"
                )
        else:
            value = self._random.randint(1, sides)
        self.log.append(Roll(sides, value, reason))
        return value

    def choose(self, options: Sequence[T], reason: str) -> T:
        """One of tied `options`: a die with one face per option (no roll for a single option)."""
        if len(options) == 1:
            return options[0]
        return options[self.roll(reason, len(options), [_face(o) for o in options]) - 1]

    def shuffle(self, items: Sequence[T], reason: str) -> list[T]:
        """A shuffled copy, drawn as a sequence of logged rolls (one per position)."""
        rest, out = list(items), []
        while rest:
            out.append(rest.pop(self.roll(reason, len(rest)) - 1 if len(rest) > 1 else 0))
        return out

    def rolls_since(self, mark: int) -> tuple[Roll, ...]:
        return tuple(self.log[mark:])


def _face(option: object) -> str:
    """A few words for one tied option: a territory's name, or "from to where" for a move
    (the rules' options are names, start entries, paths and (army, destination, ...) tuples)."""
    if isinstance(option, str):
        return option
    if isinstance(option, list) and option:
        return _face(option[-1])  # a path: where it ends
    if isinstance(option, tuple) and len(option) >= 2:
        return f"{_face(option[0])} to {_face(option[1])}"
    territory = getattr(option, "territory", None)
    return territory if isinstance(territory, str) else str(option)


def best(items: Sequence[T], key: Callable[[T], tuple], dice: Dice, reason: str) -> T | None:
    """The item with the highest `key` (a tuple, the card's priorities in order); items tied on
    every priority are settled by a logged die roll. None when there are no items."""
    if not items:
        return None
    keys = [key(item) for item in items]
    top = max(keys)
    return dice.choose([item for item, k in zip(items, keys, strict=True) if k == top], reason)
