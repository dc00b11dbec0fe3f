"""`companion train`: train the counter's centre net and confidence on built scene folders."""

from __future__ import annotations

import argparse
import pathlib

from companion.errors import CompanionError
from companion.training import train
from vision.centres import MODEL

STEPS = 14000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train",
        help="train the counter's centre net and confidence on built scene folders",
        description="Trains the net that finds the cubes (vision/models/centres.onnx) on the "
        "scenes of folders built by `companion scenes build`, drawing equally from each "
        "folder, then fits what its peaks' scores mean (peaks.json) and the confidence "
        "(confidence.json) on the scenes of other folders, whose set-ups the net never saw. "
        "Needs the train extra (pip install -e '.[train]').",
    )
    p.add_argument(
        "--scenes",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of scenes to learn from (repeat: one per scene source)",
    )
    p.add_argument(
        "--refit",
        action="store_true",
        help="keep the net already in --output; fit only its peaks.json and confidence.json",
    )
    p.add_argument(
        "--confidence-on",
        action="append",
        required=True,
        metavar="DIR",
        help="a folder of other set-ups to fit the peak odds and confidence on (repeat)",
    )
    p.add_argument(
        "--steps", type=int, default=STEPS, help=f"training steps of 16 crops (default {STEPS})"
    )
    p.add_argument(
        "--output",
        default=str(MODEL.parent),
        help="folder for centres.onnx, peaks.json and confidence.json "
        "(default: the shipped models')",
    )
    p.set_defaults(func=run)


def run(args) -> int:
    if args.steps < 1:
        raise CompanionError(f"--steps must be 1 or more, got {args.steps}")
    if args.refit == bool(args.scenes):
        raise CompanionError("give --scenes to train a net, or --refit to keep the one in --output")
    if args.refit and not (pathlib.Path(args.output) / MODEL.name).is_file():
        raise CompanionError(f"--refit: no {MODEL.name} in {args.output}")
    folders = [pathlib.Path(d) for d in args.scenes + args.confidence_on]
    for d in folders:
        if not d.is_dir():
            raise CompanionError(f"{d}: no such folder")
    if set(args.scenes) & set(args.confidence_on):
        raise CompanionError("the confidence must be fitted on folders not trained on")
    train(
        [pathlib.Path(d) for d in args.scenes],
        [pathlib.Path(d) for d in args.confidence_on],
        args.steps,
        pathlib.Path(args.output),
    )
    return 0
