"""The attack threshold and the castle rule (card: "To attack an enemy territory")."""

from __future__ import annotations

# (largest arriving army in the band, how many fewer than the defenders it may be).
# 1-5 must be >= defenders; 6-10 up to 3 fewer; 11-15 up to 4; 16-20 up to 5; 21+ no restriction.
THRESHOLD_BANDS = ((5, 0), (10, 3), (15, 4), (20, 5))


def may_attack(arriving: int, defenders: int, castle: bool = False, siege_engines: int = 0) -> bool:
    """May an army of `arriving` units (each counts 1) enter a territory of `defenders` enemy
    units? A castle needs at least one siege engine in the arriving army, whatever the sizes."""
    if arriving < 1:
        return False
    if castle and siege_engines < 1:
        return False
    for largest, fewer in THRESHOLD_BANDS:
        if arriving <= largest:
            return arriving >= defenders - fewer
    return True
