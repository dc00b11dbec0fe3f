"""Growing the counter's forests and net on generated tables (companion.training,
`companion train`)."""

import numpy as np

from companion.cli import main
from companion.training import MOST, _matched, dark_rows, table_rows
from vision.dark import DARK_CHANNELS, DARK_FEATURES, OUTLINE
from vision.forest import Forest
from vision.net import PATCH, PATCH_CHANNELS, Net
from vision.split import FEATURES

# A table where black passes for the floor in shadow, and one where no paint does; two
# such tables in a row.
DARK_TABLE, PLAIN_TABLE = 504, 500
DARK_PAIR = 496


def test_rows_of_a_table_carry_the_features_and_the_true_counts():
    rows, truth, rules, patches = table_rows(500, scenes=1)  # one scene of each kind
    assert rows.shape == (len(truth), len(FEATURES)) and len(truth) >= 8
    assert truth.min() >= 0 and truth.max() <= MOST
    # the ground truth finds the cubes in their blobs: the rules mostly agree with it
    assert np.mean(truth == rules) > 0.8
    assert truth.sum() > 0.8 * rules.sum()
    # patches are made only for the net
    assert len(patches) == 0
    again, _, _, patches = table_rows(500, scenes=1, patches=True)
    assert np.array_equal(again, rows) and patches.shape == (
        len(rows),
        PATCH,
        PATCH,
        len(PATCH_CHANNELS),
    )
    # every row's colour shows in its patch's tops or sides
    assert (patches[..., :2].reshape(len(rows), -1).max(axis=1) > 0).all()


def test_a_table_also_gives_battle_trays(monkeypatch):
    rows, truth, _, _ = table_rows(500, scenes=1)
    monkeypatch.setattr("companion.training.BATTLES", 0)
    plain, _, _, _ = table_rows(500, scenes=1)
    # the scenes come first, drawn as without them; the battle trays add rows
    assert len(rows) > len(plain) and np.array_equal(rows[: len(plain)], plain)
    # with blobs holding several cubes of one paint
    assert truth[len(plain) :].max() >= 2


def test_companion_train_grows_saves_and_checks_a_forest(tmp_path, capsys):
    out = tmp_path / "counts.npz"
    assert (
        main(
            [
                "train",
                "--setups",
                "2",
                "--check",
                "1",
                "--seed",
                "501",
                "--trees",
                "3",
                "--depth",
                "4",
                "--workers",
                "1",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "from 2 tables (seeds 501..502)" in text and "by the forest" in text
    forest = Forest.load(out)
    assert forest.features == len(FEATURES) and len(forest.roots) == 3


def test_companion_train_grows_saves_and_checks_the_net(tmp_path, capsys):
    out = tmp_path / "net.npz"
    assert (
        main(
            [
                "train",
                "--model",
                "net",
                "--setups",
                "2",
                "--check",
                "1",
                "--seed",
                "501",
                "--epochs",
                "2",
                "--workers",
                "1",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "pass 2 of 2" in text and "by the net" in text
    net = Net.load(out)
    assert net.features == len(FEATURES) and net.classes == MOST + 1
    rows, truth, _, patches = table_rows(503, scenes=1, patches=True)
    shares = net.proba(patches, rows)
    assert shares.shape == (len(rows), MOST + 1) and np.allclose(shares.sum(axis=1), 1)


def test_companion_train_grows_saves_and_checks_the_judges_net(tmp_path, capsys):
    out = tmp_path / "darknet.npz"
    assert (
        main(
            [
                "train",
                "--model",
                "darknet",
                "--setups",
                "1",
                "--check",
                "1",
                "--seed",
                str(DARK_PAIR),
                "--epochs",
                "2",
                "--workers",
                "1",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "pass 2 of 2" in text and "by the net" in text
    net = Net.load(out)
    assert (net.features, net.classes, net.channels) == (len(DARK_FEATURES), 2, len(DARK_CHANNELS))


def test_companion_train_refuses_nonsense_sizes(tmp_path, capsys):
    out = tmp_path / "counts.npz"
    assert main(["train", "--setups", "0", "--output", str(out)]) == 2
    assert "--setups" in capsys.readouterr().err and not out.exists()
    assert main(["train", "--model", "net", "--epochs", "0", "--output", str(out)]) == 2
    assert "--epochs" in capsys.readouterr().err and not out.exists()


def test_each_true_cube_takes_its_nearest_outline_and_its_nearest_other_candidate():
    cubes = np.array([[10.0, 10.0], [40.0, 10.0]])
    centres = [(11, 10), (10, 12), (13, 10), (40, 11), (70, 10)]
    outline = [True, False, False, True, False]
    # (13, 10) is farther from the first cube than (10, 12), the other pixel candidate there;
    # (70, 10) is out of reach of every cube
    assert _matched(centres, outline, cubes, reach=8) == [1, 1, 0, 1, 0]
    assert _matched(centres, outline, np.zeros((0, 2)), reach=8) == [0] * 5


def test_dark_rows_come_only_from_tables_where_a_paint_passes_for_shadow():
    rows, truth, rules, patches = dark_rows(DARK_TABLE, scenes=1)
    assert rows.shape == (len(truth), len(DARK_FEATURES)) and len(truth) >= 4
    assert len(patches) == 0  # made only for the judge's net
    again, _, _, patches = dark_rows(DARK_TABLE, scenes=1, patches=True)
    assert np.array_equal(again, rows) and patches.shape == (
        len(rows),
        PATCH,
        PATCH,
        len(DARK_CHANNELS),
    )
    assert set(truth) == {0, 1} and set(rules) <= {0, 1}
    # the outlines are among them, and the rules keep every candidate that is not one
    outline = rows[:, DARK_FEATURES.index("source")] == OUTLINE
    assert outline.any() and rules[~outline].all()
    assert len(dark_rows(PLAIN_TABLE, scenes=1)[0]) == 0


def test_companion_train_grows_the_dark_judge(tmp_path, capsys):
    out = tmp_path / "dark.npz"
    # (the table after it has no paint that passes for shadow: nothing to check on)
    assert (
        main(
            [
                "train",
                "--model",
                "dark",
                "--setups",
                "1",
                "--check",
                "1",
                "--seed",
                str(DARK_TABLE),
                "--trees",
                "3",
                "--depth",
                "4",
                "--workers",
                "1",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "rows from 1 tables" in text and "check (1 more tables): no rows to check on" in text
    forest = Forest.load(out)
    assert forest.features == len(DARK_FEATURES) and set(forest.classes) == {0, 1}


def test_companion_train_says_when_the_tables_give_nothing_to_learn(tmp_path, capsys):
    out = tmp_path / "dark.npz"
    assert (
        main(
            [
                "train",
                "--model",
                "dark",
                "--setups",
                "1",
                "--check",
                "0",
                "--seed",
                str(PLAIN_TABLE),
                "--workers",
                "1",
                "--output",
                str(out),
            ]
        )
        == 2
    )
    assert "no rows to learn from" in capsys.readouterr().err and not out.exists()
