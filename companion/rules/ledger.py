"""Where every cube is, per colour: supply, board, tower, cup (docs/rules.md 1, "Accounting").

Per colour, supply + board + tower + cup never changes. The tower cannot be seen; its
contents follow from what went in and what came out, so a negative stock is not clamped:
it is a miscount somewhere, and is reported as a warning for the user to fix.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from companion.rules.battle import EMPTY_PROVINCE_FARMERS, Battle, Outcome, counts, nonzero

# docs/rules.md 1 "Priming the tower": Shogun and Wallenstein prime the tower at setup with
# this many cubes of each player and this many farmers; what comes out goes back to the supply.
PRIME_PLAYER_CUBES = 7
PRIME_FARMER_CUBES = 10

STOCKS = ("supply", "board", "tower", "cup")


@dataclass(frozen=True)
class Ledger:
    """Cubes per colour in each stock (zeros omitted). Methods return a new Ledger."""

    supply: Mapping[str, int] = field(default_factory=dict)
    board: Mapping[str, int] = field(default_factory=dict)
    tower: Mapping[str, int] = field(default_factory=dict)
    cup: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def start(cls, supply: Mapping[str, int]) -> Ledger:
        """A game's start: every cube in the supply."""
        return cls(supply=counts("supply", supply))

    def totals(self) -> dict[str, int]:
        """Cubes per colour over all stocks: constant across a game."""
        total: Counter = Counter()
        for stock in STOCKS:
            total.update(getattr(self, stock))
        return nonzero(total)

    def move(self, source: str, target: str, cubes: Mapping[str, int]) -> Ledger:
        """`cubes` from one stock to another (e.g. "supply" -> "board" for new armies)."""
        cubes = counts(f"{source} -> {target}", cubes)
        taken, given = Counter(getattr(self, source)), Counter(getattr(self, target))
        taken.subtract(cubes)
        given.update(cubes)
        return replace(self, **{source: nonzero(taken), target: nonzero(given)})

    def prime(
        self, players: Iterable[str], farmer: str, emerged: Mapping[str, int]
    ) -> tuple[Ledger, list[str]]:
        """Prime the tower at setup: PRIME_PLAYER_CUBES of each player and PRIME_FARMER_CUBES
        farmers go from the supply into the tower; the `emerged` cubes go back to the supply."""
        thrown = {colour: PRIME_PLAYER_CUBES for colour in players}
        thrown[farmer] = PRIME_FARMER_CUBES
        ledger = self.move("supply", "tower", thrown).move("tower", "supply", emerged)
        return ledger, ledger.miscounts()

    def apply(self, battle: Battle, outcome: Outcome) -> tuple[Ledger, list[str]]:
        """Move the cubes of one resolved battle; returns the new ledger and its warnings."""
        warnings = [
            f"cup: {n} {colour} in the cup were not thrown with this battle"
            for colour, n in (Counter(self.cup) - Counter(battle.cup)).items()
        ]
        # What went in (as `into_tower`), each from where it was: the empty province's farmer
        # comes from the supply.
        farmer = {battle.farmer: EMPTY_PROVINCE_FARMERS} if battle.defender is None else {}
        ledger = (
            self.move("board", "tower", battle.thrown)
            .move("supply", "tower", farmer)
            .move("cup", "tower", battle.cup)
            .move("tower", "supply", outcome.to_supply)
            .move("tower", "board", outcome.to_province)
            .move("tower", "cup", outcome.cup_after)
        )
        return ledger, warnings + ledger.miscounts()

    def miscounts(self) -> list[str]:
        """A warning per negative stock: more cubes left it than can have been there."""
        warnings = []
        for stock in STOCKS:
            for colour, n in getattr(self, stock).items():
                if n < 0:
                    where = "the tower estimate" if stock == "tower" else f"the {stock}"
                    warnings.append(
                        f"likely miscount: {where} for {colour} is {n} "
                        f"({-n} more {colour} taken out than could be there)"
                    )
        return warnings
