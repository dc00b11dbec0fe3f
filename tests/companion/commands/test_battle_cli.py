"""`companion battle` run as the real command, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

EXAMPLE = {
    "attacker": "blue",
    "defender": "red",
    "revolt_markers": 0,
    "farmer": "green",
    "thrown": {"blue": 4, "red": 3},
    "cup": {},
    "emerged": {"blue": 3, "red": 4, "green": 1},
}


def companion(*args, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", "companion", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_file_input_prints_one_json_outcome_line(tmp_path):
    path = tmp_path / "battle.json"
    path.write_text(json.dumps(EXAMPLE))
    run = companion("battle", "--json", str(path))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert (out["result"], out["attacker_strength"], out["defender_strength"]) == ("held", 3, 5)
    assert out["to_supply"] == {"blue": 3, "green": 1, "red": 2}
    assert out["to_province"] == {"red": 2}
    assert set(out) == {
        "result",
        "attacker_strength",
        "defender_strength",
        "to_supply",
        "to_province",
        "province_owner",
        "cup_after",
        "revolt_marker_added",
        "cancel_pending_action",
        "tower_delta",
        "warnings",
    }


def test_stdin_and_farmer_from_config(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[colours]\nplayers = ["red", "blue", "green"]\nfarmer = "white"\n')
    battle = {
        "attacker": "green",
        "defender": None,
        "thrown": {"green": 2},
        "emerged": {"green": 2, "white": 1},
    }
    run = companion("battle", "--json", "-", "--config", str(config), stdin=json.dumps(battle))
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert (out["result"], out["province_owner"], out["revolt_marker_added"]) == (
        "conquered",
        "green",
        True,
    )
    assert out["to_supply"] == {"green": 1, "white": 1}
    assert out["tower_delta"] == {}  # 2 green + the white farmer in, the same out


@pytest.mark.parametrize(
    "stdin, message",
    [
        ('{"attacker": "blue",', "standard input: not valid JSON"),
        (json.dumps({**EXAMPLE, "colour": "x"}), "unknown key 'colour'"),
        (json.dumps({**EXAMPLE, "thrown": {"blue": -4}}), "thrown.blue: -4 is negative"),
        (
            json.dumps({**EXAMPLE, "emerged": {"blue": 1.5}}),
            "emerged.blue: expected a whole number",
        ),
        (json.dumps({**EXAMPLE, "defender": "blue"}), "defender: 'blue' is also the attacker"),
    ],
)
def test_bad_input_one_line_error_exit_2(stdin, message):
    run = companion("battle", "--json", "-", stdin=stdin)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.startswith("companion battle: error: ")
    assert message in run.stderr
    assert run.stderr.count("\n") == 1


def test_missing_file(tmp_path):
    run = companion("battle", "--json", str(tmp_path / "nope.json"))
    assert run.returncode == 2
    assert "nope.json: cannot read: No such file or directory" in run.stderr
    assert run.stderr.count("\n") == 1
