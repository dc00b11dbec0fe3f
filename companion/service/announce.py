"""One clear sentence per event: the same words on the page, in the log and spoken.

Colours are always named in words (colour-blind players read the text too).
"""

from __future__ import annotations

from collections.abc import Mapping

from companion.rules.battle import CONQUERED, DEVASTATED, HELD
from companion.service.phases import PRIME, BattleRecord


def cubes(counts: Mapping[str, int], empty: str = "nothing") -> str:
    """{"blue": 4, "red": 3, "yellow": 1} -> "4 blue, 3 red and 1 yellow"."""
    parts = [f"{n} {colour}" for colour, n in counts.items() if n]
    if not parts:
        return empty
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _sides_first(record: BattleRecord, counts: Mapping[str, int]) -> dict[str, int]:
    """Attacker, defender and farmer first, then the other colours: the order people read them."""
    first = [c for c in (record.attacker, record.defender, record.farmer) if c in counts]
    return {c: counts[c] for c in first + [c for c in counts if c not in first]}


def _where(record: BattleRecord) -> str:
    return f" in {record.territory}" if record.territory else ""


def _target(record: BattleRecord) -> str:
    if record.defender is None:
        return f"an empty province{_where(record)}"
    return f"{record.defender}{_where(record)}"


def declared(record: BattleRecord) -> str:
    if record.kind == PRIME:
        return (
            f"Prime the tower for the game: throw {cubes(record.into_tower)}. "
            "What comes out goes back to the supply."
        )
    armies = _sides_first(record, record.thrown)
    if record.defender is None:
        armies[f"{record.farmer} farmer"] = 1
    throw = cubes(armies)
    if record.cup:
        throw += f" and the cup: {cubes(record.cup)}"
    return f"Battle {record.id}: {record.attacker} attacks {_target(record)}. Throw {throw}."


def moving(record: BattleRecord) -> str:
    what = "Priming" if record.kind == PRIME else f"Battle {record.id}"
    return f"{what}: cubes are falling; counting when the tray is still."


def _result(record: BattleRecord) -> str:
    o = record.outcome or {}
    a, d = o.get("attacker_strength", 0), o.get("defender_strength", 0)
    if o.get("result") == HELD:
        holds = (
            f"{record.defender} holds" if record.defender else f"the {record.farmer} farmers hold"
        )
        return f"{holds}{_where(record)}, {d} against {a}"
    if o.get("result") == DEVASTATED:
        return f"the province{_where(record)} is devastated, {a} against {d}"
    if o.get("result") == CONQUERED:
        return f"{record.attacker} conquers{_where(record) or ' the province'}, {a} against {d}"
    return "no result"


def counted(record: BattleRecord) -> str:
    found = cubes(_sides_first(record, record.emerged or {}), "no cubes")
    if record.kind == PRIME:
        text = f"Priming: counted {found}, back to the supply."
    else:
        text = f"Battle {record.id}: counted {found}: {_result(record)}."
    if record.unknown:
        text += (
            f" {record.unknown} cube{'s' if record.unknown > 1 else ''} not recognised: "
            "check the count."
        )
    elif record.unsure:
        text += " Not sure of this count: check the tray."
    return text + " Confirm or correct."


def applied(record: BattleRecord) -> str:
    if record.kind == PRIME:
        return (
            f"Tower primed: {cubes(record.emerged or {}, 'no cubes')} came out and went back to "
            "the supply; the rest stays in the tower."
        )
    o = record.outcome or {}
    text = f"Battle {record.id} confirmed: {_result(record)}."
    if o.get("to_province"):
        text += f" Back onto the province: {cubes(_sides_first(record, o['to_province']))}."
    if o.get("cup_after"):
        text += f" Left in the cup: {cubes(o['cup_after'])}."
    return text


def cancelled(record: BattleRecord) -> str:
    what = "The priming" if record.kind == PRIME else f"Battle {record.id}"
    return f"{what} cancelled; nothing was changed."


def undone(step_text: str) -> str:
    return f"Undone: {step_text}"


def camera(status: str, detail: str) -> str:
    if status == "ok":
        return "Camera back; watching the tray."
    why = detail.removeprefix("camera lost: ")
    return f"Camera lost: {why}. Counting resumes when it is back."
