"""The quality report: can the calibrated colours be told apart, from each other and the tray?

Separations are measured as the counter measures a top against a calibrated colour
(vision.counter.colour_distance, log2 units). A top farther than UNKNOWN_DOUBLINGS from
every colour is counted as unknown; two colours closer than half that leave a top between
them little room: shade or sheen may move it to the other. The floor matters less: cubes
are found by their shape, not their colour, so a black cube on a grey tray is only a little
harder to see.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from calibration.profile import Profile
from vision.counter import UNKNOWN_DOUBLINGS, colour_distance


@dataclass(frozen=True)
class ColourQuality:
    colour: str
    clicks: int
    spread: float  # largest distance between two of its clicked tops, log2 units
    nearest: str | None  # nearest other colour
    to_nearest: float  # its separation from that colour, log2 units
    to_tray: float  # separation from the tray floor, log2 units
    # how much lighter (+) or darker (-) its top is than the floor, in stops (log2 of the mean
    # ratio over the channels): what tells black, grey and white apart, and from a grey floor
    lightness: float = 0.0


@dataclass(frozen=True)
class QualityReport:
    colours: list[ColourQuality]
    cube_size: float
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"cube size on the floor seen from above: {self.cube_size:.1f} px"]
        for q in self.colours:
            near = f"{q.to_nearest:4.2f} from {q.nearest}" if q.nearest else "(only colour)"
            out.append(
                f"{q.colour:>10}: {q.clicks} clicked, spread {q.spread:4.2f}, "
                f"separation {near}, {q.to_tray:4.2f} from the tray, "
                f"{abs(q.lightness):.1f} stops {'lighter' if q.lightness > 0 else 'darker'}"
            )
        out += [f"warning: {w}" for w in self.warnings]
        return out

    def to_dict(self) -> dict:
        return {
            "cube_size": round(self.cube_size, 2),
            "warnings": list(self.warnings),
            "colours": [
                {
                    "colour": q.colour,
                    "clicks": q.clicks,
                    "spread": round(q.spread, 3),
                    "nearest": q.nearest,
                    "to_nearest": round(q.to_nearest, 3) if q.nearest else None,
                    "to_tray": round(q.to_tray, 3),
                    "lightness": round(q.lightness, 3),
                }
                for q in self.colours
            ],
        }


def quality_report(profile: Profile) -> QualityReport:
    tops = {name: np.asarray(t, np.float64).reshape(-1, 3) for name, t in profile.tops.items()}

    def apart(a: np.ndarray, b: np.ndarray) -> float:
        return float(colour_distance(a[:, None], b[None]).min())

    rows, warnings, warned = [], [], set()
    floor = np.zeros((1, 3))
    for name, own in tops.items():
        spread = float(colour_distance(own[:, None], own[None]).max())
        others = sorted((apart(own, t), n) for n, t in tops.items() if n != name)
        to_nearest, nearest = others[0] if others else (float("inf"), None)
        lightness = float(np.median(own.mean(axis=1)))
        rows.append(
            ColourQuality(name, len(own), spread, nearest, to_nearest, apart(own, floor), lightness)
        )
        pair = frozenset((name, nearest))
        if nearest is not None and to_nearest < UNKNOWN_DOUBLINGS / 2 and pair not in warned:
            warned.add(pair)
            warnings.append(
                f"{name} and {nearest} are too close to tell apart reliably (separation "
                f"{to_nearest:.2f}, needs {UNKNOWN_DOUBLINGS / 2:g}); use cubes of more different "
                "colours or better light"
            )
    return QualityReport(rows, profile.cube_size, warnings)
