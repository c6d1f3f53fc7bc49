"""The full-step search: outline folding, reading the target picture, the scorer, the plan,
and whole episodes that reach the target."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import shapely

from shredfold.models.builtin.origami_agents import OrigamiSearch
from shredfold.origami import folded_silhouette, square_sheet
from shredfold.origami_bench import outlines as ol
from shredfold.origami_bench.design import SimpleFold, replay
from shredfold.origami_bench.env import EnvConfig, gs, render_folded, run_episode, silhouette
from shredfold.origami_bench.procedural import random_sequence
from shredfold.origami_bench.solvers import fold_search as fs
from shredfold.origami_bench.target_picture import read_target
from shredfold.spec import ModelConfig
from shredfold.store import Store

SIZE = 256
DECOY = "d" * 64  # a store key
# the square folded in half, then in half again: a quarter-size square
QUARTER = [SimpleFold((0.5, 0.0), (0.5, 1.0), "V"), SimpleFold((0.5, 0.5), (1.0, 0.5), "M")]
# the square folded along its diagonal, then the triangle in half: a quarter-size triangle
TRIANGLE = [SimpleFold((0.0, 0.0), (1.0, 1.0), "V"), SimpleFold((1.0, 0.0), (0.5, 0.5), "V")]
# two edges to the centre line: a strip half the sheet wide, in the middle
CUPBOARD = [SimpleFold((0.25, 0.0), (0.25, 1.0), "V"), SimpleFold((0.75, 1.0), (0.75, 0.0), "V")]
# a corner to the centre: no line through two corners of the square
CORNER = [SimpleFold((0.5, 0.0), (0.0, 0.5), "V")]


def _agent(store: Store | None = None) -> OrigamiSearch:
    return OrigamiSearch(ModelConfig(id="origami-search", adapter="origami-search"), store)


def _target(seq: list[SimpleFold]) -> tuple[bytes, np.ndarray]:
    state = replay(seq)[-1]
    return render_folded(state, SIZE), silhouette(state, SIZE)


def _play(target_png: bytes, agent: OrigamiSearch, step_limit: int = 4, item: str | None = None):  # noqa: ANN202
    env = EnvConfig(kind="fold", step_limit=step_limit, image_size=SIZE)
    return run_episode(target_png, env, lambda r: (agent.complete(r).text, {}), item=item)


def _px(shape: shapely.Geometry, other: shapely.Geometry, px: float) -> float:
    return float(shapely.hausdorff_distance(shape.boundary, other.boundary, densify=0.25)) / px


def test_folding_an_outline_reflects_the_left_part_onto_the_right() -> None:
    square = shapely.box(0, 0, 1, 1)
    half = ol.fold_outline(square, np.array([0.5, 0.0]), np.array([0.5, 1.0]))
    assert half is not None and half.equals(shapely.box(0.5, 0, 1, 1))
    # the other direction keeps the other half
    assert ol.fold_outline(square, np.array([0.5, 1.0]), np.array([0.5, 0.0])).equals(shapely.box(0, 0, 0.5, 1))
    # a line that misses the paper, or runs along its edge, folds nothing
    assert ol.fold_outline(square, np.array([2.0, 0.0]), np.array([2.0, 1.0])) is None
    assert ol.fold_outline(square, np.array([0.0, 0.0]), np.array([1.0, 0.0])) is None
    # a corner folded to the centre: a pentagon of 7/8 of the sheet
    corner = ol.fold_outline(square, np.array([0.5, 0.0]), np.array([0.0, 0.5]))
    assert corner.area == pytest.approx(0.875)


def test_candidate_lines_include_the_folds_a_person_makes() -> None:
    square = shapely.box(0, 0, 1, 1)
    keys = {ol.line_key(np.array(a), np.array(b)) for a, b in ol.candidate_lines(square)}
    for a, b in [((0, 0), (1, 1)), ((0.5, 0), (0.5, 1)), ((0, 0.5), (1, 0.5)), ((1, 0), (0, 1))]:
        assert ol.line_key(np.array(a, float), np.array(b, float)) in keys
    # lines read from a picture, a pixel or so off: one near a line above is that line ...
    assert len(ol.candidate_lines(square, (((0.501, 0.0), (0.501, 1.0)),))) == len(keys)
    # ... one through an edge's quarter points, or its midpoints, is the exact line
    noisy = (((0.252, -0.004), (0.248, 1.003)), ((0.497, 0.004), (0.003, 0.501)))
    lines = ol.candidate_lines(square, noisy)
    extra = {ol.line_key(np.array(a), np.array(b)) for a, b in lines[len(keys) :]}
    assert extra == {ol.line_key(np.array([0.25, 0.0]), np.array([0.25, 1.0])),
                     ol.line_key(np.array([0.5, 0.0]), np.array([0.0, 0.5]))}  # fmt: skip
    # and one that stands for no exact line is kept as read, marked so
    [(line, exact)] = ol.snapped(square, (((0.31, 0.0), (0.93, 1.0)),), np.zeros((0, 3)))
    assert not exact and ol.line_key(*np.array(line)) == ol.line_key(np.array([0.31, 0.0]), np.array([0.93, 1.0]))


def test_chords_are_the_edge_a_fold_leaves_on_its_line() -> None:
    square = shapely.box(0, 0, 1, 1)
    lengths, ends = ol.chords(square, [((0.5, 0.0), (0.5, 1.0)), ((0.0, 0.0), (1.0, 1.0)), ((2.0, 0.0), (2.0, 1.0))])
    assert lengths[:2] == pytest.approx([1.0, np.sqrt(2)])
    assert sorted(map(tuple, ends[0].round(9).tolist())) == [(0.5, 0.0), (0.5, 1.0)]
    assert np.isnan(ends[2]).all() and lengths[2] == 0.0  # it misses the paper


@pytest.mark.parametrize("seed", range(8))
def test_the_target_read_from_its_picture_lies_within_pixels_of_the_true_outline(seed: int) -> None:
    rng = np.random.default_rng(seed)
    state = replay(random_sequence(rng, 1 + seed % 4))[-1]
    target = read_target(render_folded(state, SIZE))
    true = shapely.intersection(folded_silhouette(state.geometry), shapely.box(-0.5, -0.5, 1.5, 1.5))
    assert _px(target.outline, true, target.px) <= 2.5
    assert target.area == pytest.approx(true.area, rel=0.06)
    # every fold leaves the paper on one side of its line: the last fold's edge is a support
    last = state.steps[-1]
    p, u = np.asarray(last.start), np.asarray(last.end) - np.asarray(last.start)
    u = u / np.hypot(*u)
    off = [abs((e[:, 0] - p[0]) * u[1] - (e[:, 1] - p[1]) * u[0]).max() for e in target.supports]
    assert min(off) <= 3 * target.px


def test_the_scorer_is_gs_measure_on_polygons() -> None:
    png, _ = _target(TRIANGLE)
    target = read_target(png)
    scorer = fs.Scorer(target)
    own = folded_silhouette(replay(TRIANGLE)[-1].geometry)
    nodes = [
        fs.Node(g, (), float(g.area))
        for g in [
            own,
            shapely.affinity.translate(own, 0.13, -0.21),  # moved
            shapely.affinity.scale(own, xfact=-1, origin=(0.5, 0.5)),  # turned over
            shapely.affinity.rotate(own, 90, origin=(0.2, 0.3)),  # turned a quarter
            shapely.box(0, 0, 1, 1),
            shapely.box(1.52, 0.0, 1.6, 0.5),  # in the picture's margin, outside GS's view
        ]
    ]
    scorer.score_all(nodes)
    # the target's own outline scores 1 wherever and however it lies, up to the picture's
    # rounding; in place, it also scores so without aligning
    assert [n.score for n in nodes[:4]] == pytest.approx([1.0] * 4, abs=0.03)
    assert nodes[0].placed == pytest.approx(1.0, abs=0.03) and nodes[1].placed < 0.5
    assert nodes[4].score == pytest.approx(target.area / 1.0, abs=0.02)  # the target inside the sheet
    assert nodes[5].score == 0.0
    assert all(scorer.distance_px(n) <= 2.5 for n in nodes[:4]) and scorer.distance_px(nodes[4]) > 20


def test_the_library_holds_each_outline_once_per_place_up_to_the_sheets_symmetries() -> None:
    levels = fs.library(2)
    assert [len(level) for level in levels[:2]] == [1, 2]  # the sheet; a half and a triangle
    keys = [ol.sheet_place_key(n.outline) for level in levels for n in level]
    assert len(keys) == len(set(keys))
    # the quarter square in a corner is there, made by the folds stored beside it
    quarter = ol.sheet_place_key(shapely.box(0.5, 0, 1, 0.5))
    node = next(n for n in levels[2] if ol.sheet_place_key(n.outline) == quarter)
    made = shapely.box(0, 0, 1, 1)
    for a, b in node.folds:
        made = ol.fold_outline(made, np.asarray(a), np.asarray(b))
    assert made.equals(node.outline)


def test_a_plan_that_makes_a_mirror_image_is_replayed_in_place() -> None:
    png, _ = _target(QUARTER)
    target = read_target(png)
    scorer = fs.Scorer(target)
    # the quarter square made in the opposite corner (a half turn of the sheet)
    folds = (((0.5, 1.0), (0.5, 0.0)), ((0.5, 0.5), (0.0, 0.5)))
    made = shapely.box(0, 0, 1, 1)
    for a, b in folds:
        made = ol.fold_outline(made, np.asarray(a), np.asarray(b))
    node = fs.Node(made, folds, float(made.area))
    scorer.score_all([node])
    placed = fs.in_place(scorer, node)
    assert placed is not None
    again = shapely.box(0, 0, 1, 1)
    for a, b in placed:
        again = ol.fold_outline(again, np.asarray(a), np.asarray(b))
    assert _px(again, target.outline, target.px) <= 2.5 and again.equals(shapely.box(0.5, 0, 1, 0.5))
    # an outline a symmetry of the sheet does not lay onto the target has no such replay
    moved = fs.Node(shapely.affinity.translate(made, 0.1, 0.0), folds, float(made.area))
    scorer.score_all([moved])
    assert fs.in_place(scorer, moved) is None


@pytest.mark.parametrize("seq", [QUARTER, TRIANGLE, CUPBOARD, CORNER], ids=["quarter", "triangle", "cupboard", "corner"])
def test_the_agent_folds_a_hand_made_target_exactly(seq: list[SimpleFold]) -> None:
    png, mask = _target(seq)
    episode = _play(png, _agent())
    assert gs(silhouette(episode.final, SIZE), mask) == 1.0
    assert episode.steps <= 4 and all(t.valid for t in episode.turns)
    assert episode.stopped  # it stops once the target is reached, before the step limit


def test_one_agent_plays_one_target_after_another() -> None:
    # one adapter plays every episode of a cell: a plan is the plan of its own target
    agent = _agent()
    for seq in (TRIANGLE, QUARTER, TRIANGLE):
        png, mask = _target(seq)
        assert gs(silhouette(_play(png, agent).final, SIZE), mask) == 1.0


def test_the_agent_stops_at_once_when_no_fold_helps() -> None:
    episode = _play(render_folded(square_sheet(), SIZE), _agent())
    assert [t.reason for t in episode.turns] == ["stop"]


def test_episodes_are_deterministic_and_never_read_the_item(tmp_path: Path) -> None:
    from shredfold.origami_bench.designs import builtin_cached
    from shredfold.origami_bench.targets import TARGET_STAGE, solve_target

    png, _ = _target(TRIANGLE)
    plain = _play(png, _agent())
    # a store holding another design under the request's item: an agent that read the
    # item (as the oracle does) would fold that design instead
    store = Store(tmp_path / "store")
    decoy = next(d for d in builtin_cached() if d.id.endswith("house"))
    with store.writing(TARGET_STAGE, DECOY) as tmp:
        solve_target(decoy, SIZE, tmp)
    again = _play(png, _agent(store), item=DECOY)
    assert [t.answer for t in again.turns] == [t.answer for t in plain.turns]
    assert [t.state_hash for t in again.turns] == [t.state_hash for t in plain.turns]


@pytest.mark.slow
def test_the_agent_folds_a_five_fold_procedural_target_exactly() -> None:
    # five random folds (corner-pair lines and bisectors, as procedural designs make them):
    # past the library's four, the last fold comes from the target's supported edges
    seq = [
        SimpleFold((1.0, 0.5), (0.0, 0.5), "V"),
        SimpleFold((1.0, 0.5), (0.0, 1.0), "M"),
        SimpleFold((1.0, 0.75), (0.5, 0.75), "M"),
        SimpleFold((-0.1, 1.55), (0.2, 1.15), "V"),
        SimpleFold((0.2925, 0.485), (-0.1375, 0.35), "M"),
    ]
    png, mask = _target(seq)
    episode = _play(png, _agent(), step_limit=5)
    assert gs(silhouette(episode.final, SIZE), mask) == 1.0 and episode.steps == 5


def test_turns_left_reads_the_prompt() -> None:
    assert fs.turns_left("…\nTurn 2 of at most 5.\n…") == 4
    assert fs.turns_left("no turn line") == 1
