"""The calibration profile and its versioned JSON file.

Positions (tray corners, clicks) are stored relative to the frame size, so a profile made
at 640x480 works at 1280x960. Sizes measured on the floor seen from above (cube size, floor
size) do not depend on the camera resolution. Each colour is kept as its clicked tops' light
relative to the floor's (log2 ratios per channel), which a brighter or warmer lamp leaves
alone.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from calibration.errors import CalibrationError

FORMAT = "tower-companion-calibration"
VERSION = 2
# Versions this code can read; each older one is upgraded in _from_version_1().
READABLE_VERSIONS = (1, 2)


@dataclass(frozen=True)
class Profile:
    frame_size: tuple[int, int]  # (width, height) of the calibration frame
    # tray floor corners, relative (0..1), clockwise from top-left
    corners: tuple[tuple[float, float], ...]
    rect_size: tuple[int, int]  # the floor seen from above (width, height), px
    cube_size: float  # edge of one cube's top on that view, px
    # colour -> one log2(top / floor) BGR triple per clicked cube (vision.canonical)
    tops: dict[str, tuple[tuple[float, float, float], ...]]
    clicks: dict[str, tuple[tuple[float, float], ...]]  # colour -> relative click positions
    # locked exposure/gains, restored with the profile
    camera_controls: dict = field(default_factory=dict)
    version: int = VERSION

    @property
    def colours(self) -> list[str]:
        return list(self.tops)

    def corners_px(self, frame_size: tuple[int, int]) -> np.ndarray:
        w, h = frame_size
        return np.float32([[x * w, y * h] for x, y in self.corners])

    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "frame_size": list(self.frame_size),
            "corners": [[round(x, 6), round(y, 6)] for x, y in self.corners],
            "rect_size": list(self.rect_size),
            "cube_size": round(float(self.cube_size), 3),
            "colours": {
                name: {
                    "tops": [[round(float(v), 4) for v in top] for top in tops],
                    "clicks": [[round(x, 6), round(y, 6)] for x, y in self.clicks.get(name, ())],
                }
                for name, tops in self.tops.items()
            },
            "camera_controls": dict(self.camera_controls),
        }

    @classmethod
    def from_dict(cls, data: dict, source: str = "profile") -> Profile:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CalibrationError(f"{source}: not a Tower Companion calibration profile")
        version = data.get("version")
        if version not in READABLE_VERSIONS:
            newest = max(READABLE_VERSIONS)
            if isinstance(version, int) and version > newest:
                raise CalibrationError(
                    f"{source}: made by a newer Tower Companion (format version "
                    f"{version}, this one reads up to {newest}); update it"
                )
            raise CalibrationError(
                f"{source}: format version {version!r} is not supported "
                f"(readable: {', '.join(map(str, READABLE_VERSIONS))}); calibrate again"
            )
        try:
            colours = data["colours"]
            if not isinstance(colours, dict) or not colours:
                raise ValueError("no colours")
            if version == 1:
                tops = _from_version_1(data["floor_pixels"], colours)
            else:
                tops = {str(n): _tops(c["tops"]) for n, c in colours.items()}
            return cls(
                frame_size=tuple(int(v) for v in data["frame_size"]),
                corners=tuple((float(x), float(y)) for x, y in data["corners"]),
                rect_size=tuple(int(v) for v in data["rect_size"]),
                cube_size=float(data["cube_size"]),
                tops=tops,
                clicks={
                    str(n): tuple((float(x), float(y)) for x, y in c.get("clicks", []))
                    for n, c in colours.items()
                },
                camera_controls=dict(data.get("camera_controls") or {}),
                version=VERSION,
            )
        except (KeyError, TypeError, ValueError) as e:
            raise CalibrationError(
                f"{source}: damaged calibration profile ({type(e).__name__}: {e})"
            ) from None


def _tops(rows) -> tuple[tuple[float, float, float], ...]:
    tops = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    if len(tops) == 0 or not np.all(np.isfinite(tops)):
        raise ValueError("a colour needs at least one top of three finite log ratios")
    return tuple(tuple(float(v) for v in top) for top in tops)


def _from_version_1(floor_rows, colours: dict) -> dict[str, tuple[tuple[float, float, float]]]:
    """Version 1 kept sampled pixels of the floor and of each colour's tops (both divided by
    the same light field): their medians' ratio is the top's colour as version 2 keeps it."""
    floor = np.median(_pixels(floor_rows), axis=0)
    return {
        str(n): (
            tuple(
                float(v)
                for v in np.log2((np.median(_pixels(c["pixels"]), axis=0) + 1) / (floor + 1))
            ),
        )
        for n, c in colours.items()
    }


def _pixels(rows) -> np.ndarray:
    px = np.asarray(rows, dtype=np.float32).reshape(-1, 3)
    if len(px) == 0 or px.min() < 0 or px.max() > 255:
        raise ValueError("colour samples must be BGR values 0-255")
    return px


def save_profile(profile: Profile, path: str | os.PathLike) -> None:
    """Write the profile atomically (a crash mid-write leaves the old file intact)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(profile.to_dict(), separators=(",", ":")) + "\n")
        os.replace(tmp, path)
    except OSError as e:
        raise CalibrationError(f"{path}: cannot write calibration profile: {e.strerror}") from None


def load_profile(path: str | os.PathLike) -> Profile:
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise CalibrationError(f"{path}: no such calibration profile") from None
    except OSError as e:
        raise CalibrationError(f"{path}: cannot read calibration profile: {e.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise CalibrationError(f"{path}: not valid JSON (line {e.lineno}): {e.msg}") from None
    return Profile.from_dict(data, str(path))
