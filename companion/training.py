"""Growing the counter's forest (vision.split) on generated scenes.

Each generated table is calibrated on one frame, as a user would, and its scenes are cut
into blobs the way the counter does. Every colour showing in a blob gives one row of
vision.split.FEATURES, labelled with how many cubes of that colour the scene's ground
truth puts in the blob (a cube belongs to the blob under the middle of its visible top,
or the blob most of the half cube round it falls in). The tables come from their own
seeds (TRAIN_SEED and up), apart from the benchmark's and the tests'.
"""
from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from calibration.errors import CalibrationError
from companion.benchmarks.vision import table
from vision.forest import Forest, grow
from vision.split import feature_rows, rule_counts

TRAIN_SEED = 200_000
# Counts above this are rare enough in one blob to be learnt as this.
MOST = 4


def _blob_of(counter, comps: np.ndarray, centre) -> int:
    """Component under an image point, or the commonest one within half a cube of it (0: none)."""
    x, y = (int(round(v)) for v in counter.geometry.to_rect([centre])[0])
    h, w = comps.shape
    if 0 <= y < h and 0 <= x < w and comps[y, x]:
        return int(comps[y, x])
    r = int(counter.cube_size / 2)
    near = comps[max(0, y - r):max(0, y + r + 1), max(0, x - r):max(0, x + r + 1)]
    near = near[near > 0]
    return int(np.bincount(near).argmax()) if len(near) else 0


def table_rows(seed: int, scenes: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Feature rows of one table's scenes, their true counts, and the rules' counts."""
    try:
        counter, drawn = table(seed, scenes, rules_only=True)
    except CalibrationError:
        return np.zeros((0, 0)), np.zeros(0, int), np.zeros(0, int)
    rows, truth, rules = [], [], []
    n = len(counter.model.names)
    for _, scene in drawn:
        _, coarse, comps, blobs = counter.blobs(scene.image)
        units = [counter.silhouette(b.centre) for b in blobs]
        counts = rule_counts(blobs, comps, coarse, n, counter.top_area, units, counter.dim_colours)
        found, where = feature_rows(blobs, comps, coarse, n, counter.top_area, units, counter.dim_colours, counts,
                                    counter.shadow_gaps())
        owner = [(_blob_of(counter, comps, cube.centre), cube.colour) for cube in scene.cubes]
        for row, (i, c) in zip(found, where):
            rows.append(row)
            truth.append(min(MOST, owner.count((blobs[i].index, counter.model.names[c - 1]))))
            rules.append(counts[i].get(c, (0, 0.0))[0])
    return np.array(rows), np.array(truth, int), np.array(rules, int)


def dataset(first: int, setups: int, workers: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    with ProcessPoolExecutor(workers) as pool:
        parts = [p for p in pool.map(table_rows, range(first, first + setups)) if len(p[1])]
    return tuple(np.concatenate(a) for a in zip(*parts))


def train(setups: int, check: int, seed: int, trees: int, depth: int, workers: int, output, out=print) -> Forest:
    """Grow a forest on `setups` tables, report its row accuracy against the rules' on
    `check` further tables, and save it to `output`."""
    start = time.perf_counter()
    rows, truth, _ = dataset(seed, setups, workers)
    out(f"{len(rows)} rows from {setups} tables (seeds {seed}..{seed + setups - 1}) "
        f"in {time.perf_counter() - start:.0f} s")
    start = time.perf_counter()
    forest = grow(rows, truth, trees=trees, depth=depth)
    out(f"grown: {trees} trees, {len(forest.feature)} nodes, in {time.perf_counter() - start:.0f} s")
    if check:
        rows, truth, rules = dataset(seed + setups, check, workers)
        got, _ = forest.predict(rows)
        out(f"check ({check} more tables, {len(rows)} rows): counts right by the rules "
            f"{100 * np.mean(rules == truth):.1f}%, by the forest {100 * np.mean(got == truth):.1f}%")
    forest.save(output)
    out(f"saved {output}")
    return forest
