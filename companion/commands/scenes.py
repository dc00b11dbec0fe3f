"""`companion scenes build`: folders of tray scenes with their truth, from either source."""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import shutil
import sys
from pathlib import Path

import cv2

from companion.errors import CompanionError
from firmware.errors import FirmwareError

SOURCES = ("generated", "realistic")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "scenes",
        help="build folders of tray scenes with their truth",
        description="Scene folders for the vision benchmark (companion bench vision "
        "--scenes DIR): one folder per table set-up with a calibration frame "
        "and its clicks, scenes of each kind, drop videos, and truth.json.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    b = actions.add_parser(
        "build",
        help="render set-ups into a folder (resumable)",
        description="Render COUNT set-ups into OUT, one folder each. A set-up already "
        "in OUT is skipped, so a stopped build carries on where it was.",
    )
    b.add_argument(
        "--source",
        choices=SOURCES,
        required=True,
        help="generated: the fast generator of the simulated tray; realistic: pybullet "
        "physics and Mitsuba path tracing (pip install '.[scenes]')",
    )
    b.add_argument("--count", type=int, required=True, help="table set-ups to build")
    b.add_argument(
        "--out", required=True, metavar="DIR", help="folder to write (created if missing)"
    )
    b.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the first set-up; set-up i is seed+i (default 0)",
    )
    b.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: one per core)"
    )
    b.add_argument("--scenes", type=int, default=3, help="scenes per kind per set-up (default 3)")
    b.add_argument("--videos", type=int, default=1, help="drop videos per set-up (default 1)")
    b.add_argument(
        "--spp",
        type=int,
        help="realistic: path-tracing samples per pixel (default 12; fewer: faster, grainier)",
    )
    b.set_defaults(func=run)


def setup_name(seed: int) -> str:
    return f"setup-{seed:06d}"


def run(args: argparse.Namespace) -> int:
    for name in ("count", "jobs"):
        if getattr(args, name) < 1:
            raise CompanionError(f"--{name} must be 1 or more, got {getattr(args, name)}")
    if args.spp is not None and args.spp < 1:
        raise CompanionError(f"--spp must be 1 or more, got {args.spp}")
    for name in ("scenes", "videos"):
        if getattr(args, name) < 0:
            raise CompanionError(f"--{name} must be 0 or more, got {getattr(args, name)}")
    if args.source == "realistic":
        _check_realistic()
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CompanionError(f"--out {out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    seeds = [args.seed + i for i in range(args.count)]
    todo = [s for s in seeds if not (out / setup_name(s)).is_dir()]
    done = len(seeds) - len(todo)
    _progress(done, len(seeds))
    work = [(args.source, s, str(out), args.scenes, args.videos, args.spp) for s in todo]
    with contextlib.ExitStack() as stack:
        if args.jobs == 1:
            results = map(_build_one, work)
        else:
            pool = stack.enter_context(concurrent.futures.ProcessPoolExecutor(args.jobs))
            results = pool.map(_build_one, work)
        for _ in results:
            done += 1
            _progress(done, len(seeds))
    print(file=sys.stderr)
    built = f"{len(todo)} built now, {len(seeds) - len(todo)} were there"
    print(f"{len(seeds)} set-ups in {out} ({built})")
    return 0


def _check_realistic() -> None:
    missing = [m for m in ("pybullet", "mitsuba") if not _importable(m)]
    if missing:
        raise CompanionError(
            f"--source realistic needs {' and '.join(missing)}: "
            "pip install 'tower-companion[scenes]' (or -e '.[scenes]')"
        )


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} set-ups")
    sys.stderr.flush()


def _build_one(job) -> str:
    """Build one set-up into a hidden folder, then rename it into place: a killed run
    leaves no half-written set-up, only a hidden folder the next run replaces."""
    source, seed, out, scenes, videos, spp = job
    if source == "realistic":
        from firmware.scene.realistic.build import build_setup

        try:
            from companion.tables import GREY_FLOORS

            floor = grey_floor(seed)
            felt = (floor, GREY_FLOORS[floor]) if floor else None
            files, truth = build_setup(seed, scenes=scenes, videos=videos, spp=spp, felt=felt)
        except FirmwareError as e:
            raise FirmwareError(f"set-up {seed}: {e}") from None
    else:
        files, truth = generated_setup(seed, scenes=scenes, videos=videos)
    final = Path(out) / setup_name(seed)
    tmp = Path(out) / f".{setup_name(seed)}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    for name, data in files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (tmp / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    os.rename(tmp, final)
    return final.name


def _jpeg(image, quality: int = 90) -> bytes:
    data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1]
    return data.tobytes()


def _generated_truth(name: str, kind: str, scene) -> dict:
    cubes = [
        {
            "colour": c.colour,
            "top": [round(float(v), 1) for v in c.centre],
            "visible": round(c.visible, 3),
            "hidden": c.visible == 0,
            "on": "floor" if c.level == 1 else "cube",
        }
        for c in scene.cubes
    ]
    for cube, pose in zip(cubes, scene.poses, strict=True):
        cube["position"] = [round(v, 2) for v in (pose.x, pose.y, pose.z)]
    seen: dict[str, int] = {}
    for c in cubes:
        if not c["hidden"]:
            seen[c["colour"]] = seen.get(c["colour"], 0) + 1
    return {
        "file": name,
        "kind": kind,
        "counts": dict(scene.counts),
        "visible_counts": dict(sorted(seen.items())),
        "cubes": cubes,
    }


def grey_floor(seed: int) -> str | None:
    """The grey floor of the built set-up `seed` (either source), if any: neither draws grey
    trays itself, so 3 set-ups in 8 lie on one of companion.tables.GREY_FLOORS (with white
    cubes too), for the net to learn dark tops on light floors and light on dark."""
    from companion.tables import GREY_FLOORS

    names = list(GREY_FLOORS)
    return names[seed % 8] if seed % 8 < len(names) else None


def generated_setup(seed: int, scenes: int = 3, videos: int = 1):
    """The generator's set-up from `seed` as the benchmark draws it (its calibration frame,
    `scenes` of each kind and as many battle trays of each), on its grey_floor if it has one,
    plus drop videos."""
    import numpy as np

    from calibration.errors import CalibrationError
    from companion.tables import random_counts, set_up, table
    from firmware.scene import drop_video, layout

    floor = grey_floor(seed)
    _, setup, calib = set_up(seed, floor)
    files = {"calibration.jpg": _jpeg(calib.image)}
    truth = {
        "source": "generated",
        "seed": seed,
        # (as the realistic source gives them: the training marks cubes under others with them)
        "setup": {
            "tray_mm": [round(setup.tray.width, 2), round(setup.tray.depth, 2)],
            "cube_mm": round(setup.cube_size, 3),
            "floor": floor,
        },
        "scenes": [],
        "videos": [],
        "calibration": {
            **_generated_truth("calibration.jpg", "calibration", calib),
            "corners": [[round(float(v), 1) for v in p] for p in calib.corners],
            "clicks": {
                c: [[round(float(v), 1) for v in p] for p in pts] for c, pts in calib.clicks.items()
            },
        },
    }
    try:
        _, drawn = table(seed, scenes, battles=scenes, floor=floor)
    except CalibrationError:
        # The generator draws its scenes after calibrating: a refused set-up has none.
        drawn = iter(())
    drawn_kinds: dict[str, int] = {}
    for kind, scene in drawn:
        # The generator's battle trays come after the scenes of each kind.
        label = "battle" if drawn_kinds.get(kind, 0) >= scenes else kind
        drawn_kinds[kind] = drawn_kinds.get(kind, 0) + 1
        name = f"{label}-{sum(s['kind'] == label for s in truth['scenes'])}.jpg"
        files[name] = _jpeg(scene.image)
        truth["scenes"].append(_generated_truth(name, label, scene))
    rng = np.random.default_rng(seed + 5000)
    for v in range(videos):
        before = layout(
            setup, {c: int(rng.integers(0, 2)) for c in setup.colours}, "scattered", rng
        )
        video = drop_video(setup, before, random_counts(setup, rng), rng, fps=15)
        frames = []
        for i, frame in enumerate(video):
            name = f"video-{v}/frame-{i:03d}.jpg"
            files[name] = _jpeg(frame.image)
            frames.append(
                {
                    "file": name,
                    "time": round(frame.time, 4),
                    "moving": frame.moving,
                    "counts": dict(frame.counts),
                }
            )
        last = max((f["time"] for f in frames if f["moving"]), default=0.0)
        truth["videos"].append(
            {
                "folder": f"video-{v}",
                "fps": 15,
                "frames": frames,
                "last_movement": last,
                "counts": frames[-1]["counts"],
                "visible_counts": frames[-1]["counts"],
            }
        )
    return files, truth
