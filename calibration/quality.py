"""The quality report: can the calibrated colours be told apart, from each other and the tray?

Distances are in units of the colour model's tolerance around a colour (its spread plus
noise): below 1 a pixel would be taken for that class. A colour whose samples sit within
`CLOSE` units of another colour or of the tray will be confused under changing light.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.colour import ColourModel

# Separations below this (in tolerance units) draw a warning.
CLOSE = 2.0


@dataclass(frozen=True)
class ColourQuality:
    colour: str
    samples: int
    spread: float            # RMS deviation of its samples from its mean, BGR levels
    nearest: str | None      # nearest other colour
    to_nearest: float        # its separation from that colour, tolerance units
    to_tray: float           # separation from the tray floor (and its shadows)


@dataclass(frozen=True)
class QualityReport:
    colours: list[ColourQuality]
    cube_size: float
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"cube size on the rectified floor: {self.cube_size:.1f} px"]
        for q in self.colours:
            near = f"{q.to_nearest:5.1f} from {q.nearest}" if q.nearest else "  (only colour)"
            out.append(f"{q.colour:>10}: {q.samples:4d} px sampled, spread {q.spread:4.1f}, "
                       f"separation {near}, {q.to_tray:5.1f} from the tray")
        out += [f"warning: {w}" for w in self.warnings]
        return out

    def to_dict(self) -> dict:
        return {"cube_size": round(self.cube_size, 2), "warnings": list(self.warnings),
                "colours": [{"colour": q.colour, "samples": q.samples, "spread": round(q.spread, 2),
                             "nearest": q.nearest, "to_nearest": round(q.to_nearest, 2),
                             "to_tray": round(q.to_tray, 2)} for q in self.colours]}


def quality_report(model: ColourModel, colour_pixels: dict[str, np.ndarray], cube_size: float,
                   warnings: list[str] | None = None) -> QualityReport:
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
        rows.append(ColourQuality(name, len(px), spread, nearest, to_nearest, to_tray))
        if nearest is not None and to_nearest < CLOSE and frozenset((name, nearest)) not in warned:
            warned.add(frozenset((name, nearest)))
            warnings.append(f"{name} and {nearest} are too close to tell apart reliably "
                            f"(separation {to_nearest:.1f}); use cubes of more different colours or better light")
        if to_tray < CLOSE:
            warnings.append(f"{name} is close to the tray floor colour (separation {to_tray:.1f}); "
                            f"its cubes may be missed")
    return QualityReport(rows, cube_size, warnings)
