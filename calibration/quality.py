"""The quality report: can the calibrated colours be told apart, from each other and the tray?

Distances are in units of the colour model's tolerance around a colour (its spread plus
noise): below 1 a pixel would be taken for that class. The counter names a cube from all
its pixels, so colours whose pixels overlap a little are still told apart; the warnings
start where counts were measured to go wrong (on generated tables, see the constants).

Colours that differ from the floor or from each other mainly in lightness (black, grey
and white on a grey tray) are also given their lightness difference in CIE L* units, and
whether it tells them apart (calibration.lightness).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from calibration.lightness import FloorLightness, lab, needed, spread
from vision.colour import ColourModel

# Two colours closer than this draw a warning. With a seventh paint blended from red toward
# orange or from blue toward purple (108 generated tables, 8 scenes each: scattered,
# touching, piles and changed light), 61% of the scenes were exact below 0.2, 87-92% at
# 0.2-0.6 and 98-100% at 0.6 or more; the six Shogun paints lie 0.7 or more apart (black and
# purple), and a pair was swapped in 2 of 3584 benchmark-like scenes (seeds 300000-300111,
# 400000-400063, 910000-910047).
PAIR_CLOSE = 0.6
# A colour closer than this to the tray floor draws a warning. On those 224 tables paints
# 0.5-1.0 from the floor lost no counts (black right in 99.2% of the scenes against 99.5%
# farther away); every paint closer passed for the floor in shadow, warned about below.
TRAY_CLOSE = 0.5
# Two classes differ mainly in lightness when their hue and saturation (a*b*) differ by
# less than this share of their lightness difference (black, grey, white; not blue, white).
MAINLY_LIGHTNESS = 0.5


@dataclass(frozen=True)
class ColourQuality:
    colour: str
    samples: int
    spread: float  # RMS deviation of its samples from its mean, BGR levels
    nearest: str | None  # nearest other colour
    to_nearest: float  # its separation from that colour, tolerance units
    to_tray: float  # separation from the tray floor (and its shadows)
    like_shadow: bool  # its lit tops pass for the floor in shadow (vision.counter: dark colours)


@dataclass(frozen=True)
class LightnessPair:
    """Two classes that differ mainly in lightness: a colour and the tray floor (`second`
    None; lightness from the floor, lit or in its deepest shadow) or two colours."""

    first: str
    second: str | None
    apart: float  # L* units
    needed: float  # L* units that tell them apart (calibration.lightness.needed)

    @property
    def enough(self) -> bool:
        return self.apart > self.needed

    def line(self) -> str:
        other = self.second or "the tray floor (lit or in shadow)"
        verdict = "enough" if self.enough else "too little to tell them apart by lightness"
        return (
            f"lightness {self.first} / {other}: {self.apart:.1f} L* apart "
            f"(needs {self.needed:.1f}), {verdict}"
        )


@dataclass(frozen=True)
class QualityReport:
    colours: list[ColourQuality]
    cube_size: float
    warnings: list[str] = field(default_factory=list)
    lightness: list[LightnessPair] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"cube size on the rectified floor: {self.cube_size:.1f} px"]
        for q in self.colours:
            near = f"{q.to_nearest:5.1f} from {q.nearest}" if q.nearest else "  (only colour)"
            out.append(
                f"{q.colour:>10}: {q.samples:4d} px sampled, spread {q.spread:4.1f}, "
                f"separation {near}, {q.to_tray:5.1f} from the tray"
            )
        out += [pair.line() for pair in self.lightness]
        out += [f"warning: {w}" for w in self.warnings]
        return out

    def to_dict(self) -> dict:
        return {
            "cube_size": round(self.cube_size, 2),
            "warnings": list(self.warnings),
            "colours": [
                {
                    "colour": q.colour,
                    "samples": q.samples,
                    "spread": round(q.spread, 2),
                    "nearest": q.nearest,
                    "to_nearest": round(q.to_nearest, 2),
                    "to_tray": round(q.to_tray, 2),
                    "like_shadow": q.like_shadow,
                }
                for q in self.colours
            ],
            "lightness": [
                {
                    "first": p.first,
                    "second": p.second,
                    "apart": round(p.apart, 1),
                    "needed": round(p.needed, 1),
                    "enough": p.enough,
                }
                for p in self.lightness
            ],
        }


def lightness_pairs(
    model: ColourModel, colour_pixels: dict[str, np.ndarray], floor: FloorLightness
) -> list[LightnessPair]:
    """The colour/floor and colour/colour pairs that differ mainly in lightness, with their
    lightness difference."""
    names = model.names
    values = {n: lab(np.asarray(colour_pixels[n]).reshape(-1, 3)) for n in names}
    mid = {n: np.median(v, axis=0) for n, v in values.items()}
    spreads = {n: spread(v[:, 0]) for n, v in values.items()}
    floor_ab = lab(model.floor_reference)[1:]
    pairs = []
    for n in names:
        apart = floor.apart(float(mid[n][0]))
        if np.linalg.norm(mid[n][1:] - floor_ab) < MAINLY_LIGHTNESS * apart:
            pairs.append(LightnessPair(n, None, apart, needed(floor.spread, spreads[n])))
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            apart = abs(float(mid[a][0] - mid[b][0]))
            if np.linalg.norm(mid[a][1:] - mid[b][1:]) < MAINLY_LIGHTNESS * apart:
                pairs.append(LightnessPair(a, b, apart, needed(spreads[a], spreads[b])))
    return pairs


def quality_report(
    model: ColourModel,
    colour_pixels: dict[str, np.ndarray],
    cube_size: float,
    warnings: list[str] | None = None,
    like_shadow: frozenset[str] = frozenset(),
    floor: FloorLightness | None = None,
) -> QualityReport:
    """The report on a colour model; `like_shadow`: the colours whose lit tops pass for the
    floor in shadow (the counter finds their cubes by outline, and misses more of them);
    `floor`: the floor's lightness, for the pairs that differ mainly in lightness."""
    warnings = list(warnings or [])
    rows = []
    warned: set[frozenset] = set()
    names = model.names
    for k, name in enumerate(names):
        px = np.asarray(colour_pixels[name], dtype=np.float64)
        d = model.class_distances(px)
        # Most of the colour's own pixels must stay clear of the other class: 25th percentile.
        sep = np.percentile(d, 25, axis=0)
        to_tray = float(sep[0])
        others = [(float(sep[j + 1]), names[j]) for j in range(len(names)) if j != k]
        to_nearest, nearest = min(others) if others else (float("inf"), None)
        spread = float(np.sqrt(((px - px.mean(axis=0)) ** 2).sum(axis=1).mean()))
        rows.append(
            ColourQuality(name, len(px), spread, nearest, to_nearest, to_tray, name in like_shadow)
        )
        if (
            nearest is not None
            and to_nearest < PAIR_CLOSE
            and frozenset((name, nearest)) not in warned
        ):
            warned.add(frozenset((name, nearest)))
            warnings.append(
                f"{name} and {nearest} are too close to tell apart reliably "
                f"(separation {to_nearest:.1f}); use cubes of more different colours "
                "or better light"
            )
        if name in like_shadow:
            # (on the 224 tables above: its count right in 93-97% of the scenes, 99% elsewhere)
            warnings.append(
                f"{name} looks like the tray floor in shadow (separation {to_tray:.1f}): "
                f"{name} cubes under or against other cubes may be missed, and the count then "
                "often says it is "
                f"not sure; a tray floor of a clear colour (green, blue, brown, wood) avoids it"
            )
        elif to_tray < TRAY_CLOSE:
            warnings.append(
                f"{name} is close to the tray floor colour (separation {to_tray:.1f}); "
                f"its cubes may be missed"
            )
    pairs = lightness_pairs(model, colour_pixels, floor) if floor is not None else []
    return QualityReport(rows, cube_size, warnings, pairs)
