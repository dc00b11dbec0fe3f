"""The calibration profile and its versioned JSON file.

Positions (tray corners, clicks) are stored relative to the frame size, so a profile made
at 640x480 works at 1280x960. Sizes measured on the rectified floor (cube size, floor size)
do not depend on the camera resolution. Colours are stored as sampled pixel values, not as
a fitted model, so an improved model can be rebuilt from old profiles.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from calibration.errors import CalibrationError

FORMAT = "tower-companion-calibration"
VERSION = 1
# Versions this code can read; each older one needs an upgrade step in _upgrade().
READABLE_VERSIONS = (1,)


@dataclass(frozen=True)
class Profile:
    frame_size: tuple[int, int]  # (width, height) of the calibration frame
    corners: tuple[
        tuple[float, float], ...
    ]  # tray floor corners, relative (0..1), clockwise from top-left
    rect_size: tuple[int, int]  # rectified floor image (width, height) in px
    cube_size: float  # edge of one cube's visible top on the rectified floor, px
    cube_area: float  # area of one lone cube's silhouette on the rectified floor, px²
    floor_pixels: np.ndarray  # Nx3 BGR samples of the bare floor
    colour_pixels: dict[str, np.ndarray]  # colour -> Nx3 BGR samples of its cubes' faces
    clicks: dict[str, tuple[tuple[float, float], ...]]  # colour -> relative click positions
    floor_field: tuple[float, ...] = ()  # lit floor brightness: quadratic over the rectified tray
    shadow_level: float | None = None  # cast shadows' brightness relative to the lit floor
    floor_insets: tuple[int, ...] = ()  # band hidden by the near walls, per edge end (rectified px)
    area_field: tuple[
        float, ...
    ] = ()  # lone cube's silhouette area over the tray (see fit_area_field)
    side_field: tuple[
        float, ...
    ] = ()  # where a lone cube's sides show, over the tray (see fit_side_field)
    outline_strength: float | None = (
        None  # edge strength of the clicked tops' outlines (vision.tops)
    )
    camera_controls: dict = field(
        default_factory=dict
    )  # locked exposure/gains, restored with the profile
    version: int = VERSION

    @property
    def colours(self) -> list[str]:
        return list(self.colour_pixels)

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
            "cube_area": round(float(self.cube_area), 2),
            "floor_pixels": np.asarray(self.floor_pixels, dtype=int).tolist(),
            "colours": {
                name: {
                    "pixels": np.asarray(px, dtype=int).tolist(),
                    "clicks": [[round(x, 6), round(y, 6)] for x, y in self.clicks.get(name, ())],
                }
                for name, px in self.colour_pixels.items()
            },
            "floor_field": [round(float(v), 5) for v in self.floor_field],
            "shadow_level": None
            if self.shadow_level is None
            else round(float(self.shadow_level), 4),
            "floor_insets": [int(v) for v in self.floor_insets],
            "area_field": [round(float(v), 3) for v in self.area_field],
            "side_field": [round(float(v), 5) for v in self.side_field],
            "outline_strength": None
            if self.outline_strength is None
            else round(float(self.outline_strength), 5),
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
            return cls(
                frame_size=tuple(int(v) for v in data["frame_size"]),
                corners=tuple((float(x), float(y)) for x, y in data["corners"]),
                rect_size=tuple(int(v) for v in data["rect_size"]),
                cube_size=float(data["cube_size"]),
                cube_area=float(data["cube_area"]),
                floor_pixels=_pixels(data["floor_pixels"]),
                colour_pixels={str(n): _pixels(c["pixels"]) for n, c in colours.items()},
                clicks={
                    str(n): tuple((float(x), float(y)) for x, y in c.get("clicks", []))
                    for n, c in colours.items()
                },
                floor_field=tuple(float(v) for v in data.get("floor_field") or ()),
                shadow_level=None
                if data.get("shadow_level") is None
                else float(data["shadow_level"]),
                floor_insets=tuple(int(v) for v in data.get("floor_insets") or ()),
                area_field=tuple(float(v) for v in data.get("area_field") or ()),
                side_field=tuple(float(v) for v in data.get("side_field") or ()),
                outline_strength=None
                if data.get("outline_strength") is None
                else float(data["outline_strength"]),
                camera_controls=dict(data.get("camera_controls") or {}),
                version=VERSION,
            )
        except (KeyError, TypeError, ValueError) as e:
            raise CalibrationError(
                f"{source}: damaged calibration profile ({type(e).__name__}: {e})"
            ) from None


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
