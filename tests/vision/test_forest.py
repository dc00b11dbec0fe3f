"""The random forest (vision.forest) and the counter's shipped forest (vision.split)."""

import numpy as np
import pytest

from vision.errors import VisionError
from vision.forest import LEAF, Forest, grow, shipped
from vision.split import FEATURES, count_forest


def _xor(n, seed):
    rng = np.random.default_rng(seed)
    rows = rng.uniform(0, 1, (n, 3))  # the third column is noise
    return rows, ((rows[:, 0] > 0.5) ^ (rows[:, 1] > 0.3)).astype(int) * 2 + 1  # classes 1 and 3


def test_a_forest_learns_a_rule_no_single_threshold_gives():
    rows, labels = _xor(600, 1)
    forest = grow(rows, labels, trees=15, depth=6, features=2)
    test, truth = _xor(400, 2)
    got, share = forest.predict(test)
    assert set(got) == {1, 3}  # the labels themselves, not their indices
    assert np.mean(got == truth) > 0.95
    assert np.all((share > 0.5) & (share <= 1.0))
    # a single tree stump cannot do it
    stump = grow(rows, labels, trees=1, depth=1, features=3)
    assert np.mean(stump.predict(test)[0] == truth) < 0.8


def test_a_saved_forest_gives_the_same_answers(tmp_path):
    rows, labels = _xor(300, 3)
    forest = grow(rows, labels, trees=5, depth=5)
    forest.save(tmp_path / "f.npz")
    again = Forest.load(tmp_path / "f.npz")
    assert np.array_equal(again.proba(rows), forest.proba(rows))
    with pytest.raises(VisionError, match="rows of 3 numbers"):
        again.proba(rows[:, :2])


def test_a_broken_forest_file_is_named(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a forest")
    with pytest.raises(VisionError, match="bad.npz"):
        Forest.load(bad)
    rows, labels = _xor(100, 4)
    forest = grow(rows, labels, trees=2, depth=3)
    np.savez(
        tmp_path / "cut.npz",
        **{k: getattr(forest, k) for k in ("feature", "threshold", "left", "right")},
    )
    with pytest.raises(VisionError, match="cut.npz"):
        Forest.load(tmp_path / "cut.npz")
    # a file cut short while written (a full SD card): a zip without its end
    forest.save(tmp_path / "short.npz")
    (tmp_path / "short.npz").write_bytes((tmp_path / "short.npz").read_bytes()[:200])
    with pytest.raises(VisionError, match="short.npz is not a saved forest"):
        Forest.load(tmp_path / "short.npz")
    # a leaf whose child is another node would send rows on from it
    leaf = int(np.flatnonzero(forest.feature == LEAF)[0])
    arrays = {k: getattr(forest, k) for k in forest.__dataclass_fields__}
    arrays["left"] = np.where(np.arange(len(forest.left)) == leaf, forest.roots[0], forest.left)
    np.savez(tmp_path / "loose.npz", **arrays)
    with pytest.raises(VisionError, match="loose.npz is inconsistent"):
        Forest.load(tmp_path / "loose.npz")


def test_the_shipped_forest_reads_the_counters_features():
    forest = count_forest()
    assert forest.features == len(FEATURES)
    assert list(forest.classes) == list(range(len(forest.classes)))  # counts 0, 1, 2, ...


def test_a_shipped_forest_grown_on_other_features_says_how_to_grow_it_again(tmp_path):
    rows, labels = _xor(100, 5)
    grow(rows, labels, trees=2, depth=3).save(tmp_path / "old.npz")
    assert shipped(tmp_path / "old.npz", ("a", "b", "c"), "dark").features == 3
    with pytest.raises(
        VisionError, match=r"old.npz was grown on 3 features, the counter has 4: .*--model dark`"
    ):
        shipped(tmp_path / "old.npz", ("a", "b", "c", "d"), "dark")
    (tmp_path / "old.npz").write_bytes(b"PK damaged")
    with pytest.raises(
        VisionError, match=r"old.npz is not a saved forest: grow it again with .*--model counts`"
    ):
        shipped(tmp_path / "old.npz", ("a", "b", "c"), "counts")
