"""`companion odds` run as the real command, in a subprocess."""

from __future__ import annotations

import json

import pytest

from companion.config import load_config
from companion.service.table import TableService
from companion.store import Store
from tests.companion.commands.test_battle_cli import companion

BATTLE = {
    "attacker": "blue",
    "defender": "red",
    "thrown": {"blue": 4, "red": 3},
    "cup": {"yellow": 1},
}


def test_odds_from_the_json_alone(tmp_path):
    path = tmp_path / "battle.json"
    path.write_text(json.dumps({**BATTLE, "tower": {"red": 2}, "keep": 0.25, "release": 0.5}))
    run = companion("odds", "--json", str(path))
    assert run.returncode == 0, run.stderr
    [line] = run.stdout.splitlines()
    odds = json.loads(line)
    assert set(odds["chances"]) == {"conquered", "held", "devastated"}
    assert sum(odds["chances"].values()) == pytest.approx(1, abs=0.002)
    assert odds["inside"] == {"red": 2}
    assert odds["stickiness"]["keep"] == 0.25 and odds["stickiness"]["release"] == 0.5
    # 3 of 4 blue out on average; red: 3 thrown, 3/4 out, plus half of the 2 inside.
    assert odds["expected"]["blue"] == pytest.approx(3, abs=0.1)
    assert odds["expected"]["red"] == pytest.approx(3.25, abs=0.1)
    # The same input, the same odds; another seed, others.
    assert companion("odds", "--json", str(path)).stdout == run.stdout
    assert companion("odds", "--json", str(path), "--seed", "7").stdout != run.stdout


def test_odds_from_a_companions_data_dir(tmp_path):
    config, _ = load_config(
        None, {"data_dir": str(tmp_path), "speech.enabled": False, "panel.mode": "off"}
    )
    store = Store.in_dir(tmp_path)
    service = TableService(config, store, None)
    record = service.prime_tower()
    service.confirm(record.id, {c: 7 for c in config.colours.players} | {"green": 5})
    service.stop()
    store.close()
    run = companion(
        "odds",
        "--json",
        "-",
        "--data",
        str(tmp_path),
        stdin=json.dumps({"attacker": "blue", "defender": None, "thrown": {"blue": 2}}),
    )
    assert run.returncode == 0, run.stderr
    odds = json.loads(run.stdout)
    assert odds["inside"] == {"green": 5}  # what the priming left in the tower
    assert odds["stickiness"]["throws"] == 1
    assert odds["expected"]["green"] > 1  # the farmer defending, and loose ones


@pytest.mark.parametrize(
    "battle, message",
    [
        ({**BATTLE, "keep": 1.5}, "keep: expected a share from 0 to 1, got 1.5"),
        ({**BATTLE, "tower": {"red": -1}}, "tower.red: -1 is negative"),
        (
            {**BATTLE, "emerged": {"blue": 1}},
            "emerged: the odds are asked before the throw; leave it out",
        ),
        ({**BATTLE, "attacker": "red"}, "defender: 'red' is also the attacker"),
        ([1], "expected a JSON object describing one battle, got list"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(battle, message):
    run = companion("odds", "--json", "-", stdin=json.dumps(battle))
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines() == [f"companion odds: error: {message}"]


def test_a_data_dir_without_a_game_database_is_an_error(tmp_path):
    run = companion("odds", "--json", "-", "--data", str(tmp_path), stdin=json.dumps(BATTLE))
    assert run.returncode == 2 and "no companion database here" in run.stderr
    assert list(tmp_path.iterdir()) == []  # nothing was created there
