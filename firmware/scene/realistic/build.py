"""One realistic set-up's files: a calibration frame with its clicks, scenes of each kind,
drop videos, and the truth of all of them (see README, "Scene folders").

    files, truth = build_setup(seed)   # {relative path: bytes}, dict for truth.json
"""

from __future__ import annotations

import math

import numpy as np

from firmware.errors import FirmwareError
from firmware.scene.paints import DEFAULT_COLOURS
from firmware.scene.realistic.physics import Body, Simulation, counts, make_throw, rest_check
from firmware.scene.realistic.render import Renderer
from firmware.scene.realistic.setup import RealSetup, drift, on_felt, random_real_setup

KINDS = ("scattered", "touching", "piles", "drifted", "battle")
FPS = 15
VIDEO_SPP = 4  # a video frame is noisier than a still: a cheap camera's video mode is too
SUBFRAMES = 2  # renders averaged over a moving frame's exposure: motion blur at no extra cost
STILL_BEFORE = 0.6  # s of still tray before the throw
STILL_AFTER = 1.6  # s of still tray after the last movement (the watcher decides in < 0.7 s)


def _counts_for(kind: str, colours, rng) -> dict[str, int]:
    if kind == "battle":
        big, other = rng.choice(list(colours), 2, replace=False)
        out = {str(big): int(rng.integers(8, 13)), str(other): int(rng.integers(0, 13))}
        if rng.random() < 0.4 and "green" not in out:
            out["green"] = int(rng.integers(1, 5))
        return {c: n for c, n in out.items() if n}
    few = rng.choice(list(colours), int(rng.integers(2, 5)), replace=False)
    top = 3 if kind == "scattered" else 6
    return {str(c): int(rng.integers(1, top + 1)) for c in few}


def _throw_style(kind: str, rng) -> tuple[float, float]:
    """(speed m/s, spread rad): scattered cubes fly fast and wide; touching ones trickle
    out slowly into clumps and rows in front of the exit."""
    if kind == "scattered":
        return rng.uniform(0.6, 1.1), rng.uniform(0.5, 0.8)
    return rng.uniform(0.12, 0.45), rng.uniform(0.15, 0.45)


def _content(sim: Simulation, kind: str, rng) -> None:
    """Throws into the tray for a scene of `kind`; sometimes cubes of an earlier throw lie there."""
    colours = sim.setup.colours
    if rng.random() < 0.5:
        left = {
            str(c): 1 for c in rng.choice(list(colours), int(rng.integers(1, 4)), replace=False)
        }
        sim.throw(make_throw(left, rng, *_throw_style("scattered", rng)))
    shown = str(rng.choice(["scattered", "touching"])) if kind == "drifted" else kind
    sim.throw(make_throw(_counts_for(shown, colours, rng), rng, *_throw_style(shown, rng)))
    if kind == "piles":
        for _ in range(int(rng.integers(2, 5))):
            below = sim.bodies()[int(rng.integers(len(sim.ids)))]
            sim.drop_on(str(rng.choice(list(colours))), below)
            if rng.random() < 0.4:  # a third on the pile
                sim.settle()
                sim.drop_on(str(rng.choice(list(colours))), sim.bodies()[-1])
            sim.settle()


def _calibration(sim: Simulation, rng) -> None:
    """One lone cube of each colour, flat and apart, as a user sets them out to calibrate."""
    tray, size = sim.setup.tray, sim.setup.cube_size
    n = len(sim.setup.colours)
    cols = math.ceil(math.sqrt(n * 1.5))
    rows = math.ceil(n / cols)
    spots = [
        (
            -tray.width / 2 + (i + 0.5) * tray.width / cols,
            -tray.depth / 2 + (j + 0.5) * tray.depth / rows,
        )
        for j in range(rows)
        for i in range(cols)
    ]
    order = rng.permutation(len(spots))[:n]
    for colour, k in zip(sim.setup.colours, order, strict=True):
        x, y = spots[k]
        x += rng.uniform(-0.2, 0.2) * tray.width / cols
        y += rng.uniform(-0.2, 0.2) * tray.depth / rows
        yaw = rng.uniform(-math.pi, math.pi)
        sim.add(
            colour,
            (x, y, size / 2 + 0.5),
            (0, 0, 0),
            (0, 0, 0),
            sim.pb.getQuaternionFromEuler([0, 0, yaw]),
        )
    sim.settle()


def top_centre(body: Body, size: float) -> np.ndarray:
    """World point (mm) at the middle of the face that looks most upward."""
    R = body.rotation()
    axis = int(np.argmax(np.abs(R[2])))
    return np.array(body.position) + R[:, axis] * np.sign(R[2, axis]) * size / 2


def _cube_truth(sim: Simulation, renderer: Renderer, bodies: list[Body]) -> list[dict]:
    setup = sim.setup
    out = []
    for body, (share, seen) in zip(bodies, sim.visibility(setup.camera.pose()[1]), strict=True):
        # where the cube is seen (a hidden cube: where its top would be)
        centre = renderer.project([top_centre(body, setup.cube_size) if seen is None else seen])[0]
        low = body.position[2] - np.abs(body.rotation()[2]).sum() * setup.cube_size / 2
        out.append(
            {
                "colour": body.colour,
                "position": [round(v, 2) for v in body.position],
                "orientation": [round(v, 5) for v in body.orientation],
                "top": [round(float(v), 1) for v in centre],
                "visible": round(share, 3),
                "hidden": share == 0.0,
                "on": "floor" if low < 1.0 else "cube",
            }
        )
    return out


def _scene_truth(name: str, kind: str, sim, renderer, bodies) -> dict:
    cubes = _cube_truth(sim, renderer, bodies)
    seen = counts([b for b, c in zip(bodies, cubes, strict=True) if not c["hidden"]])
    return {
        "file": name,
        "kind": kind,
        "counts": counts(bodies),
        "visible_counts": seen,
        "cubes": cubes,
    }


def _simulated(setup: RealSetup, rng, content, truth, tries: int = 5):
    """(bodies or what `content(sim)` returns, `truth(sim)`) of a fresh simulation whose
    cubes all rest physically in the tray (rest_check): a throw that never settles or
    leaves a cube out of the tray is thrown again, up to `tries` times (6 of
    200 throws of every kind on 40 set-ups were thrown again once)."""
    for attempt in range(tries):
        try:
            with Simulation(setup, rng) as sim:
                made = content(sim)
                problems = rest_check(setup, sim.bodies())
                if problems:
                    raise FirmwareError("; ".join(problems))
                return (sim.bodies() if made is None else made), truth(sim)
        except FirmwareError:
            if attempt == tries - 1:
                raise


def build_setup(
    seed: int,
    scenes: int = 3,
    videos: int = 1,
    spp: int | None = None,
    felt: tuple[str, tuple[float, float, float]] | None = None,
):
    """The files of one set-up from its seed: ({relative path: bytes}, truth dict).
    `felt`: (name, linear RGB) of a grey felt to lay instead of the drawn mat, with white
    cubes besides the six paints."""
    rng = np.random.default_rng(seed)
    if felt is None:
        setup = random_real_setup(rng)
    else:
        setup = on_felt(random_real_setup(rng, DEFAULT_COLOURS + ("white",)), felt[1])
    files: dict[str, bytes] = {}
    truth: dict = {
        "source": "realistic",
        "seed": seed,
        "setup": {**_describe(setup), "floor": felt[0] if felt else None},
        "scenes": [],
        "videos": [],
    }
    with Renderer(setup, **({"spp": spp} if spp else {})) as renderer:
        with Simulation(setup, rng) as sim:
            _calibration(sim, rng)
            bodies = sim.bodies()
            files["calibration.jpg"] = renderer.photograph(renderer.linear(bodies, seed=seed), rng)
            cal = _scene_truth("calibration.jpg", "calibration", sim, renderer, bodies)
            truth["calibration"] = {
                **cal,
                "corners": [
                    [round(float(v), 1) for v in p]
                    for p in renderer.project(setup.tray.floor_corners())
                ],
                "clicks": {c["colour"]: [c["top"]] for c in cal["cubes"]},
            }
        for kind in KINDS:
            for j in range(scenes):
                light = drift(setup, rng) if kind == "drifted" else setup
                name = f"{kind}-{j}.jpg"
                bodies, entry = _simulated(
                    setup,
                    rng,
                    lambda sim, kind=kind: _content(sim, kind, rng),
                    lambda sim, name=name, kind=kind: _scene_truth(
                        name, kind, sim, renderer, sim.bodies()
                    ),
                )
                files[name] = renderer.photograph(renderer.linear(bodies, light, seed + j), rng)
                truth["scenes"].append(entry)
        for v in range(videos):
            video_files, video_truth = _video(setup, renderer, rng, f"video-{v}", spp)
            files.update(video_files)
            truth["videos"].append(video_truth)
    return files, truth


def _video(setup: RealSetup, renderer: Renderer, rng, folder: str, spp):
    """A throw filmed at FPS: still tray, cubes out of the exit, bouncing, at rest."""
    sub = 1 / (FPS * SUBFRAMES)
    kind = str(rng.choice(["scattered", "touching", "battle"]))

    def throw(sim):
        if rng.random() < 0.6:
            sim.throw(make_throw({str(rng.choice(list(setup.colours))): 2}, rng, 0.5, 0.6))
        before = sim.bodies()
        thrown = make_throw(_counts_for(kind, setup.colours, rng), rng, *_throw_style(kind, rng))
        return before, sim.throw(thrown, record=sub), sim.bodies()

    (before, record, final), settled = _simulated(
        setup, rng, throw, lambda sim: _scene_truth("", kind, sim, renderer, sim.bodies())
    )
    total = VIDEO_SPP if spp is None else min(spp, VIDEO_SPP)
    files, frames, cache = {}, [], {}
    n_before = round(STILL_BEFORE * FPS)
    last = max((t for t, _, moving in record if moving), default=0.0)
    n_throw = math.ceil((last + sub) * FPS)
    n_after = round(STILL_AFTER * FPS)
    for i in range(n_before + n_throw + n_after):
        t = i / FPS
        k = i - n_before
        if k < 0 or k >= n_throw:
            key = "before" if k < 0 else "after"
            bodies = before if k < 0 else final
            # A still tray renders the same: once, with fresh sensor noise per frame.
            if key not in cache:
                cache[key] = renderer.linear(bodies, seed=i, spp=total)
            light, moving = cache[key], False
        else:
            parts = [record[min(k * SUBFRAMES + s, len(record) - 1)] for s in range(SUBFRAMES)]
            light = np.mean(
                [
                    renderer.linear(p[1], seed=i * SUBFRAMES + s, spp=max(1, total // SUBFRAMES))
                    for s, p in enumerate(parts)
                ],
                axis=0,
            )
            moving = any(p[2] for p in parts)
            bodies = parts[-1][1]
        name = f"{folder}/frame-{i:03d}.jpg"
        files[name] = renderer.photograph(light, rng)
        frames.append(
            {"file": name, "time": round(t, 4), "moving": moving, "counts": counts(bodies)}
        )
    return files, {
        "folder": folder,
        "fps": FPS,
        "kind": kind,
        "frames": frames,
        "last_movement": round((n_before / FPS) + last, 4),
        "counts": settled["counts"],
        "visible_counts": settled["visible_counts"],
    }


def _describe(setup: RealSetup) -> dict:
    """The set-up's main parameters, for reading the results by condition."""
    return {
        "tray_mm": [round(setup.tray.width), round(setup.tray.depth)],
        "mat": setup.tray.mat,
        "walls": setup.tray.wall,
        "table": setup.tray.table,
        "camera_height_mm": round(setup.camera.height),
        "camera_tilt": round(setup.camera.tilt, 1),
        "cube_mm": round(setup.cube_size, 2),
        "lamps_kelvin": [round(lp.kelvin) for lp in setup.lamps],
        "ambient": round(setup.ambient, 3),
        "white_balance": round(setup.white_balance),
        "distortion": round(setup.distortion, 3),
        "jpeg_quality": setup.jpeg_quality,
        "colours": list(setup.colours),
    }
