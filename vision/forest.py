"""A small random forest of classification trees, in numpy: grown from labelled rows,
stored as plain arrays, applied to many rows at once.

OpenCV 5 no longer ships its ml module, and the counter needs only a forest of a few
dozen shallow trees over a handful of numbers per blob, so it is written out here.
"""

from __future__ import annotations

import functools
import zipfile
from dataclasses import dataclass

import numpy as np

from vision.errors import VisionError

LEAF = -1


@dataclass(frozen=True)
class Forest:
    """Trees as flat arrays, one row per node of all trees: `feature` (LEAF for a leaf),
    `threshold` (go left when the value is <= it), `left`/`right` (node rows), `value`
    (class shares of the training rows that reached the node); `roots` are each tree's
    first row, `classes` the class labels and `width` the number of features per row."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    roots: np.ndarray
    classes: np.ndarray
    width: np.ndarray  # 0-d: features per row

    @property
    def features(self) -> int:
        return int(self.width)

    def proba(self, rows: np.ndarray) -> np.ndarray:
        """Class shares averaged over the trees, one row per input row."""
        rows = np.asarray(rows, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != self.features:
            raise VisionError(
                f"the forest needs rows of {self.features} numbers, got shape {rows.shape}"
            )
        # (flat arrays and take: a tree is walked a level per step, and a step costs the
        # calls, not the arithmetic)
        node = np.repeat(self.roots, len(rows))  # tree by tree, row by row
        at = np.tile(np.arange(len(rows)) * rows.shape[1], len(self.roots))
        values = rows.ravel()
        # A leaf's children are itself (and its feature, LEAF, reads some column), so the
        # rows that reached a leaf stay there while the others go down.
        while True:
            f = self.feature.take(node)
            if (f == LEAF).all():
                break
            node = self._children.take(2 * node + (values.take(at + f) > self.threshold.take(node)))
        return self.value.take(node, axis=0).reshape(len(self.roots), len(rows), -1).mean(axis=0)

    @functools.cached_property
    def _children(self) -> np.ndarray:
        """Each node's left and right child, side by side."""
        return np.stack([self.left, self.right], axis=1).ravel()

    def predict(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The most likely class per row and its share of the trees' votes."""
        p = self.proba(rows)
        best = p.argmax(axis=1)
        return self.classes[best], p[np.arange(len(p)), best]

    def save(self, path) -> None:
        np.savez_compressed(path, **{k: getattr(self, k) for k in self.__dataclass_fields__})

    @classmethod
    def load(cls, path) -> Forest:
        try:
            with np.load(path) as data:
                forest = cls(**{k: data[k] for k in cls.__dataclass_fields__})
        except OSError as e:
            raise VisionError(f"cannot read the forest in {path}: {e}") from None
        except KeyError as e:
            raise VisionError(f"the forest in {path} lacks {e}") from None
        except (ValueError, zipfile.BadZipFile):
            raise VisionError(f"{path} is not a saved forest") from None
        n = len(forest.feature)
        leaves = np.flatnonzero(forest.feature == LEAF)
        if (
            not all(
                len(a) == n for a in (forest.threshold, forest.left, forest.right, forest.value)
            )
            or forest.value.ndim != 2
            or forest.value.shape[1] != len(forest.classes)
            or forest.feature.max(initial=0) >= forest.features
            or np.any(forest.left[leaves] != leaves)
            or np.any(forest.right[leaves] != leaves)
        ):
            raise VisionError(f"the forest in {path} is inconsistent")
        return forest


def shipped(path, features: tuple[str, ...], model: str, load=None):
    """A forest (or, with its `load`, another model: vision.net.Net.load) the counter ships
    with, checked against the features the counter measures now (`model`: its name for
    `companion train --model`)."""
    again = f"grow it again with `companion train --model {model}`"
    try:
        learnt = (load or Forest.load)(path)
    except VisionError as e:
        raise VisionError(f"{e}: {again}") from None
    if learnt.features != len(features):
        raise VisionError(
            f"{path} was grown on {learnt.features} features, "
            f"the counter has {len(features)}: {again}"
        )
    return learnt


def grow(
    rows: np.ndarray,
    labels: np.ndarray,
    trees: int = 60,
    depth: int = 10,
    min_leaf: int = 3,
    features: int | None = None,
    seed: int = 0,
) -> Forest:
    """A forest of `trees` trees, each grown on a bootstrap sample to at most `depth`,
    splitting on the best (Gini) of `features` randomly chosen columns per node."""
    rows = np.asarray(rows, dtype=np.float64)
    classes, y = np.unique(np.asarray(labels), return_inverse=True)
    rng = np.random.default_rng(seed)
    m = features or max(1, int(round(np.sqrt(rows.shape[1]))))
    nodes: list[tuple[int, float, int, int, np.ndarray]] = []
    roots = []
    for _ in range(trees):
        sample = rng.integers(0, len(rows), len(rows))
        roots.append(len(nodes))
        _grow_tree(rows[sample], y[sample], len(classes), depth, min_leaf, m, rng, nodes)
    feature, threshold, left, right, value = zip(*nodes, strict=True)
    return Forest(
        np.array(feature, np.int32),
        np.array(threshold),
        np.array(left, np.int32),
        np.array(right, np.int32),
        np.array(value),
        np.array(roots, np.int32),
        classes,
        np.array(rows.shape[1]),
    )


def _grow_tree(X, y, n_classes, depth, min_leaf, m, rng, nodes) -> None:
    """Append one tree's nodes (depth first, children after their parent)."""

    def node(idx: np.ndarray, level: int) -> int:
        me = len(nodes)
        counts = np.bincount(y[idx], minlength=n_classes).astype(np.float64)
        nodes.append((LEAF, 0.0, me, me, counts / counts.sum()))
        split = (
            None
            if level >= depth or counts.max() == len(idx)
            else _best_split(X[idx], y[idx], n_classes, min_leaf, m, rng)
        )
        if split is None:
            return me
        f, t = split
        go = X[idx, f] <= t
        left = node(idx[go], level + 1)
        right = node(idx[~go], level + 1)
        nodes[me] = (f, t, left, right, nodes[me][4])
        return me

    node(np.arange(len(y)), 0)


def _best_split(X, y, n_classes, min_leaf, m, rng) -> tuple[int, float] | None:
    n = len(y)
    best, best_gini = None, np.inf
    onehot = np.eye(n_classes)[y]
    for f in rng.choice(X.shape[1], size=min(m, X.shape[1]), replace=False):
        order = np.argsort(X[:, f], kind="stable")
        v = X[order, f]
        left = np.cumsum(onehot[order], axis=0)[:-1]  # class counts left of each cut
        right = left[-1] + onehot[order[-1]] - left
        nl = np.arange(1, n, dtype=np.float64)
        nr = n - nl
        gini = nl * (1 - ((left / nl[:, None]) ** 2).sum(1)) + nr * (
            1 - ((right / nr[:, None]) ** 2).sum(1)
        )
        valid = (v[:-1] < v[1:]) & (nl >= min_leaf) & (nr >= min_leaf)
        if not valid.any():
            continue
        i = int(np.argmin(np.where(valid, gini, np.inf)))
        if gini[i] < best_gini:
            cut = (v[i] + v[i + 1]) / 2
            best, best_gini = (int(f), float(cut if cut < v[i + 1] else v[i])), gini[i]
    return best
