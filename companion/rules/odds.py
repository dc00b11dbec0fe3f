"""The odds of a declared battle before the throw (issue 43): conquered, held, devastated, and
the cubes expected out per colour.

Monte Carlo through the tower model (`companion.rules.tower`, each cube on its own: a thrown one
lodges with `keep`, one inside is knocked loose with `release`), drawn as binomials per colour
for all samples at once with numpy, from a seeded generator so the same battle always gets the
same odds. Each distinct emergence of the colours that count is resolved once by the battle
resolver (`companion.rules.battle.resolve`) and weighted by how often it was drawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from companion.rules.battle import CONQUERED, DEVASTATED, HELD, Battle, into_tower, resolve
from companion.rules.stickiness import Stickiness

SAMPLES = 4000
RESULTS = (CONQUERED, HELD, DEVASTATED)


@dataclass(frozen=True)
class Odds:
    chances: Mapping[str, float]  # result -> probability
    expected: Mapping[str, float]  # colour -> cubes expected out of the tower
    stickiness: Stickiness
    inside: Mapping[str, int]  # the tower's estimated contents the odds assume
    samples: int

    def to_dict(self) -> dict:
        return {
            "chances": {r: round(p, 3) for r, p in self.chances.items()},
            "expected": {c: round(n, 2) for c, n in self.expected.items()},
            "stickiness": self.stickiness.to_dict(),
            "inside": dict(self.inside),
            "samples": self.samples,
        }


def battle_odds(
    battle: Battle,
    inside: Mapping[str, int],
    stickiness: Stickiness,
    samples: int = SAMPLES,
    seed: int = 0,
) -> Odds:
    """The odds of `battle` (its `emerged` is ignored) thrown into a tower holding `inside`."""
    into = into_tower(battle)
    # A negative tower estimate is a miscount: the tower holds none of that colour.
    held = {c: n for c, n in inside.items() if n > 0}
    colours = sorted(set(into) | set(held))
    thrown = np.array([into.get(c, 0) for c in colours])
    rng = np.random.default_rng(seed)
    emerged = (
        thrown
        - rng.binomial(thrown, stickiness.keep, size=(samples, len(colours)))
        + rng.binomial(
            [held.get(c, 0) for c in colours], stickiness.release, size=(samples, len(colours))
        )
    )
    # Only the sides' and the farmers' cubes decide the result: resolve each distinct draw once.
    sides = [c for c in (battle.attacker, battle.defender, battle.farmer) if c in colours]
    columns = [colours.index(c) for c in sides]
    draws, times = np.unique(emerged[:, columns], axis=0, return_counts=True)
    chances = dict.fromkeys(RESULTS, 0.0)
    for draw, n in zip(draws, times, strict=True):
        outcome = resolve(replace(battle, emerged=dict(zip(sides, draw.tolist(), strict=True))))
        chances[outcome.result] += int(n) / samples
    expected = {c: float(m) for c, m in zip(colours, emerged.mean(axis=0), strict=True) if m}
    return Odds(
        chances=chances, expected=expected, stickiness=stickiness, inside=held, samples=samples
    )
