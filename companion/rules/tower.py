"""A model of the cube tower's inside, for the simulated table, self-play and the odds.

The real tower has baffles on which thrown cubes can lodge; later throws knock
lodged cubes loose. The model: each thrown cube lodges with probability `keep`;
each cube already inside is knocked loose with probability `release` per throw.
Numbers are rough guesses from play (a throw of ~8 cubes leaves one or two inside
and brings one or two old ones out); they only need to make the accounting work.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

KEEP_PROBABILITY = 0.2
RELEASE_PROBABILITY = 0.35


@dataclass
class TowerModel:
    rng: random.Random
    keep: float = KEEP_PROBABILITY
    release: float = RELEASE_PROBABILITY
    contents: Counter = field(default_factory=Counter)

    def throw(self, cubes: Mapping[str, int]) -> dict[str, int]:
        """Throw cubes in; return the cubes that drop out, per colour (zeros omitted)."""
        out: Counter = Counter()
        for colour in sorted(self.contents):
            loose = sum(self.rng.random() < self.release for _ in range(self.contents[colour]))
            self.contents[colour] -= loose
            out[colour] += loose
        for colour in sorted(cubes):
            if cubes[colour] < 0:
                raise ValueError(f"cannot throw {cubes[colour]} {colour} cubes")
            kept = sum(self.rng.random() < self.keep for _ in range(cubes[colour]))
            self.contents[colour] += kept
            out[colour] += cubes[colour] - kept
        self.contents = +self.contents
        return dict(+out)

    def inside(self) -> dict[str, int]:
        return dict(+self.contents)
