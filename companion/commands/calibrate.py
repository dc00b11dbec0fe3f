"""`companion calibrate`: build a calibration profile from one frame and clicks."""

from __future__ import annotations

import argparse

from calibration import build_profile, save_profile
from companion.commands.common import read_image
from companion.errors import CompanionError
from companion.output import print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate",
        help="build a calibration profile from one frame and clicks",
        description="Build a calibration profile from one frame of the tray: its floor "
        "corners and at least one click on a cube of each colour. Prints a "
        "quality report (how well the colours separate).",
    )
    p.add_argument("image", metavar="IMAGE", help="a frame from the camera (PNG or JPEG)")
    p.add_argument(
        "--corners",
        required=True,
        metavar='"x,y x,y x,y x,y"',
        help="the tray floor's four corners in image pixels, clockwise from top-left",
    )
    p.add_argument(
        "--sample",
        action="append",
        required=True,
        metavar="COLOUR=x,y",
        help="a click on a cube of COLOUR (repeat for each colour; several per colour allowed)",
    )
    p.add_argument(
        "--output", required=True, metavar="FILE", help="where to write the profile (JSON)"
    )
    p.add_argument("--json", action="store_true", help="print the quality report as JSON")
    p.set_defaults(func=run)


def _point(text: str, what: str) -> tuple[float, float]:
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise CompanionError(f"{what}: expected x,y in pixels, got {text!r}") from None


def parse_corners(text: str) -> list[tuple[float, float]]:
    points = [_point(p, "--corners") for p in text.replace(";", " ").split()]
    if len(points) != 4:
        raise CompanionError(
            f'--corners: expected 4 corners "x,y x,y x,y x,y" (clockwise from '
            f"top-left), got {len(points)}"
        )
    return points


def parse_samples(items: list[str]) -> dict[str, list[tuple[float, float]]]:
    samples: dict[str, list[tuple[float, float]]] = {}
    for item in items:
        name, sep, point = item.partition("=")
        name = name.strip().lower()
        if not sep or not name:
            raise CompanionError(f"--sample: expected COLOUR=x,y, got {item!r}")
        samples.setdefault(name, []).append(_point(point, f"--sample {name}"))
    return samples


def run(args: argparse.Namespace) -> int:
    corners = parse_corners(args.corners)
    samples = parse_samples(args.sample)
    frame = read_image(args.image)
    profile, report = build_profile(frame, corners, samples)
    save_profile(profile, args.output)
    if args.json:
        print_json({"output": args.output, **report.to_dict()})
    else:
        print(
            f"calibration written to {args.output} ({len(profile.colours)} colours: "
            f"{', '.join(profile.colours)})"
        )
        for line in report.lines():
            print(line)
    return 0
