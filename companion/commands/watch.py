"""`companion watch`: print one line per settled tray state of a video, folder or camera."""

from __future__ import annotations

import argparse

from calibration import load_profile, make_counter
from companion.commands.common import add_config_option, counts_text, load
from companion.output import print_json
from firmware.camera import open_source
from vision.watcher import Watcher


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "watch",
        help="print one line per settled tray state of a video, folder or camera",
        description="Watch a video file, a folder of frames or a camera and print one line "
        "per settled tray state as soon as it is decided: a new line whenever the "
        "tray comes to rest with different contents (a late cube gives a new, "
        "complete line). `frame` is the frame being processed when the state "
        "was decided.",
    )
    p.add_argument(
        "source", metavar="SOURCE", help="video file, image folder, usb:N, picamera, sim or auto"
    )
    p.add_argument(
        "--calibration", required=True, metavar="FILE", help="profile from `companion calibrate`"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per settled state")
    add_config_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config, _ = load(args)
    profile = load_profile(args.calibration)
    cam = config.camera
    watcher = Watcher(lambda size: make_counter(profile, size))
    with open_source(
        args.source, cam.width, cam.height, cam.fps, controls=profile.camera_controls or None
    ) as source:
        for frame in source:
            settled = watcher.feed(frame.image, frame.timestamp, frame.index)
            if settled is None:
                continue
            if args.json:
                print_json(settled.to_dict())
            else:
                event, result = settled.event, settled.result
                counts = counts_text(result.counts)
                flag = f", UNKNOWN {result.unknown}" if result.unknown else ""
                print(
                    f"frame {event.frame_index} ({event.time:.2f} s, "
                    f"{event.delay:.2f} s after the last movement): {counts}{flag}",
                    flush=True,
                )
    return 0
