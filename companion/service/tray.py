"""What the table remembers of the tray between settles (memory only, never stored).

The last settled contents; and while a battle waits for its throw, the tray before it and
its strays (cubes in it that are not the cup, left by mistake): they lie there before the
throw and are not counted as emerged. `read` says what a settled tray means for the open
battle; the core acts on it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from companion.service import phases

# What a settled tray means for the open battle.
KEEP = "keep"  # nothing to do (no battle, the tray before the throw, or cubes taken out)
COUNT = "count"  # the throw came out (or more cubes than counted): count it
STILL_WAITING = "still waiting"  # only cubes taken out (the cup picked up): no throw yet


def within(found: Mapping[str, int], baseline: Mapping[str, int]) -> bool:
    """True when `found` has no cube that was not already in `baseline`."""
    return all(n <= baseline.get(colour, 0) for colour, n in found.items())


@dataclass
class TrayMemory:
    last: dict[str, int] | None = None  # the last settled tray's contents
    before: dict[str, int] | None = None  # the tray before the open battle's throw
    strays: dict[str, int] | None = None  # cubes in it that are not the cup

    def armed(self, cup: Mapping[str, int]) -> None:
        """A battle was declared: what lay in the tray then lies there before the throw."""
        if self.last is None:
            self.before = self.strays = None
        else:
            self._set_before(self.last, cup)

    def read(self, status: str | None, found: Mapping[str, int], cup: Mapping[str, int]) -> str:
        """What the settled tray `found` means for the open battle in `status` (None: none)."""
        if status is None:
            self.last = dict(found)
            return KEEP
        if status == phases.COUNTED:
            # More cubes than counted, before the confirmation: one that trickled out late,
            # or a pile a player spread out. The count follows the tray. (Fewer cubes means
            # the table started clearing it: the count stands.)
            return KEEP if within(found, self.last or {}) else COUNT
        if status == phases.WAITING:
            # Still since before the throw: the tray as it is before the cubes come out.
            self.last = dict(found)
            self._set_before(found, cup)
            return KEEP
        if self.before is not None and within(found, self.before):
            self._set_before(found, cup)
            return STILL_WAITING
        return COUNT

    def emerged(self, found: Mapping[str, int]) -> dict[str, int]:
        """The cubes of a counted tray that came out of the tower (strays taken off)."""
        return dict(Counter(found) - Counter(self.strays or {}))

    def counted(self, found: Mapping[str, int]) -> None:
        self.last = dict(found)

    def before_throw(self, tray: Mapping[str, int]) -> None:
        """The cubes lying in the tray just before a throw, none of them the throw's."""
        self.before, self.strays = dict(tray), dict(tray)

    def cleared(self, left: Mapping[str, int]) -> None:
        """The table cleared the tray after a battle: only `left` (the cup) lies in it."""
        self.last = dict(left)

    def _set_before(self, tray: Mapping[str, int], cup: Mapping[str, int]) -> None:
        self.before = dict(tray)
        self.strays = dict(Counter(tray) - Counter(cup))
