"""Self-play with the invariants checked after every turn, and the two commands."""

import json

import pytest

from companion.cli import main
from companion.rules import selfplay
from companion.rules.selfplay import InvariantError, play_game

from .test_state import ISSUE_EXAMPLE


@pytest.mark.parametrize("seed", range(20))
def test_self_play_games_finish_with_invariants_kept(board, seed):
    result = play_game(board, 2 + seed % 3, 30, seed)
    assert result.rounds >= 1 and result.actions > 0
    if result.winner:
        assert result.crowns[result.winner] >= 7


def test_self_play_is_reproducible(board):
    a, b = play_game(board, 3, 12, 99), play_game(board, 3, 12, 99)
    assert a.to_dict() == b.to_dict() and a.state.to_dict() == b.state.to_dict()


def test_a_broken_invariant_raises(board, monkeypatch):
    real = selfplay.take_turn

    def cheating(state, colour, phase, dice):  # a footman appears from nowhere
        state, actions = real(state, colour, phase, dice)
        site = next(t for t, v in state.territories.items() if colour in v.units)
        units = dict(state.units(site, colour))
        units["footman"] = units.get("footman", 0) + 1
        return state.with_units(site, colour, units), actions

    monkeypatch.setattr(selfplay, "take_turn", cheating)
    with pytest.raises(InvariantError, match="ledger board"):
        play_game(board, 2, 5, 1)


def test_automaton_command(tmp_path, capsys):
    state = {
        **ISSUE_EXAMPLE,
        "territories": {
            **ISSUE_EXAMPLE["territories"],
            "Saxony": {"units": {"red": {"footman": 2}}},
        },
    }
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    assert (
        main(
            [
                "automaton",
                "--state",
                str(path),
                "--player",
                "blue",
                "--order",
                "expand",
                "--seed",
                "1",
                "--json",
            ]
        )
        == 0
    )
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["action"] == "expand" and lines[0]["to"] == "Saxony" and lines[0]["attack"]
    assert (
        main(
            [
                "automaton",
                "--state",
                str(path),
                "--player",
                "blue",
                "--order",
                "tax-or-spend",
                "--seed",
                "1",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith("Blue spends 7 on 1 cavalry, 1 archer, 2 footmen")
    assert (
        main(
            [
                "automaton",
                "--state",
                str(path),
                "--player",
                "red",
                "--order",
                "siege-assault",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["action"] == "none"  # red has no siege engine


def test_automaton_command_bad_state(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**ISSUE_EXAMPLE, "territories": {"Atlantis": {"units": {}}}}))
    assert main(["automaton", "--state", str(path), "--player", "blue", "--order", "expand"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("companion automaton: error: ")
        and "territories.Atlantis: unknown territory" in err
    )
    good = tmp_path / "good.json"
    good.write_text(json.dumps(ISSUE_EXAMPLE))
    assert main(["automaton", "--state", str(good), "--player", "green", "--order", "expand"]) == 2
    assert "unknown player 'green'" in capsys.readouterr().err


def test_simulate_command(capsys):
    assert (
        main(
            [
                "simulate",
                "--automata",
                "3",
                "--rounds",
                "30",
                "--seed",
                "4",
                "--games",
                "2",
                "--json",
            ]
        )
        == 0
    )
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x.get("game") for x in lines[:2]] == [1, 2] and lines[0]["seed"] == 4
    assert lines[2]["summary"]["games"] == 2
    assert sum(lines[2]["summary"]["wins"].values()) == 2
    assert main(["simulate", "--automata", "9", "--rounds", "3", "--seed", "0"]) == 2
    assert "--automata: expected 2 to 4" in capsys.readouterr().err
