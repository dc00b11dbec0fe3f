import argparse

from companion.benchmarks.vision import (
    LENSES,
    accuracy,
    battles,
    floor_clicks,
    floor_name,
    through_lenses,
)
from companion.tables import GREY_FLOORS, KINDS, battle_counts, set_up
from firmware.scene.paints import FLOORS


def test_a_battle_tray_holds_several_cubes_of_two_or_three_paints():
    rng, setup, _ = set_up(7)
    draws = [battle_counts(setup, rng) for _ in range(200)]
    assert all(set(d) == set(setup.colours) for d in draws)
    paints = [[n for n in d.values() if n] for d in draws]
    assert {len(p) for p in paints} == {2, 3}
    assert {n for p in paints for n in p} == set(range(1, 7))


def test_the_battle_figures_count_each_kind_of_battle_tray():
    figures = {}
    battles(
        argparse.Namespace(setups=1, seed=7, battles=1),
        lambda name, text, value: figures.update({name: value}),
    )
    for kind in ("scattered", "touching", "piles"):
        assert figures[f"battle_exact_{kind}"] in (0.0, 1.0)
    # every scene counted is among the doubt figures: three scenes, each exact or not
    flagged, wrong = figures["battle_miscounts_not_sure"]
    assert 0 <= flagged <= wrong <= 3
    assert wrong == round(
        3 - sum(figures[f"battle_exact_{k}"] for k in ("scattered", "touching", "piles"))
    )


def test_the_lens_figures_count_every_scene_of_a_set_up_through_each_lens():
    figures = {}
    through_lenses(
        argparse.Namespace(setups=1, seed=7, scenes=1),
        lambda name, text, value: figures.update({name: (text, value)}),
    )
    for key in LENSES:
        text, share = figures[f"exact_{key}"]
        assert share in (0.0, 0.25, 0.5, 0.75, 1.0)
        assert f"/{len(KINDS)}), calibrations refused: 0" in text


def test_the_accuracy_figures_split_by_floor_colour_with_extra_set_ups_on_grey_floors():
    figures, lines = {}, []
    args = argparse.Namespace(setups=1, seed=227, scenes=1, grey_floors=1)
    accuracy(args, lambda name, text, value: (figures.update({name: value}), lines.append(text)))
    drawn = floor_name(227)
    assert drawn in FLOORS and floor_name(227, "black") == "black"
    # the headline figures count the random set-up alone; the split counts the grey floors too
    assert figures[f"exact_floor_{drawn.replace(' ', '_')}"] == figures["exact_all"]
    for name in GREY_FLOORS:
        assert figures[f"exact_floor_{name.replace(' ', '_')}"] in (0.0, 0.25, 0.5, 0.75, 1.0)
        assert any(line and line.strip().startswith(f"{name}* ") for line in lines), lines
    floor_clicks(args, lambda name, text, value: figures.update({name: value}))
    assert figures["floor_clicks_refused"] == [1, 1]
    assert figures["floor_clicks_refused_grey"] == [3, 3]
