"""The board drawn as a map: where each territory goes on the page, and what it shows.

Places come from the map file's `at` (lon, lat), projected equirectangularly with longitude
shrunk by the cosine of the middle latitude (true shapes around the map's middle, which is
all a board needs), then nudged apart until no two territories' labels overlap. A map without
`at` is laid out in a grid, in file order. Everything here is pure: board and state in,
numbers and strings out; `board_map.py` serves it, `templates/_map_board.html` draws it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from companion.rules.actions import MOVES
from companion.rules.board import Board
from companion.rules.units import BEST_FIRST, describe

# The projected map's width before territories are nudged apart: small enough that a laptop
# shows the whole map with 12 px labels, large enough that few territories need nudging.
WIDTH = 700
MARGIN = 24
RADIUS = 15  # a territory's disc
CHAR = 7.4  # a label character's width at the map's font size (13 px, bold)
# A territory takes this much room around its centre: the crown above the disc, the name and
# one line of units below it.
ABOVE, BELOW = 32, 50
GAP = 4
GRID_CELL = (150, 110)
SHORT = {"footman": "F", "archer": "A", "cavalry": "C", "siege_engine": "S"}


@dataclass(frozen=True)
class Place:
    name: str
    x: float
    y: float


@dataclass(frozen=True)
class Layout:
    places: Mapping[str, Place]
    width: float
    height: float


def project(at: Mapping[str, tuple[float, float]], width: float = WIDTH) -> dict[str, Place]:
    """(lon, lat) to page points: west left, north up, fitted to `width` less the margins."""
    lons = [lon for lon, _ in at.values()]
    lats = [lat for _, lat in at.values()]
    shrink = math.cos(math.radians((min(lats) + max(lats)) / 2))
    span = max((max(lons) - min(lons)) * shrink, max(lats) - min(lats), 1e-9)
    scale = (width - 2 * MARGIN) / span
    return {
        name: Place(
            name, MARGIN + (lon - min(lons)) * shrink * scale, MARGIN + (max(lats) - lat) * scale
        )
        for name, (lon, lat) in at.items()
    }


def half_width(name: str) -> float:
    """Half the room a territory's label takes across."""
    return max(len(name) * CHAR, 2 * RADIUS + 30) / 2 + GAP


def spread(places: Mapping[str, Place], rounds: int = 300) -> dict[str, Place]:
    """Places nudged apart until no two territories' boxes (disc, name, units) overlap: each
    overlapping pair moves apart along the axis it overlaps least on, half each."""
    pos = {n: [p.x, p.y] for n, p in places.items()}
    names = list(pos)
    for _ in range(rounds):
        moved = False
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                (ax, ay), (bx, by) = pos[a], pos[b]
                over_x = half_width(a) + half_width(b) - abs(ax - bx)
                over_y = ABOVE + BELOW + GAP - abs(ay - by)
                if over_x <= 0 or over_y <= 0:
                    continue
                moved = True
                if over_x * 1.5 < over_y:  # labels are wide: moving sideways is preferred
                    step = (over_x / 2 + 0.5) * (1 if bx >= ax else -1)
                    pos[a][0] -= step
                    pos[b][0] += step
                else:
                    step = (over_y / 2 + 0.5) * (1 if by >= ay else -1)
                    pos[a][1] -= step
                    pos[b][1] += step
        if not moved:
            break
    return {n: Place(n, x, y) for n, (x, y) in pos.items()}


def grid(names: tuple[str, ...]) -> dict[str, Place]:
    """A map without places: rows of territories in file order."""
    columns = math.ceil(math.sqrt(len(names)))
    w, h = GRID_CELL
    return {
        n: Place(n, (i % columns + 0.5) * w, (i // columns) * h + ABOVE)
        for i, n in enumerate(names)
    }


@lru_cache(maxsize=8)
def layout(board: Board) -> Layout:
    """The board's places, moved so that the drawing starts at (0, 0) with a margin."""
    places = spread(project(board.at)) if board.at else grid(board.territories)
    left = min(p.x - half_width(n) for n, p in places.items()) - MARGIN / 2
    top = min(p.y - ABOVE for p in places.values()) - MARGIN / 2
    right = max(p.x + half_width(n) for n, p in places.items()) + MARGIN / 2
    bottom = max(p.y + BELOW for p in places.values()) + MARGIN / 2
    return Layout(
        {n: Place(n, round(p.x - left, 1), round(p.y - top, 1)) for n, p in places.items()},
        round(right - left, 1),
        round(bottom - top, 1),
    )


def initials(colours: list[str]) -> dict[str, str]:
    """The shortest prefix that tells each colour from the others ('R', 'Bla', 'Blu')."""
    out = {}
    for c in colours:
        n = 1
        while n < len(c) and any(o != c and o[:n].lower() == c[:n].lower() for o in colours):
            n += 1
        out[c] = c[:n].capitalize()
    return out


def short(units: Mapping[str, int]) -> str:
    """'4C 1F': best first, one letter per unit type (the map's key says which)."""
    return " ".join(f"{units[k]}{SHORT[k]}" for k in BEST_FIRST if units.get(k))


@dataclass(frozen=True)
class Arrow:
    player: str
    points: tuple[tuple[float, float], ...]
    label: str  # what moves, short: "Blue 4C 1F"
    text: str  # in words, for screen readers
    siege: bool
    label_at: tuple[float, float]

    @property
    def label_width(self) -> float:
        return round(len(self.label) * CHAR + 12, 1)


def view(
    board: Board,
    game: Mapping[str, Any] | None,
    turn: Mapping[str, Any] | None,
    battle: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """What `_map_board.html` draws from the state the pages read (`/api/state`'s game, automaton
    and battle): the places, links, each territory's owners and units, the automaton's
    pending move as arrows, and the territories where a battle is fought."""
    places = layout(board)
    territories = (game or {}).get("territories", {})
    colours = list((game or {}).get("players", {}))
    arrows, fights = [], set()
    if turn and turn.get("status") == "waiting":
        for action in turn.get("actions", []):
            arrow = _arrow(action, places)
            if arrow:
                arrows.append(arrow)
                if action.get("battle") or action["action"] == "siege-assault":
                    fights.add(action["to"])
    if battle and battle.get("territory") in places.places:
        fights.add(battle["territory"])
    links = sorted({tuple(sorted((a, b))) for a in board.territories for b in board.adjacent[a]})
    crowns = set(board.gold_crown_cities)
    return {
        "layout": places,
        "links": [(places.places[a], places.places[b], board.across_sea(a, b)) for a, b in links],
        "territories": [
            {
                "place": places.places[name],
                "city": board.cities.get(name),
                "tax": board.tax_of(name),
                "crown": name in crowns,
                "adjacent": board.adjacent[name],
                "units": dict(territories.get(name, {}).get("units", {})),
                "described": {
                    c: describe(u) for c, u in territories.get(name, {}).get("units", {}).items()
                },
                "castle": bool(territories.get(name, {}).get("castle")),
                "revolt": territories.get(name, {}).get("revolt_markers", 0),
                "fight": name in fights,
            }
            for name in board.territories
        ],
        "initials": initials(colours),
        "short": short,
        "arrows": arrows,
        "focus": _focus(places, [p for a in arrows for p in a.points], fights),
        "radius": RADIUS,
    }


def _arrow(action: Mapping[str, Any], places: Layout) -> Arrow | None:
    if action.get("action") not in MOVES + ("siege-assault",):
        return None
    path = action.get("path") or [action.get("from"), action.get("to")]
    if not all(t in places.places for t in path):
        return None
    siege = action["action"] == "siege-assault"
    player = str(action.get("player", ""))
    what = f"{action.get('siege_engines', 0)}S fire" if siege else short(action.get("units", {}))
    words = (
        f"{action.get('siege_engines', 0)} siege engines fire"
        if siege
        else describe(action.get("units", {}))
    )
    points = [(places.places[t].x, places.places[t].y) for t in path]
    label = f"{player.capitalize()} {what}"
    return Arrow(
        player,
        _trimmed(points, RADIUS + 4, RADIUS + 9),
        label,
        f"{player.capitalize()}: {words} from {path[0]} to {path[-1]}",
        siege,
        _label_at(points, len(label) * CHAR / 2 + 6, places),
    )


def _label_at(
    points: list[tuple[float, float]], half: float, places: Layout
) -> tuple[float, float]:
    """Where along the arrow's middle leg, or beside it, its label hides the least: no
    territory's disc if it can, then as few names as it can; the middle when all are equal."""
    i = len(points) // 2
    (ax, ay), (bx, by) = points[i - 1], points[i]
    length = math.dist((ax, ay), (bx, by)) or 1.0
    across = (-(by - ay) / length, (bx - ax) / length)  # a unit step square to the leg
    candidates = [
        (ax + (bx - ax) * share + across[0] * side, ay + (by - ay) * share + across[1] * side)
        for side in (0, 22, -22, 40, -40, 60, -60)
        for share in (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8)
    ]

    def hidden(x: float, y: float) -> int:
        score = 0
        for name, p in places.places.items():
            if abs(x - p.x) < half + RADIUS + 4 and p.y - RADIUS - 24 < y < p.y + RADIUS + 11:
                score += 10  # a disc (with its crown above)
            elif abs(x - p.x) < half + half_width(name) and p.y + RADIUS - 8 < y < p.y + BELOW:
                score += 1  # a name or its units
        return score

    x, y = min(candidates, key=lambda c: hidden(*c))
    return round(x, 1), round(y, 1)


def _trimmed(
    points: list[tuple[float, float]], start: float, end: float
) -> tuple[tuple[float, float], ...]:
    """The arrow's line without its ends inside the discs it joins."""

    def towards(a, b, d):
        length = math.dist(a, b) or 1.0
        return (
            round(a[0] + (b[0] - a[0]) * d / length, 1),
            round(a[1] + (b[1] - a[1]) * d / length, 1),
        )

    return (
        towards(points[0], points[1], start),
        *points[1:-1],
        towards(points[-1], points[-2], end),
    )


def _focus(places: Layout, points: list[tuple[float, float]], fights: set[str]) -> str:
    """The viewBox around the move and the battle ('x y w h'), at least a quarter of the map
    wide so that the neighbours show too; the whole map when nothing happens."""
    points = points + [(places.places[t].x, places.places[t].y) for t in fights]
    if not points:
        return f"0 0 {places.width} {places.height}"
    xs, ys = [x for x, _ in points], [y for _, y in points]
    w = min(max(max(xs) - min(xs) + 200, places.width / 3), places.width)
    h = min(max(max(ys) - min(ys) + 160, w * 0.75), places.height)
    x = min(max((min(xs) + max(xs) - w) / 2, 0), places.width - w)
    y = min(max((min(ys) + max(ys) - h) / 2, 0), places.height - h)
    return f"{x:.0f} {y:.0f} {w:.0f} {h:.0f}"
