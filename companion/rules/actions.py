"""What an automaton does: one `Action` per behaviour performed, with the sentence for the table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.rules.board import Board
from companion.rules.dice import Roll
from companion.rules.units import describe, total

MOVES = ("expand", "split-expand", "position", "maneuver", "move")  # "move": a person's move


@dataclass(frozen=True)
class Action:
    """`action` is the behaviour actually performed, spelled as the order names (a fall-back
    says so: `instead_of` in `details`). `details` holds everything `apply_action` needs."""

    action: str
    player: str
    details: Mapping[str, Any]
    text: str
    rolls: tuple[Roll, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        out = {"action": self.action, "player": self.player, **self.details}
        if self.rolls:
            out["rolls"] = [r.to_dict() for r in self.rolls]
        out["text"] = self.text
        return out


def colour_name(colour: str) -> str:
    return colour[:1].upper() + colour[1:]


def move_text(
    board: Board,
    verb: str,
    colour: str,
    path: list[str],
    units: Mapping[str, int],
    stays: Mapping[str, int],
    defender: str | None,
    defenders: int,
    battle: bool,
    why: str = "",
) -> str:
    """'Blue expands from Franconia into Saxony (Berlin) with 5: 4 cavalry, 1 footman;
    1 footman stays.' plus what happens on arrival."""
    through = "".join(f" through {board.label(t)}" for t in path[1:-1])
    text = (
        f"{colour_name(colour)} {verb} from {board.label(path[0])}{through} "
        f"{'into' if verb != 'maneuvers' else 'to'} {board.label(path[-1])}{why} "
        f"with {total(units)}: {describe(units)}"
    )
    if stays:
        n = total(stays)
        text += f"; {describe(stays)} {'stays' if n == 1 else 'stay'}"
    text += "."
    if defender:
        text += f" {colour_name(defender)} defends with {defenders}: battle."
    elif battle:
        text += " The territory is empty: one farmer defends it, battle."
    return text
