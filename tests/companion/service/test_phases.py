"""Battle phases and their sentences, on the seed's worked examples."""

from __future__ import annotations

import pytest

from companion.rules.battle import BattleError
from companion.service import announce, phases
from companion.service.phases import PhaseError

SEED_1 = {
    "attacker": "blue",
    "defender": "red",
    "thrown": {"blue": 4, "red": 3},
    "territory": "Lorraine",
}


def test_seed_example_1_through_every_phase():
    record = phases.declare(1, SEED_1, cup={"yellow": 1}, farmer="green")
    assert record.into_tower == {"blue": 4, "red": 3, "yellow": 1}
    assert announce.declared(record) == (
        "Battle 1: blue attacks red in Lorraine. Throw 4 blue and 3 red and the cup: 1 yellow."
    )
    record = phases.moving(record)
    record = phases.counted(record, {"blue": 3, "red": 4, "green": 1}, unknown=0, confidence=0.97)
    assert record.status == "counted" and record.outcome["result"] == "held"
    assert announce.counted(record) == (
        "Battle 1: counted 3 blue, 4 red and 1 green: red holds in "
        "Lorraine, 5 against 3. Confirm or correct."
    )
    applied, battle, outcome = phases.confirm(record)
    assert applied.status == "applied" and not applied.corrected
    assert outcome.to_province == {"red": 2} and outcome.to_supply == {
        "blue": 3,
        "green": 1,
        "red": 2,
    }
    assert announce.applied(applied) == (
        "Battle 1 confirmed: red holds in Lorraine, 5 against 3. Back onto the province: 2 red."
    )


def test_a_count_the_camera_doubts_is_said_so_and_waits_for_the_table():
    record = phases.moving(phases.declare(1, SEED_1, cup={"yellow": 1}, farmer="green"))
    sure = phases.counted(record, {"blue": 3, "red": 4, "green": 1}, confidence=0.91)
    assert not phases.doubtful(sure) and "sure" not in announce.counted(sure)
    doubted = phases.counted(
        record, {"blue": 3, "red": 4, "green": 1}, confidence=0.41, unsure=True
    )
    assert phases.doubtful(doubted)
    assert announce.counted(doubted) == (
        "Battle 1: counted 3 blue, 4 red and 1 green: red holds in "
        "Lorraine, 5 against 3. Not sure of this count: check the tray. "
        "Confirm or correct."
    )
    # Unknown blobs say more than the doubt: they are named instead.
    unknown = phases.counted(record, {"blue": 3, "red": 4}, unknown=1, confidence=0.0, unsure=True)
    assert phases.doubtful(unknown) and "Not sure" not in announce.counted(unknown)
    # A record stored before the counter could doubt loads as not doubted.
    stored = sure.to_dict()
    del stored["unsure"]
    assert phases.BattleRecord.from_dict(stored) == sure
    # A recount clears the doubt with the count it replaces.
    assert not phases.counted(doubted, {"blue": 3, "red": 4, "green": 1}, confidence=0.9).unsure


def test_seed_example_2_corrected_on_confirm():
    record = phases.declare(
        2,
        {"attacker": "red", "defender": "blue", "thrown": {"red": 5, "blue": 6}},
        cup={},
        farmer="green",
    )
    record = phases.counted(record, {"red": 4, "blue": 6})
    assert record.outcome["result"] == "held" and record.outcome["to_province"] == {"blue": 2}
    # Two fewer blue: devastated.
    applied, _, outcome = phases.confirm(record, {"red": 4, "blue": 4})
    assert applied.corrected and outcome.result == "devastated"
    assert "devastated, 4 against 4" in announce.applied(applied)


def test_transitions_that_do_not_fit_the_phase_are_refused():
    record = phases.declare(3, SEED_1, cup={}, farmer="green")
    with pytest.raises(PhaseError, match='give "emerged"'):
        phases.confirm(record)
    cancelled = phases.cancel(record)
    for step in (phases.cancel, phases.moving, lambda r: phases.counted(r, {})):
        with pytest.raises(PhaseError, match="battle 3 is cancelled"):
            step(cancelled)


@pytest.mark.parametrize(
    "params, message",
    [
        ({**SEED_1, "extra": 1}, "unknown key 'extra'"),
        ({"attacker": "blue", "thrown": {"blue": 1}}, "missing key 'defender'"),
        ({**SEED_1, "defender": "blue"}, "also the attacker"),
        ({**SEED_1, "territory": ""}, "territory: expected"),
        ({**SEED_1, "thrown": {"blue": 2, "yellow": 1}}, "thrown.yellow"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_bad_declarations_name_the_problem(params, message):
    with pytest.raises(BattleError, match=message):
        phases.declare(1, params, cup={}, farmer="green")
