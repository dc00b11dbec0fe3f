"""The board: territories, cities and their tax, adjacency, sea lines, the solo start.

Maps are JSON files in the format of `companion/maps/risk-europe.json` (the default). A user's
own map file (to correct a disputed link, say) loads the same way and is checked the same way:
every problem is an error naming the territory.

`"at": [lon, lat]` places a territory (its region's geographic centre) for the drawn map. It is
optional so that a user's own map plays without it (the page then lays territories out in a
grid), but a map gives it for every territory or for none: a half-placed map is a mistake.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from companion.errors import CompanionError
from companion.rules.units import PRICES, UNIT_TYPES

DEFAULT_MAP = "risk-europe"
# Box limits when a map file has no "box" (the Risk Europe box).
DEFAULT_BOX = {
    "per_colour": {"footman": 35, "archer": 12, "cavalry": 12, "siege_engine": 4},
    "castles": 8,
    "crown_cards": 8,
}


class MapError(CompanionError):
    """A map file is wrong; the message names the file and the territory."""


@dataclass(frozen=True)
class StartPartner:
    options: tuple[str, ...]  # more than one: roll a die between them ("A|B" in the file)
    footmen: int


@dataclass(frozen=True)
class StartEntry:
    """One gold-crown capital of the solo setup and the partner territories tried in order."""

    territory: str
    footmen: int
    partners: tuple[StartPartner, ...]


@dataclass(frozen=True, eq=False)
class Board:
    name: str
    territories: tuple[str, ...]  # file order: the order every scan goes in (reproducible)
    adjacent: Mapping[str, tuple[str, ...]]
    cities: Mapping[str, str]  # territory -> city name
    tax: Mapping[str, int]  # territory -> tax value (cities only)
    sea: frozenset[frozenset[str]]
    start: tuple[StartEntry, ...]
    box: Mapping[str, int]  # per colour, per unit type
    castles: int
    crown_cards: int
    distance: Mapping[str, Mapping[str, int]] = field(repr=False)
    at: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # (lon, lat) or empty

    def is_city(self, territory: str) -> bool:
        return territory in self.tax

    def tax_of(self, territory: str) -> int:
        return self.tax.get(territory, 0)

    def across_sea(self, a: str, b: str) -> bool:
        return frozenset((a, b)) in self.sea

    def label(self, territory: str) -> str:
        """'Saxony (Berlin)' for a city, else the territory name."""
        city = self.cities.get(territory)
        return f"{territory} ({city})" if city and city != territory else territory

    @property
    def gold_crown_cities(self) -> tuple[str, ...]:
        return tuple(entry.territory for entry in self.start)


def load_map(name_or_path: str | Path = DEFAULT_MAP) -> Board:
    """A shipped map by name ("risk-europe") or a map file by path; raises MapError."""
    text_name = str(name_or_path)
    shipped = resources.files("companion") / "maps" / f"{text_name}.json"
    if "/" not in text_name and not text_name.endswith(".json") and shipped.is_file():
        return board_from_dict(json.loads(shipped.read_text(encoding="utf-8")), text_name)
    path = Path(name_or_path)
    if not path.is_file():
        raise MapError(f"{text_name}: no such map file (shipped maps: {DEFAULT_MAP})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise MapError(f"{path}: not valid JSON ({e})") from None
    return board_from_dict(data, str(path))


def board_from_dict(data: Any, source: str = "map") -> Board:
    """Build and check a Board from the map file's JSON object."""

    def fail(message: str) -> MapError:
        return MapError(f"{source}: {message}")

    if not isinstance(data, dict) or not isinstance(data.get("territories"), list):
        raise fail("expected an object with a 'territories' list")
    names: list[str] = []
    adjacent: dict[str, tuple[str, ...]] = {}
    cities: dict[str, str] = {}
    tax: dict[str, int] = {}
    at: dict[str, tuple[float, float]] = {}
    for i, entry in enumerate(data["territories"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise fail(f"territories[{i}]: expected an object with a 'name'")
        name = entry["name"]
        if name in adjacent:
            raise fail(f"territory {name!r} is listed twice")
        links = entry.get("adjacent", [])
        if not isinstance(links, list) or not all(isinstance(x, str) for x in links):
            raise fail(f"territory {name!r}: 'adjacent' must be a list of territory names")
        names.append(name)
        adjacent[name] = tuple(links)
        if "city" in entry:
            value = entry.get("tax")
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise fail(
                    f"territory {name!r}: city {entry['city']!r} needs a tax value "
                    f"(a whole number >= 1), got {value!r}"
                )
            cities[name] = str(entry["city"])
            tax[name] = value
        elif "tax" in entry:
            raise fail(f"territory {name!r} has a tax value but no city")
        if "at" in entry:
            at[name] = _place(entry["at"], name, fail)
    unplaced = [n for n in names if n not in at]
    if at and unplaced:
        raise fail(
            f"'at' is given for {len(at)} territories but not for {', '.join(unplaced)} "
            f"(give it for every territory or for none)"
        )
    for name in names:
        for other in adjacent[name]:
            if other not in adjacent:
                raise fail(f"territory {name!r} lists unknown neighbour {other!r}")
            if other == name:
                raise fail(f"territory {name!r} lists itself as adjacent")
            if name not in adjacent[other]:
                raise fail(
                    f"territory {name!r} lists {other!r} as adjacent but {other!r} "
                    f"does not list {name!r} (links must be symmetric)"
                )
    sea = set()
    for pair in data.get("sea", []):
        if not (isinstance(pair, list) and len(pair) == 2 and all(p in adjacent for p in pair)):
            raise fail(f"sea link {pair!r}: expected two known territory names")
        if pair[1] not in adjacent[pair[0]]:
            raise fail(f"sea link {pair[0]!r}-{pair[1]!r} is not a link in 'adjacent'")
        sea.add(frozenset(pair))
    start = tuple(_start_entry(e, adjacent, cities, fail) for e in data.get("start", []))
    box_data = data.get("box", DEFAULT_BOX)
    box = dict(DEFAULT_BOX["per_colour"]) | dict(box_data.get("per_colour", {}))
    for kind, n in box.items():
        if kind not in UNIT_TYPES or isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise fail(f"box.per_colour.{kind}: expected a unit type with a count >= 0")
    prices = data.get("prices", PRICES)
    for kind in prices:
        if prices[kind] != PRICES.get(kind):
            # Prices are the card's (docs/rules.md 2 Interpretation); a map may only restate them.
            raise fail(
                f"prices.{kind}: {prices[kind]!r} differs from the card's price "
                f"{PRICES.get(kind)!r}"
            )
    return Board(
        name=str(data.get("name", source)),
        territories=tuple(names),
        adjacent=adjacent,
        cities=cities,
        tax=tax,
        sea=frozenset(sea),
        start=start,
        box=box,
        castles=int(box_data.get("castles", DEFAULT_BOX["castles"])),
        crown_cards=int(box_data.get("crown_cards", DEFAULT_BOX["crown_cards"])),
        distance=_distances(adjacent),
        at=at,
    )


def _place(value: Any, name: str, fail) -> tuple[float, float]:
    """A territory's [lon, lat] in degrees."""
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        and -180 <= value[0] <= 180
        and -90 <= value[1] <= 90
    ):
        return float(value[0]), float(value[1])
    raise fail(
        f"territory {name!r}: 'at' must be [longitude, latitude] in degrees "
        f"(-180..180, -90..90), got {value!r}"
    )


def _start_entry(entry: Any, adjacent, cities, fail) -> StartEntry:
    if not isinstance(entry, dict) or entry.get("territory") not in adjacent:
        raise fail(f"start entry {entry!r}: unknown territory")
    capital = entry["territory"]
    if capital not in cities:
        raise fail(f"start entry {capital!r}: a capital must be a city")
    partners = []
    for p in entry.get("partners", []):
        options = tuple(str(p.get("territory", "")).split("|"))
        for option in options:
            if option not in adjacent:
                raise fail(f"start entry {capital!r}: unknown partner territory {option!r}")
        partners.append(StartPartner(options, int(p.get("footmen", 0))))
    return StartEntry(capital, int(entry.get("footmen", 0)), tuple(partners))


def _distances(adjacent: Mapping[str, tuple[str, ...]]) -> dict[str, dict[str, int]]:
    """Steps between every pair of territories (breadth-first; 49 territories is nothing)."""
    table = {}
    for source in adjacent:
        dist = {source: 0}
        queue = deque([source])
        while queue:
            here = queue.popleft()
            for there in adjacent[here]:
                if there not in dist:
                    dist[there] = dist[here] + 1
                    queue.append(there)
        table[source] = dist
    return table
