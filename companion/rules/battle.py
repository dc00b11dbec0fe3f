"""Tower battles (docs/rules.md section 1, seed 001): from the cubes that came out to the outcome.

Pure: a `Battle` says who fights, what was thrown and what emerged; `resolve` says where
every emerged cube goes (supply, back onto the province, or left in the tray as the new cup).
Cubes are per colour; counts are whole numbers >= 0. Colour names are compared in lower case,
as the configuration stores them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.errors import CompanionError

DEFAULT_FARMER = "green"  # Shogun's farmers; the configured `colours.farmer` overrides it.

# Where emerged cubes go.
SUPPLY, PROVINCE, CUP = "supply", "province", "cup"

# docs/rules.md 1 "What goes into the tower": an empty province is defended by one farmer army.
EMPTY_PROVINCE_FARMERS = 1
# docs/rules.md 1 "Counting": from this many revolt markers on, emerged farmers count for
# nobody (PvP)...
FARMERS_IGNORED_FROM_REVOLT_MARKERS = 2
# ...and stay in the cup.
IGNORED_FARMERS_GO_TO = CUP
# docs/rules.md 1 "Counting": emerged cubes of colours not in the battle always stay in the cup.
UNINVOLVED_GO_TO = CUP
# docs/rules.md 1 "Outcome": losses (and all counted cubes of a devastated province) go to
# the supply.
LOSSES_GO_TO = SUPPLY
# Interpretation (docs/rules.md 1 "Outcome"): farmers that fought and survived go back to the
# supply; they never occupy a province, not even the empty province they held.
SURVIVING_FARMERS_GO_TO = SUPPLY
# Interpretation (docs/rules.md 1 "Outcome", from the Wallenstein/Shogun rulebooks): a
# devastated province becomes unoccupied and neutral (its buildings and revolt markers are
# removed by whoever keeps the map).
DEVASTATED_OWNER = None

# The JSON input: key -> required? (`battle_from_dict`).
INPUT_KEYS = {
    "attacker": True,
    "defender": True,
    "thrown": True,
    "emerged": True,
    "cup": False,
    "revolt_markers": False,
    "farmer": False,
    "pending_action": False,
}

HELD, DEVASTATED, CONQUERED = "held", "devastated", "conquered"


class BattleError(CompanionError):
    """A battle description is wrong; the message names the offending key."""


@dataclass(frozen=True)
class Battle:
    """One battle. `thrown` = the armies the players throw from the board (the attacker's and
    those the defender commits), NOT the cup and NOT the empty-province farmer: `into_tower`
    adds those. `emerged` may stay empty while the battle is only planned (to ask `into_tower`).
    `pending_action`: the defender had an action planned for this province, not yet executed."""

    attacker: str
    defender: str | None  # None: an empty province, defended by a farmer
    thrown: Mapping[str, int]
    emerged: Mapping[str, int] = field(default_factory=dict)
    cup: Mapping[str, int] = field(default_factory=dict)
    revolt_markers: int = 0
    farmer: str = DEFAULT_FARMER
    pending_action: bool = False

    def __post_init__(self) -> None:
        # Validate and normalise in place (object.__setattr__: the dataclass is frozen).
        for name in ("attacker", "farmer") + (("defender",) if self.defender is not None else ()):
            object.__setattr__(self, name, colour_name(name, getattr(self, name)))
        for name in ("thrown", "emerged", "cup"):
            object.__setattr__(self, name, counts(name, getattr(self, name)))
        count("revolt_markers", self.revolt_markers)
        if not isinstance(self.pending_action, bool):
            raise BattleError(
                f"pending_action: expected true or false, got {self.pending_action!r}"
            )
        if self.attacker == self.defender:
            raise BattleError(f"defender: {self.defender!r} is also the attacker")
        if self.farmer in (self.attacker, self.defender):
            raise BattleError(f"farmer: {self.farmer!r} is also a side in this battle")
        sides = {self.attacker, self.defender} - {None}
        for colour in self.thrown:
            if colour not in sides:
                raise BattleError(
                    f"thrown.{colour}: only the attacker's and the defender's armies are "
                    f"thrown ({' and '.join(sorted(sides))}); the cup goes under 'cup'"
                )
        if not self.thrown.get(self.attacker):
            raise BattleError(f"thrown.{self.attacker}: the attacker must throw at least one army")


@dataclass(frozen=True)
class Outcome:
    """Where the emerged cubes go. Per-colour maps omit zeros; `tower_delta` = into_tower - emerged
    (negative when the tower released more of a colour than was thrown in)."""

    result: str  # HELD | DEVASTATED | CONQUERED
    attacker_strength: int
    defender_strength: int
    to_supply: Mapping[str, int]
    to_province: Mapping[str, int]
    province_owner: str | None
    cup_after: Mapping[str, int]
    revolt_marker_added: bool
    cancel_pending_action: bool
    tower_delta: Mapping[str, int]
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "attacker_strength": self.attacker_strength,
            "defender_strength": self.defender_strength,
            "to_supply": dict(self.to_supply),
            "to_province": dict(self.to_province),
            "province_owner": self.province_owner,
            "cup_after": dict(self.cup_after),
            "revolt_marker_added": self.revolt_marker_added,
            "cancel_pending_action": self.cancel_pending_action,
            "tower_delta": dict(self.tower_delta),
            "warnings": list(self.warnings),
        }


def into_tower(battle: Battle) -> dict[str, int]:
    """What goes into the tower (docs/rules.md 1): the thrown armies, every cube in the cup, and one
    farmer when the province is empty."""
    cubes = Counter(battle.thrown) + Counter(battle.cup)
    if battle.defender is None:
        cubes[battle.farmer] += EMPTY_PROVINCE_FARMERS
    return nonzero(cubes)


def resolve(battle: Battle) -> Outcome:
    """The outcome of a battle by docs/rules.md 1: strengths, result, where each emerged cube
    goes."""
    out = battle.emerged
    attacker, defender, farmer = battle.attacker, battle.defender, battle.farmer
    # docs/rules.md 1 "Counting": farmers defend an empty province; in PvP they join the defender
    # unless the province has FARMERS_IGNORED_FROM_REVOLT_MARKERS or more revolt markers.
    farmers_count = defender is None or battle.revolt_markers < FARMERS_IGNORED_FROM_REVOLT_MARKERS
    farmers = out.get(farmer, 0) if farmers_count else 0
    own = out.get(defender, 0) if defender is not None else 0
    a, d = out.get(attacker, 0), farmers + own

    moves = {SUPPLY: Counter(), PROVINCE: Counter(), CUP: Counter()}
    for colour, n in out.items():
        if colour not in (attacker, defender, farmer):
            moves[UNINVOLVED_GO_TO][colour] += n
    if not farmers_count:
        moves[IGNORED_FARMERS_GO_TO][farmer] += out.get(farmer, 0)

    if d > a:  # docs/rules.md 1 "Outcome": held
        result, owner = HELD, defender
        moves[LOSSES_GO_TO][attacker] += a
        farmer_losses = min(a, farmers)  # farmers absorb losses first, then the defender's cubes
        moves[LOSSES_GO_TO][farmer] += farmer_losses
        moves[SURVIVING_FARMERS_GO_TO][farmer] += farmers - farmer_losses
        if defender is not None:
            moves[LOSSES_GO_TO][defender] += a - farmer_losses
            moves[PROVINCE][defender] += own - (a - farmer_losses)
    elif d == a:  # docs/rules.md 1 "Outcome": devastated, both sides' counted cubes to the supply
        result, owner = DEVASTATED, DEVASTATED_OWNER
        moves[LOSSES_GO_TO][attacker] += a
        moves[LOSSES_GO_TO][farmer] += farmers
        if defender is not None:
            moves[LOSSES_GO_TO][defender] += own
    else:  # docs/rules.md 1 "Outcome": conquered; the attacker loses as many as the defence had
        result, owner = CONQUERED, attacker
        moves[LOSSES_GO_TO][attacker] += d
        moves[LOSSES_GO_TO][farmer] += farmers
        if defender is not None:
            moves[LOSSES_GO_TO][defender] += own
        moves[PROVINCE][attacker] += a - d

    tower_delta = Counter(into_tower(battle))
    tower_delta.subtract(out)
    return Outcome(
        result=result,
        attacker_strength=a,
        defender_strength=d,
        to_supply=nonzero(moves[SUPPLY]),
        to_province=nonzero(moves[PROVINCE]),
        province_owner=owner,
        cup_after=nonzero(moves[CUP]),
        # docs/rules.md 1 "Outcome": taking an empty province adds a revolt marker to it.
        revolt_marker_added=result == CONQUERED and defender is None,
        # docs/rules.md 1 "Outcome": the defender's planned, not yet executed action there is
        # cancelled.
        cancel_pending_action=result == CONQUERED and battle.pending_action,
        tower_delta=nonzero(tower_delta),
        warnings=_warnings(battle, a, d),
    )


def _warnings(battle: Battle, a: int, d: int) -> tuple[str, ...]:
    if a == 0 and d == 0:
        # Legal (0 = 0 devastates) but far more often a throw counted too early.
        side = battle.defender if battle.defender is not None else f"the farmers ({battle.farmer})"
        return (
            f"no counted cube of {battle.attacker} or {side} came out of the tower: "
            f"0 against 0 devastates the province; recount if cubes were still falling",
        )
    return ()


def battle_from_dict(obj: Any, default_farmer: str = DEFAULT_FARMER) -> Battle:
    """A `Battle` from the JSON input of `companion battle`; raises BattleError naming the key."""
    if not isinstance(obj, dict):
        raise BattleError(f"expected a JSON object describing one battle, got {type(obj).__name__}")
    for key in obj:
        if key not in INPUT_KEYS:
            raise BattleError(f"unknown key {key!r} (known: {', '.join(INPUT_KEYS)})")
    for key, required in INPUT_KEYS.items():
        if required and key not in obj:
            raise BattleError(
                f"missing key {key!r}"
                + (" (null for an empty province)" if key == "defender" else "")
            )
    return Battle(**{"farmer": default_farmer, **obj})


def colour_name(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BattleError(f"{key}: expected a colour name, got {value!r}")
    return value.strip().lower()


def count(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BattleError(f"{key}: expected a whole number, got {value!r}")
    if value < 0:
        raise BattleError(f"{key}: {value} is negative")
    return value


def counts(key: str, value: Any) -> dict[str, int]:
    """Validated per-colour counts, zeros dropped."""
    if not isinstance(value, Mapping):
        raise BattleError(f"{key}: expected colour -> count, got {value!r}")
    result: dict[str, int] = {}
    for colour, n in value.items():
        name = colour_name(f"{key}: colour", colour)
        if name in result:
            raise BattleError(f"{key}.{name}: colour given twice")
        result[name] = count(f"{key}.{name}", n)
    return nonzero(result)


def nonzero(cubes: Mapping[str, int]) -> dict[str, int]:
    """Per-colour counts without the zeros, sorted by colour (stable JSON)."""
    return {colour: n for colour, n in sorted(cubes.items()) if n}
