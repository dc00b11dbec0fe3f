"""The tray memory: what a settled tray means for the open battle."""

from __future__ import annotations

from companion.service import phases
from companion.service.tray import COUNT, KEEP, STILL_WAITING, TrayMemory


def test_a_settled_tray_without_a_battle_is_only_remembered():
    tray = TrayMemory()
    assert tray.read(None, {"red": 2}, {}) == KEEP
    assert tray.last == {"red": 2}


def test_strays_lying_before_the_throw_are_not_counted_as_emerged():
    tray = TrayMemory(last={"red": 1, "blue": 2})
    tray.armed(cup={"red": 1})  # the red is the cup, the blues were left by mistake
    assert tray.strays == {"blue": 2}
    assert tray.read(phases.MOVING, {"red": 1, "blue": 5, "green": 1}, {"red": 1}) == COUNT
    assert tray.emerged({"red": 1, "blue": 5, "green": 1}) == {"red": 1, "blue": 3, "green": 1}


def test_cubes_taken_out_before_the_throw_are_still_waiting():
    tray = TrayMemory(last={"red": 1, "blue": 2})
    tray.armed(cup={"red": 1})
    # the cup picked up to be thrown: fewer cubes, nothing new
    assert tray.read(phases.MOVING, {"blue": 2}, {"red": 1}) == STILL_WAITING
    assert tray.before == {"blue": 2}
    assert tray.read(phases.WAITING, {"blue": 2}, {"red": 1}) == KEEP


def test_a_counted_battle_follows_more_cubes_but_not_fewer():
    tray = TrayMemory()
    tray.counted({"red": 3})
    assert tray.read(phases.COUNTED, {"red": 4}, {}) == COUNT  # one trickled out late
    assert tray.read(phases.COUNTED, {"red": 1}, {}) == KEEP  # the table is clearing it


def test_the_simulated_table_says_what_lies_there_before_a_throw():
    tray = TrayMemory()
    tray.before_throw({"green": 1})
    assert tray.emerged({"green": 2, "red": 3}) == {"green": 1, "red": 3}
    tray.cleared({"yellow": 1})
    assert tray.last == {"yellow": 1}
