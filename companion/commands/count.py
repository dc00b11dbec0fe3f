"""`companion count`: count the cubes in images by colour."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2

from calibration import load_profile, make_counter
from companion.commands.common import counts_text, read_image
from companion.errors import CompanionError
from companion.output import print_json
from vision import annotate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "count",
        help="count the cubes in images by colour",
        description="Count the cubes in each image by colour. An image that cannot be "
        "read is named on stderr, the others are still counted, and the exit "
        "code is 1.",
    )
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument(
        "--calibration", required=True, metavar="FILE", help="profile from `companion calibrate`"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per image")
    p.add_argument(
        "--debug", metavar="DIR", help="write each image with its cubes outlined and labelled"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.calibration)
    debug = Path(args.debug) if args.debug else None
    if debug is not None:
        try:
            debug.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CompanionError(f"--debug {debug}: cannot create folder: {e.strerror}") from None
    counters = {}
    failed = 0
    for path in args.images:
        try:
            frame = read_image(path)
        except CompanionError as e:
            # Named on stderr; the other images are still counted.
            print(f"companion count: error: {e}", file=sys.stderr)
            failed += 1
            continue
        size = (frame.shape[1], frame.shape[0])
        if size not in counters:
            counters[size] = make_counter(profile, size)
        result = counters[size].count(frame)
        if debug is not None:
            out = debug / f"{Path(path).stem}.annotated.png"
            if not cv2.imwrite(str(out), annotate(frame, result)):
                raise CompanionError(f"{out}: cannot write the annotated image")
        if args.json:
            print_json({"image": path, **result.to_dict()})
        else:
            counts = counts_text(result.counts)
            flag = (
                f", UNKNOWN {result.unknown}"
                if result.unknown
                else ""
                if result.sure
                else ", NOT SURE"
            )
            print(
                f"{path}: {counts}{flag} (confidence {result.confidence:.2f}, {result.ms:.1f} ms)"
            )
    return 1 if failed else 0
