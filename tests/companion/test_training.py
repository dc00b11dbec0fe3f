"""Growing the counter's forest on generated tables (companion.training, `companion train`)."""
import numpy as np

from companion.cli import main
from companion.training import MOST, table_rows
from vision.forest import Forest
from vision.split import FEATURES


def test_rows_of_a_table_carry_the_features_and_the_true_counts():
    rows, truth, rules = table_rows(500, scenes=1)      # one scene of each kind
    assert rows.shape == (len(truth), len(FEATURES)) and len(truth) >= 8
    assert truth.min() >= 0 and truth.max() <= MOST
    # the ground truth finds the cubes in their blobs: the rules mostly agree with it
    assert np.mean(truth == rules) > 0.8
    assert truth.sum() > 0.8 * rules.sum()


def test_companion_train_grows_saves_and_checks_a_forest(tmp_path, capsys):
    out = tmp_path / "counts.npz"
    assert main(["train", "--setups", "2", "--check", "1", "--seed", "501", "--trees", "3", "--depth", "4",
                 "--workers", "1", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "from 2 tables (seeds 501..502)" in text and "by the forest" in text
    forest = Forest.load(out)
    assert forest.features == len(FEATURES) and len(forest.roots) == 3


def test_companion_train_refuses_nonsense_sizes(tmp_path, capsys):
    out = tmp_path / "counts.npz"
    assert main(["train", "--setups", "0", "--output", str(out)]) == 2
    assert "--setups" in capsys.readouterr().err and not out.exists()
