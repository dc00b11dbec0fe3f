"""How sticky this table's tower is, learned from its own throws (issue 43).

The tower model (`companion.rules.tower`): each thrown cube lodges with probability `keep`, each
cube already inside is knocked loose with probability `release` per throw, every cube on its own.
The ledger knows, for every applied throw, what went in, what came out and what the tower held
before it (what went in earlier minus what came out), so per colour the cubes that came out are
the sum of two binomials: Bin(thrown, 1 - keep) + Bin(inside, release). `estimate` weighs that
likelihood over a grid of (keep, release) with a Beta prior centred on the model's defaults, and
gives the posterior mean: a grid is exact enough (0.02 steps, and the mean falls between them)
and needs no optimiser; the prior holds the estimate near the usual tower until throws tell
otherwise.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from companion.rules.tower import KEEP_PROBABILITY, RELEASE_PROBABILITY

# The grid's cell centres, 0.01 to 0.99, for keep and for release.
GRID = (np.arange(50) + 0.5) / 50
# The prior's weight in cubes: Beta(mean * weight, (1 - mean) * weight). Twenty cubes' worth is
# less than three throws of a battle, so a tower unlike the usual one shows within a few throws.
PRIOR_CUBES = 20
# "about 1 in N": the largest N said.
MOST_IN = 10


@dataclass(frozen=True)
class Throw:
    """One throw, per colour: what went into the tower, what it held before, what came out."""

    thrown: Mapping[str, int]
    inside: Mapping[str, int]
    emerged: Mapping[str, int]


@dataclass(frozen=True)
class Stickiness:
    keep: float
    release: float
    throws: int

    def text(self) -> str:
        told = (
            f"keeps about {_one_in(self.keep)} cubes and releases about "
            f"{_one_in(self.release)} of what it holds"
        )
        if not self.throws:
            return f"no throws yet: assuming a tower that {told}, as most do"
        return f"this tower {told}, from {self.throws} throw{'s' * (self.throws != 1)}"

    def to_dict(self) -> dict:
        return {
            "keep": round(self.keep, 3),
            "release": round(self.release, 3),
            "throws": self.throws,
            "text": self.text(),
        }


def _one_in(p: float) -> str:
    """0.2 -> '1 in 5', 0.35 -> '1 in 3', 0.7 -> '2 in 3'."""
    share = Fraction(p).limit_denominator(MOST_IN)
    return f"{max(share.numerator, 1)} in {share.denominator}" if share else f"1 in {MOST_IN}+"


def prior() -> Stickiness:
    return Stickiness(KEEP_PROBABILITY, RELEASE_PROBABILITY, 0)


def estimate(throws: Sequence[Throw]) -> Stickiness:
    """The posterior mean of (keep, release) given the throws (the prior alone without any)."""
    log_post = (
        _log_beta(GRID, KEEP_PROBABILITY)[:, None] + _log_beta(GRID, RELEASE_PROBABILITY)[None, :]
    )
    terms: Counter = Counter()
    for throw in throws:
        for colour in set(throw.thrown) | set(throw.inside) | set(throw.emerged):
            t, i = throw.thrown.get(colour, 0), max(throw.inside.get(colour, 0), 0)
            if t or i:
                # A miscount can claim more came out than could: take what could.
                terms[t, i, min(max(throw.emerged.get(colour, 0), 0), t + i)] += 1
    for (t, i, e), times in terms.items():
        log_post += times * _log_likelihood(t, i, e)
    weights = np.exp(log_post - log_post.max())
    weights /= weights.sum()
    return Stickiness(
        keep=float((weights.sum(axis=1) * GRID).sum()),
        release=float((weights.sum(axis=0) * GRID).sum()),
        throws=len(throws),
    )


# Throws repeat (t, i, e) often, and every battle asks again with all the table's throws: the
# grids are kept (20 kB each).
@lru_cache(maxsize=512)
def _log_likelihood(thrown: int, inside: int, emerged: int) -> np.ndarray:
    """log P(emerged | keep, release) over the grid: out of the thrown x ~ Bin(thrown, 1 - keep),
    knocked loose emerged - x ~ Bin(inside, release)."""
    x = np.arange(max(0, emerged - inside), min(thrown, emerged) + 1)
    out = _binomial(thrown, x, 1 - GRID)  # (keep, x)
    loose = _binomial(inside, emerged - x, GRID)  # (release, x)
    return np.log(np.maximum(out @ loose.T, 1e-300))


def _binomial(n: int, k: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The binomial pmf for each p (rows) and k (columns)."""
    comb = np.array([math.comb(n, int(j)) for j in k], dtype=float)
    return comb * p[:, None] ** k * (1 - p[:, None]) ** (n - k)


def _log_beta(grid: np.ndarray, mean: float) -> np.ndarray:
    a, b = mean * PRIOR_CUBES, (1 - mean) * PRIOR_CUBES
    return (a - 1) * np.log(grid) + (b - 1) * np.log(1 - grid)
