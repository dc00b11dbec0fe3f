"""Growing the counter's forests and nets on generated scenes.

Each generated table is calibrated on one frame, as a user would, and its scenes are cut
into blobs the way the counter does. For the count forest (vision.split), every colour
showing in a blob gives one row of vision.split.FEATURES, labelled with how many cubes of
that colour the scene's ground truth puts in the blob (a cube belongs to the blob under
the middle of its visible top, or the blob most of the half cube round it falls in). For
the dark judge (vision.dark), on tables where a paint passes for the floor in shadow,
every candidate cube of that paint gives one row of vision.dark.DARK_FEATURES, labelled
1 when it is a true cube (see `_matched`). The nets (vision.net) learn from the same rows
as the count forest and the judge, each row with its patch. The tables come from their own
seeds (TRAIN_SEED and up), apart from the benchmark's and the tests'. For the count
forest and net each table also gives battle trays (BATTLES).
"""

from __future__ import annotations

import functools
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from calibration.errors import CalibrationError
from companion.errors import CompanionError
from companion.net_training import EPOCHS, grow_net
from companion.tables import table
from vision.dark import DARK_CHANNELS, DARK_FEATURES, OUTLINE, rule_keeps
from vision.dark import patches as dark_patches
from vision.forest import Forest, grow
from vision.net import PATCH, PATCH_CHANNELS, Net
from vision.split import FEATURES, blob_patches, blob_pixels, feature_rows, rule_counts

TRAIN_SEED = 200_000
NO_PATCHES = np.zeros((0, PATCH, PATCH, len(PATCH_CHANNELS)), np.uint8)
NO_DARK_PATCHES = np.zeros((0, PATCH, PATCH, len(DARK_CHANNELS)), np.uint8)
# Battle trays (companion.tables.table) of each kind a table also gives the
# count forest and net: there cubes of one paint touch and pile far more often than in
# the scenes. Three of each (not one) gained 21 of 3584 scenes and 5 of 432 battle
# trays (3 December).
BATTLES = 3
# Counts above this are rare enough in one blob to be learnt as this.
MOST = 4
# A candidate of the dark judge is a true cube when that cube is the nearest one within
# this many cube edges that no nearer candidate of its kind took.
MATCH = 0.7


def _blob_of(counter, comps: np.ndarray, centre) -> int:
    """Component under an image point, or the commonest one within half a cube of it (0: none)."""
    x, y = (int(round(v)) for v in counter.geometry.to_rect([centre])[0])
    h, w = comps.shape
    if 0 <= y < h and 0 <= x < w and comps[y, x]:
        return int(comps[y, x])
    r = int(counter.cube_size / 2)
    near = comps[max(0, y - r) : max(0, y + r + 1), max(0, x - r) : max(0, x + r + 1)]
    near = near[near > 0]
    return int(np.bincount(near).argmax()) if len(near) else 0


def table_rows(seed: int, scenes: int = 4, patches: bool = False) -> tuple[np.ndarray, ...]:
    """Feature rows of one table's scenes, their true counts, the rules' counts, and with
    `patches` the net's patch of each row (vision.net; else none)."""
    try:
        counter, drawn = table(seed, scenes, learned=(), battles=BATTLES)
    except CalibrationError:
        return np.zeros((0, 0)), np.zeros(0, int), np.zeros(0, int), NO_PATCHES
    rows, truth, rules, seen = [], [], [], [NO_PATCHES]
    n = len(counter.model.names)
    for _, scene in drawn:
        rect, coarse, comps, blobs = counter.blobs(scene.image)
        units = [counter.silhouette(b.centre) for b in blobs]
        pixels = blob_pixels(blobs, comps, coarse, n, counter.top_area)
        counts = rule_counts(blobs, pixels, n, counter.top_area, units, counter.dim_colours)
        found, where = feature_rows(
            blobs,
            pixels,
            n,
            counter.top_area,
            units,
            counter.dim_colours,
            counts,
            counter.shadow_gaps(),
            [counter.sides(b.centre) for b in blobs],
        )
        owner = [(_blob_of(counter, comps, cube.centre), cube.colour) for cube in scene.cubes]
        for row, (i, c) in zip(found, where, strict=True):
            rows.append(row)
            truth.append(min(MOST, owner.count((blobs[i].index, counter.model.names[c - 1]))))
            rules.append(counts[i].get(c, (0, 0.0))[0])
        if patches:
            seen.append(
                blob_patches(
                    blobs,
                    comps,
                    coarse,
                    counter.light(rect),
                    n,
                    counter.top_area,
                    where,
                    [counter.sides(b.centre) for b in blobs],
                )
            )
    return np.array(rows), np.array(truth, int), np.array(rules, int), np.concatenate(seen)


def dark_rows(seed: int, scenes: int = 4, patches: bool = False) -> tuple[np.ndarray, ...]:
    """The dark judge's rows of one table's scenes (none where no paint passes for the
    floor in shadow), whether each is a true cube, whether the rules keep it, and with
    `patches` the judge's net's patch of each (vision.dark.patches; else none)."""
    empty = np.zeros((0, len(DARK_FEATURES))), np.zeros(0, int), np.zeros(0, int), NO_DARK_PATCHES
    try:
        counter, drawn = table(seed, scenes, learned=("counts", "net"))
    except CalibrationError:
        return empty
    if not counter.dark_colours or not counter.outline_strength:
        return empty
    name = counter.model.names[min(counter.dark_colours) - 1]
    rows, truth, seen = [], [], [NO_DARK_PATCHES]
    for _, scene in drawn:
        survey = counter.survey(scene.image)
        cubes = counter.geometry.to_rect([c.centre for c in scene.cubes if c.colour == name])
        centres = [p.centre for p, _ in survey.candidates]
        rows.append(survey.rows)
        truth += _matched(
            centres, [s == OUTLINE for _, s in survey.candidates], cubes, MATCH * counter.cube_size
        )
        if patches:
            seen.append(dark_patches(survey.view, centres))
    rows = np.concatenate(rows)
    return rows, np.array(truth, int), rule_keeps(rows).astype(int), np.concatenate(seen)


def _matched(centres, outline: list[bool], cubes: np.ndarray, reach: float) -> list[int]:
    """1 for the candidates that are true cubes: nearest pairs first, each cube is taken by
    at most one outline candidate and one other (the counter merges an outline with the
    cube found by pixels round it)."""
    pairs = sorted(
        (float(np.hypot(*(np.asarray(c) - cube))), i, j)
        for i, c in enumerate(centres)
        for j, cube in enumerate(cubes)
    )
    labels, taken = [0] * len(centres), set()
    for distance, i, j in pairs:
        if distance > reach:
            break
        if not labels[i] and (j, outline[i]) not in taken:
            labels[i] = 1
            taken.add((j, outline[i]))
    return labels


# What each model learns from: rows of a table, and their features.
MODELS = {
    "counts": (table_rows, FEATURES),
    "dark": (dark_rows, DARK_FEATURES),
    "net": (functools.partial(table_rows, patches=True), FEATURES),
    "darknet": (functools.partial(dark_rows, patches=True), DARK_FEATURES),
}
# The nets among them, and the classes each learns: counts 0..MOST, or cube or not.
NETS = {"net": MOST + 1, "darknet": 2}


def dataset(model: str, first: int, setups: int, workers: int) -> tuple[np.ndarray, ...]:
    """Rows of `setups` tables, their labels and the rules' answers (and for the nets, the
    rows' patches), each as one array."""
    rows_of, names = MODELS[model]
    with ProcessPoolExecutor(workers) as pool:
        parts = [p for p in pool.map(rows_of, range(first, first + setups)) if len(p[1])]
    if not parts:
        return np.zeros((0, len(names))), np.zeros(0, int), np.zeros(0, int)
    return tuple(np.concatenate(a) for a in zip(*parts, strict=True))


def train(
    model: str,
    setups: int,
    check: int,
    seed: int,
    trees: int,
    depth: int,
    workers: int,
    output,
    out=print,
    epochs: int = EPOCHS,
) -> Forest | Net:
    """Grow the `model` forest ("counts" or "dark") or net ("net" or "darknet"; see
    MODELS) on `setups` tables, report its row accuracy against the rules' on `check`
    further tables, and save it to `output`. `trees`, `depth`: the forest's; `epochs`: the
    net's passes."""
    start = time.perf_counter()
    rows, truth, *more = dataset(model, seed, setups, workers)
    out(
        f"{len(rows)} rows from {setups} tables (seeds {seed}..{seed + setups - 1}) "
        f"in {time.perf_counter() - start:.0f} s"
    )
    if not len(rows):
        raise CompanionError(f"no rows to learn from in {setups} tables: take more")
    start = time.perf_counter()
    if model in NETS:
        learnt = grow_net(more[1], rows, truth, NETS[model], epochs, log=out)
        out(f"grown: {epochs} passes, in {time.perf_counter() - start:.0f} s")
    else:
        learnt = grow(rows, truth, trees=trees, depth=depth)
        out(
            f"grown: {trees} trees, {len(learnt.feature)} nodes, "
            f"in {time.perf_counter() - start:.0f} s"
        )
    if check:
        rows, truth, rules, *more = dataset(model, seed + setups, check, workers)
        if len(rows):
            got = (
                learnt.proba(more[0], rows).argmax(axis=1)
                if model in NETS
                else learnt.predict(rows)[0]
            )
            out(
                f"check ({check} more tables, {len(rows)} rows): right by the rules "
                f"{100 * np.mean(rules == truth):.1f}%, "
                f"by the {'net' if model in NETS else 'forest'} {100 * np.mean(got == truth):.1f}%"
            )
        else:
            out(f"check ({check} more tables): no rows to check on")
    learnt.save(output)
    out(f"saved {output}")
    return learnt
