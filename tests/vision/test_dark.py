"""The cubes of a paint that passes for the floor in shadow, judged (vision.dark)."""

import numpy as np
import pytest

from calibration import make_counter
from firmware.scene import CubePose, drift_light, layout, render
from tests.vision.scenes import calibrated, exact, scene
from vision.dark import (
    DARK_CHANNELS,
    DARK_FEATURES,
    EDGE_SPAN,
    LONE,
    OUTLINE,
    PIXELS,
    TOP_OUTLINE,
    DarkView,
    dark_forest,
    dark_net,
    merged,
    patches,
    rule_keeps,
)
from vision.net import LIGHT_SPAN, PATCH
from vision.split import Part

EDGE = 12.0


def _row(source, confidence=1.0, paint=0.5, floor=1.0):
    row = np.zeros(len(DARK_FEATURES))
    for name, value in (
        ("source", source),
        ("confidence", confidence),
        ("paint_distance", paint),
        ("floor_distance", floor),
    ):
        row[DARK_FEATURES.index(name)] = value
    return row


def test_a_cube_found_by_pixels_is_dropped_only_near_a_kept_outline():
    top = Part(1, (50.0, 50.0), 0.9)
    under = Part(1, (55.0, 52.0), 0.8)  # the same cube's pixels, off its top's middle
    beside = Part(1, (50.0 + EDGE, 50.0), 0.8)  # the next cube along
    assert merged([under, beside], [top], EDGE) == [beside, top]
    assert merged([under, beside], [], EDGE) == [under, beside]


def test_without_a_judge_pixels_and_lone_cubes_stay_outlines_need_strength_and_the_paint_colour():
    rows = np.array(
        [
            _row(PIXELS, 0.3, paint=3.0),
            _row(LONE, 0.4, paint=3.0),
            _row(OUTLINE, TOP_OUTLINE),
            _row(OUTLINE, TOP_OUTLINE - 0.01),
            _row(OUTLINE, 1.5, paint=1.2, floor=1.0),
        ]
    )
    assert rule_keeps(rows).tolist() == [True, True, True, False, False]


def test_the_shipped_judge_sees_the_features_the_counter_measures():
    assert dark_forest().features == len(DARK_FEATURES)
    assert set(dark_forest().classes) == {0, 1}


def test_the_shipped_judges_net_sees_the_features_and_the_patch_the_counter_makes():
    net = dark_net()
    assert (net.features, net.classes, net.channels) == (len(DARK_FEATURES), 2, len(DARK_CHANNELS))


def _view():
    """A 60x60 tray (fine view twice as fine) with one cube of paint 1 (of 2) at (30, 30):
    its pixels, a top half as light as the lit floor, a rim of sharp edges."""
    coarse = np.zeros((60, 60), np.uint8)
    coarse[24:36, 24:36] = 1
    level = np.ones((120, 120), np.float32)
    level[48:72, 48:72] = 0.5
    edges = np.zeros((120, 120), np.float32)
    edges[48:72, 48:72] = 3.0
    edges[50:70, 50:70] = 0.0
    return DarkView(
        coarse, level, edges, np.zeros_like(edges), (2.0, 2.0), 1, 2, EDGE, 0.5, 0.6, 0.1
    )


def test_a_candidates_patch_holds_the_paint_its_light_and_its_rim_with_the_floor_round_it():
    (got,) = patches(_view(), [(30.0, 30.0)])
    assert got.shape == (PATCH, PATCH, len(DARK_CHANNELS)) and got.dtype == np.uint8
    paint, floor, others, light, edges = np.moveaxis(got.astype(int), 2, 0)
    # the cube spans the middle third of the patch's PATCH_EDGES cube edges
    middle, rim = np.s_[10:14, 10:14], np.s_[:4, :]
    assert (paint[middle] == 255).all() and (floor[middle] == 0).all() and (paint[rim] == 0).all()
    assert (floor[rim] == 255).all() and others.max() == 0
    assert np.allclose(light[middle], 255 * 0.5 / LIGHT_SPAN, atol=2)
    assert np.allclose(light[rim], 255 / LIGHT_SPAN, atol=2)
    # the sharp edges ring the cube, clipped at EDGE_SPAN
    assert (
        edges[8, 12] == 255 * min(1.0, 3.0 / EDGE_SPAN)
        and edges[12, 12] == 0
        and edges[rim].max() == 0
    )


def test_a_candidate_at_the_trays_edge_sees_the_outside_as_other_and_lit():
    (got,) = patches(_view(), [(2.0, 2.0)])
    paint, floor, others, light, _ = np.moveaxis(got.astype(int), 2, 0)
    assert (
        (others[:6, :6] == 255).all()
        and (floor[:6, :6] == 0).all()
        and (floor[14:, 14:] == 255).all()
    )
    assert np.allclose(light[:6, :6], 255 / LIGHT_SPAN, atol=2)


@pytest.fixture(scope="module")
def grey_tray():
    setup, profile, _ = calibrated(47)
    return setup, profile


def test_a_frame_of_a_grey_tray_the_judge_is_clear_about_is_sure(grey_tray):
    """Black passes for shadow on this tray, but where every candidate's vote is clear the
    count is sure; a frame is doubted for its doubtful decisions, not for its tray."""
    setup, profile = grey_tray
    counter = make_counter(profile, (640, 480))
    for seed in (7100, 7102):
        s = scene(setup, {"black": 3, "red": 2, "blue": 1}, "scattered", seed)
        result = counter.count(s.image)
        assert exact(result, s.counts) and result.sure, (result.counts, result.confidence)


# (touching 7114 and 7124: two touching black tops, or a top beside a stronger false
# outline along its shaded side, whose centres were found less than a cube edge apart)
@pytest.mark.parametrize(
    "kind, seed", [("scattered", 7100), ("touching", 7114), ("touching", 7124)]
)
def test_every_black_cube_on_a_grey_tray_is_a_candidate_with_its_measures(grey_tray, kind, seed):
    setup, profile = grey_tray
    counter = make_counter(profile, (640, 480))
    s = scene(setup, {"black": 3, "red": 2, "blue": 1}, kind, seed)
    survey = counter.survey(s.image)
    parts, candidates, rows = survey.parts, survey.candidates, survey.rows
    assert rows.shape == (len(candidates), len(DARK_FEATURES))
    black = counter.model.names.index("black") + 1
    assert all(p.colour == black for p, _ in candidates) and all(p.colour != black for p in parts)
    assert set(rows[:, DARK_FEATURES.index("source")]) <= {PIXELS, LONE, OUTLINE}
    near = np.array([p.centre for p, _ in candidates])
    for cube in counter.geometry.to_rect([c.centre for c in s.cubes if c.colour == "black"]):
        assert np.hypot(*(near - cube).T).min() < 0.7 * counter.cube_size


@pytest.mark.parametrize(
    "kind, seed",
    [("touching", 7110), ("touching", 7130), ("touching", 7131), ("piles", 7119), ("piles", 7124)],
)
def test_the_judge_counts_black_cubes_on_a_grey_tray_the_rules_get_wrong(grey_tray, kind, seed):
    setup, profile = grey_tray
    s = scene(setup, {"black": 3, "red": 2, "blue": 1}, kind, seed)
    judged = make_counter(profile, (640, 480)).count(s.image)
    assert exact(judged, s.counts), (judged.counts, s.counts)
    rules = make_counter(profile, (640, 480), learned=("counts",)).count(s.image)
    assert rules.counts["black"] != 3


def test_a_black_cube_against_the_far_wall_of_a_grey_tray_is_counted(grey_tray):
    """Its top lies across the floor's far edge, so the square it shows on the floor lies
    less than half a cube from that edge, where candidates were once not looked for."""
    setup, profile = grey_tray
    rng = np.random.default_rng(7150)
    size = setup.cube_size
    wall = CubePose(
        "black", -0.3 * setup.tray.width, setup.tray.depth / 2 - size / 2 - 0.2, size / 2, size=size
    )
    s = render(
        setup,
        [wall]
        + layout(setup, {"black": 2, "red": 2, "blue": 1}, "scattered", rng, existing=[wall]),
        rng,
    )
    counter = make_counter(profile, (640, 480))
    assert exact(counter.count(s.image), s.counts)
    top = counter.geometry.to_rect([s.cubes[0].centre])[0]
    assert -0.2 * counter.cube_size < top[1] < 0.5 * counter.cube_size


@pytest.mark.parametrize("kind, seed", [("touching", 7109), ("piles", 7153), ("piles", 7163)])
def test_the_judges_net_counts_black_cubes_the_judge_alone_gets_wrong(grey_tray, kind, seed):
    setup, profile = grey_tray
    s = scene(setup, {"black": 3, "red": 2, "blue": 1}, kind, seed)
    assert exact(make_counter(profile, (640, 480)).count(s.image), s.counts)
    alone = make_counter(profile, (640, 480), learned=("counts", "dark", "net")).count(s.image)
    assert not exact(alone, s.counts)


def test_black_tops_a_changed_light_made_lighter_than_the_floor_are_candidates():
    """On a tray nearly as dark as black paint, a warmer, brighter light can show black tops
    lighter than the floor: their squares are candidates too, and the count is exact."""
    setup, profile, _ = calibrated(14)
    rng = np.random.default_rng(7137)
    drifted = drift_light(setup, rng)
    s = render(drifted, layout(drifted, {"black": 3, "red": 2, "blue": 1}, "scattered", rng), rng)
    assert exact(make_counter(profile, (640, 480)).count(s.image), s.counts)
    counter = make_counter(profile, (640, 480))
    survey = counter.survey(s.image)
    tops = np.array([p.centre for p, source in survey.candidates if source == OUTLINE])
    light = survey.rows[
        [source == OUTLINE for _, source in survey.candidates], DARK_FEATURES.index("level")
    ]
    cubes = counter.geometry.to_rect([c.centre for c in s.cubes if c.colour == "black"])
    nearest = [int(np.hypot(*(tops - cube).T).argmin()) for cube in cubes]
    assert all(
        np.hypot(*(tops[i] - cube)) < 0.3 * counter.cube_size
        for i, cube in zip(nearest, cubes, strict=True)
    )
    assert sum(light[i] > 1 for i in nearest) >= 2, light
