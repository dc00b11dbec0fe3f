"""The vision benchmark on built scene folders (`companion scenes build`), per source and
per kind: each set-up is calibrated on its calibration frame and clicks, as a user would,
then counts its scenes in order and watches its drop videos.

A scene is exact when the counts match the cubes the camera can see at all (truth
`visible_counts`: a cube whose every camera-facing point is hidden by others or by a wall
cannot be counted by any camera).

Beside the exact rate, each cube the camera can see is followed, by the share of it in view
(truth `visible`): found with its colour, found with another, or missed; and the cubes
counted where none lay. A miss of cubes barely in view and a miss of whole ones call for
different work.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from calibration import build_profile, make_counter
from calibration.errors import CalibrationError
from companion.errors import CompanionError
from vision.canonical import TOP_PX
from vision.centres import MODEL, CentreNet
from vision.counter import CONFIDENCE, Confidence
from vision.watcher import Watcher

KINDS = ("scattered", "touching", "piles", "drifted", "battle")
BIG = 8  # a big battle tray: this many or more cubes of one colour
# Bands of the share of a cube in view: its least share, its name, what the report says.
IN_VIEW = (
    (2 / 3, "most", "2/3 or more"),
    (1 / 3, "half", "1/3 to 2/3"),
    (0.0, "little", "under 1/3"),
)
CUBE_KEYS = ("colour", "top", "visible", "hidden")  # what the truth gives of each cube
OUTCOMES = {"found": "found", "wrong_colour": "found as another colour", "missed": "missed"}


@dataclass(frozen=True)
class SetUpFolder:
    path: Path
    truth: dict

    @property
    def source(self) -> str:
        return self.truth["source"]

    def image(self, name: str) -> np.ndarray:
        image = cv2.imread(str(self.path / name), cv2.IMREAD_COLOR)
        if image is None:
            raise CompanionError(f"{self.path / name}: missing or not an image")
        return image


def read_folder(path: str | Path) -> list[SetUpFolder]:
    """The set-ups of a built folder, in name order; a clear error if it is none."""
    path = Path(path)
    if not path.is_dir():
        raise CompanionError(f"{path}: no such folder")
    setups = []
    for sub in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")):
        try:
            truth = json.loads((sub / "truth.json").read_text())
        except FileNotFoundError:
            continue  # not a set-up folder
        except ValueError as e:
            raise CompanionError(f"{sub / 'truth.json'}: not valid JSON ({e})") from None
        missing = [k for k in ("source", "calibration", "scenes", "videos") if k not in truth]
        if missing:
            raise CompanionError(f"{sub / 'truth.json'}: missing {', '.join(missing)}")
        problem = next(filter(None, map(_scene_problem, truth["scenes"])), None)
        if problem:
            raise CompanionError(f"{sub / 'truth.json'}: {problem}")
        setups.append(SetUpFolder(sub, truth))
    if not setups:
        raise CompanionError(
            f"{path}: no set-up folders with a truth.json (build one with `companion scenes build`)"
        )
    return setups


def _scene_problem(scene) -> str | None:
    """What a scene's truth lacks for the benchmark to follow its cubes (None: nothing)."""
    if not isinstance(scene, dict) or not isinstance(scene.get("cubes"), list):
        return "a scene without its list of cubes"
    for cube in scene["cubes"]:
        missing = [k for k in CUBE_KEYS if not isinstance(cube, dict) or k not in cube]
        if missing:
            return f"a cube of {scene.get('file', 'a scene')} without {', '.join(missing)}"
    return None


@dataclass(frozen=True)
class Models:
    """The counter's models: the shipped ones, or those trained into another folder."""

    net: CentreNet
    confidence: Confidence

    @classmethod
    def load(cls, folder: str | Path | None = None) -> Models:
        folder = Path(folder) if folder else MODEL.parent
        return cls(CentreNet(folder / MODEL.name), Confidence.load(folder / CONFIDENCE.name))


def calibrate(setup: SetUpFolder, models: Models | None = None):
    """A counter calibrated on the set-up's frame and clicks (CalibrationError if refused),
    with the shipped models unless given."""
    models = models or Models.load()
    cal = setup.truth["calibration"]
    image = setup.image(cal["file"])
    clicks = {c: [tuple(p) for p in pts] for c, pts in cal["clicks"].items()}
    profile, _ = build_profile(image, [tuple(p) for p in cal["corners"]], clicks, net=models.net)
    size = (image.shape[1], image.shape[0])
    return profile, make_counter(profile, size, models.net, models.confidence)


def exact(counts: dict[str, int], truth: dict[str, int], unknown: int = 0) -> bool:
    return {c: n for c, n in counts.items() if n} == {
        c: n for c, n in truth.items() if n
    } and not unknown


def floor_ms(image: np.ndarray) -> float:
    """ms of the cheapest sensible pipeline on a frame: Lab, a threshold, connected components."""
    t0 = time.perf_counter()
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2Lab)
    _, mask = cv2.threshold(lab[:, :, 0], 100, 255, cv2.THRESH_BINARY)
    cv2.connectedComponentsWithStats(mask)
    return (time.perf_counter() - t0) * 1000


def categories(scene: dict, setup: SetUpFolder) -> list[str]:
    """The rows a scene is reported under: its kind, 'big' with 8 or more of one colour, and
    its set-up's grey floor if it lies on one."""
    big = max(scene["visible_counts"].values(), default=0) >= BIG
    floor = setup.truth["setup"].get("floor")
    return [scene["kind"]] + (["big"] if big else []) + ([f"on {floor}"] if floor else [])


def bench_folder(path, out, models: Models | None = None) -> None:
    setups = read_folder(path)
    models = models or Models.load()
    source = ",".join(sorted({s.source for s in setups}))
    # per scene: (exact, called sure, called sure and wrong)
    rows: dict[str, list[tuple[bool, bool, bool]]] = {k: [] for k in KINDS + ("big", "all")}
    ours, floor, refused = [], [], 0
    cv2.setNumThreads(1)  # ms per frame on one core, as the generated run measures them
    videos = {"required": 0, "once_right": 0, "while_moving": 0, "wrong": 0, "delays": []}
    cubes = {name: dict.fromkeys(OUTCOMES, 0) for _, name, _ in IN_VIEW}
    cubes["extra"] = 0
    for setup in setups:
        try:
            profile, counter = calibrate(setup, models)
        except CalibrationError:
            refused += 1
            for scene in setup.truth["scenes"]:
                for kind in categories(scene, setup) + ["all"]:
                    rows.setdefault(kind, []).append((False, False, False))
            continue
        for scene in setup.truth["scenes"]:
            image = setup.image(scene["file"])
            floor.append(floor_ms(image))
            t0 = time.perf_counter()
            result = counter.count(image)
            ours.append((time.perf_counter() - t0) * 1000)
            ok = exact(result.counts, scene["visible_counts"], result.unknown)
            tally_cubes(counter, result, scene, cubes)
            for kind in categories(scene, setup) + ["all"]:
                rows.setdefault(kind, []).append((ok, result.sure, result.sure and not ok))
        for video in setup.truth["videos"]:
            _watch(setup, profile, models, video, videos)
    scenes = len(rows["all"])
    out(
        f"{source}_setups",
        f"{source} ({path}): {len(setups)} set-ups, {scenes} scenes, "
        f"calibrations refused: {refused}",
        [len(setups), scenes, refused],
    )
    if scenes:
        # (called sure: the share of scenes the table need not check)
        out(
            None,
            f"  {'kind':<13} {'exact':>7} {'called sure':>12} {'sure and wrong':>15} {'scenes':>7}",
            None,
        )
    for kind in sorted(rows, key=lambda k: k == "all"):  # grey-floor rows before "all"
        vals = rows[kind]
        if not vals:
            continue
        ok, sure, wrong = (float(v) for v in np.mean(vals, axis=0))
        name = "8+ of one" if kind == "big" else kind
        out(
            f"{source}_{kind.replace(' ', '_')}",
            f"  {name:<13} {100 * ok:6.1f}% {100 * sure:11.1f}% {100 * wrong:14.1f}% "
            f"{len(vals):7d}",
            {
                "exact": round(ok, 4),
                "sure": round(sure, 4),
                "sure_and_wrong": round(wrong, 4),
                "scenes": len(vals),
            },
        )
    seen = sum(sum(cubes[name].values()) for _, name, _ in IN_VIEW)
    if seen:  # (a folder of drop videos alone has no cubes to follow)
        for _, name, said in IN_VIEW:
            n = sum(cubes[name].values())
            share = {k: round(v / n, 4) if n else None for k, v in cubes[name].items()}
            out(
                f"{source}_cubes_{name}_in_view",
                f"  cubes with {said} in view: {n}: "
                + ", ".join(
                    f"{100 * v:.1f}% {OUTCOMES[k]}" for k, v in share.items() if v is not None
                ),
                {"cubes": n} | share,
            )
        out(
            f"{source}_cubes_extra",
            f"  cubes counted where none lay: {cubes['extra']} (to {seen} cubes in view)",
            {"extra": cubes["extra"], "cubes": seen},
        )
    if ours:
        med, base = statistics.median(ours), statistics.median(floor)
        out(
            f"{source}_ms",
            f"  median {med:.2f} ms per frame, OpenCV floor {base:.2f} ms: "
            f"{med / base:.1f}x the floor",
            {"ms": round(med, 3), "floor_ms": round(base, 3), "ratio": round(med / base, 2)},
        )
    if videos["required"]:
        delays = videos["delays"]
        delay = (
            f"delay after the last movement median {statistics.median(delays):.2f} s, "
            f"max {max(delays):.2f} s"
            if delays
            else "no delay measured"
        )
        out(
            f"{source}_videos",
            f"  drop videos: settled once with the right counts "
            f"{videos['once_right']}/{videos['required']}, events while moving "
            f"{videos['while_moving']}, events with a wrong count {videos['wrong']}; {delay}",
            {k: v for k, v in videos.items() if k != "delays"}
            | {"delay_median": round(statistics.median(delays), 3) if delays else None},
        )


def tally_cubes(counter, result, scene: dict, tally: dict) -> None:
    """Add the scene's cubes to `tally`: each cube in view paired with the nearest counted
    cube within half a top (the closest pairs first), by its share in view; counted cubes
    paired with none are extra."""
    cubes = [c for c in scene["cubes"] if not c["hidden"]]
    want = counter.view.to_view([c["top"] for c in cubes]).reshape(-1, 2)
    got = counter.view.to_view([c.centre for c in result.cubes]).reshape(-1, 2)
    apart = np.hypot(*(want[:, None] - got[None]).transpose(2, 0, 1)).reshape(len(want), -1)
    pair: dict[int, int] = {}  # cube in view -> counted cube
    paired: set[int] = set()
    for flat in np.argsort(apart, axis=None):
        i, j = divmod(int(flat), apart.shape[1])
        if apart[i, j] > TOP_PX / 2:
            break
        if i not in pair and j not in paired:
            pair[i] = j
            paired.add(j)
    for i, cube in enumerate(cubes):
        band = next(name for least, name, _ in IN_VIEW if cube["visible"] >= least)
        if i not in pair:
            tally[band]["missed"] += 1
        elif result.cubes[pair[i]].colour == cube["colour"]:
            tally[band]["found"] += 1
        else:
            tally[band]["wrong_colour"] += 1
    tally["extra"] += len(result.cubes) - len(pair)


def _watch(setup: SetUpFolder, profile, models: Models, video: dict, tally: dict) -> None:
    """One drop video through the watcher: after the last movement it should report the
    settled tray once with the right counts, and never while cubes move."""
    watcher = Watcher(lambda size: make_counter(profile, size, models.net, models.confidence))
    after = []
    for i, frame in enumerate(video["frames"]):
        settled = watcher.feed(setup.image(frame["file"]), frame["time"], i)
        if settled is None:
            continue
        if frame["moving"]:
            tally["while_moving"] += 1
        if not exact(settled.result.counts, frame["counts"], settled.result.unknown):
            tally["wrong"] += 1
        if frame["time"] > video["last_movement"]:
            after.append((frame["time"], settled))
    tally["required"] += 1
    if len(after) == 1 and exact(
        after[0][1].result.counts, video["visible_counts"], after[0][1].result.unknown
    ):
        tally["once_right"] += 1
        tally["delays"].append(after[0][0] - video["last_movement"])
