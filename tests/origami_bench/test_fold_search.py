"""The full-step search: outline folding, the scorer, and whole episodes that reach the target."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import shapely

from shredfold.metrics.shape import aligned_iou
from shredfold.models.builtin.origami_agents import OrigamiSearch
from shredfold.origami import folded_silhouette, square_sheet
from shredfold.origami_bench import fold_search as fs
from shredfold.origami_bench.design import SimpleFold
from shredfold.origami_bench.env import EnvConfig, gs, render_folded, run_episode, silhouette
from shredfold.origami_bench.procedural import replay
from shredfold.spec import ModelConfig
from shredfold.store import Store

SIZE = 256
DECOY = "d" * 64  # a store key
# the square folded in half, then in half again: a quarter-size square
QUARTER = [SimpleFold((0.5, 0.0), (0.5, 1.0), "V"), SimpleFold((0.5, 0.5), (1.0, 0.5), "M")]
# the square folded along its diagonal, then the triangle in half: a quarter-size triangle
TRIANGLE = [SimpleFold((0.0, 0.0), (1.0, 1.0), "V"), SimpleFold((1.0, 0.0), (0.5, 0.5), "V")]


def _agent(store: Store | None = None) -> OrigamiSearch:
    return OrigamiSearch(ModelConfig(id="origami-search", adapter="origami-search"), store)


def _target(seq: list[SimpleFold]) -> tuple[bytes, np.ndarray]:
    state = replay(seq)[-1]
    return render_folded(state, SIZE), silhouette(state, SIZE)


def _play(target_png: bytes, agent: OrigamiSearch, step_limit: int = 4, item: str | None = None):  # noqa: ANN202
    env = EnvConfig(kind="fold", step_limit=step_limit, image_size=SIZE)
    return run_episode(target_png, env, lambda r: (agent.complete(r).text, {}), item=item)


def test_folding_an_outline_reflects_the_left_part_onto_the_right() -> None:
    square = shapely.box(0, 0, 1, 1)
    half = fs.fold_outline(square, np.array([0.5, 0.0]), np.array([0.5, 1.0]))
    assert half is not None and half.equals(shapely.box(0.5, 0, 1, 1))
    # the other direction keeps the other half
    assert fs.fold_outline(square, np.array([0.5, 1.0]), np.array([0.5, 0.0])).equals(shapely.box(0, 0, 0.5, 1))
    # a line that misses the paper, or runs along its edge, folds nothing
    assert fs.fold_outline(square, np.array([2.0, 0.0]), np.array([2.0, 1.0])) is None
    assert fs.fold_outline(square, np.array([0.0, 0.0]), np.array([1.0, 0.0])) is None
    # a corner folded to the centre: a pentagon of 7/8 of the sheet
    corner = fs.fold_outline(square, np.array([0.5, 0.0]), np.array([0.0, 0.5]))
    assert corner.area == pytest.approx(0.875)


def test_candidate_lines_include_the_folds_a_person_makes() -> None:
    keys = {fs._line_key(np.array(a), np.array(b)) for a, b in fs.candidate_lines(shapely.box(0, 0, 1, 1))}
    for a, b in [((0, 0), (1, 1)), ((0.5, 0), (0.5, 1)), ((0, 0.5), (1, 0.5)), ((1, 0), (0, 1))]:
        assert fs._line_key(np.array(a, float), np.array(b, float)) in keys
    # a target edge read from pixels near an existing line is that line, not a second one
    noisy = (((0.501, 0.0), (0.501, 1.0)),)
    assert len(fs.candidate_lines(shapely.box(0, 0, 1, 1), noisy)) == len(keys)


def test_the_scorer_is_gs_own_measure() -> None:
    png, _ = _target(TRIANGLE)
    target = fs.target_from_png(png, 24)
    scorer = fs.Scorer(target)
    for outline in [shapely.box(0, 0, 1, 1), shapely.box(0.5, 0, 1, 0.5), shapely.Polygon([(0, 0), (1, 0), (1, 1)])]:
        mask = fs.draw_mask(outline, SIZE, target.margin)
        assert scorer.score(outline) == pytest.approx(aligned_iou(mask, target.mask))
    # the target's own outline scores 1 anywhere, and turned over up to how its edges' pixels round
    own = folded_silhouette(replay(TRIANGLE)[-1].geometry)
    px = 2 / (SIZE * (1 - 2 * target.margin))  # sheet units per pixel
    assert scorer.score(own) == pytest.approx(1.0, abs=2e-3)
    assert scorer.score(shapely.affinity.translate(own, 13 * px, -21 * px)) == pytest.approx(1.0, abs=2e-3)
    assert scorer.score(shapely.affinity.scale(own, xfact=-1, origin=(0.5, 0.5))) == pytest.approx(1.0, abs=0.03)
    # paper in the picture's margin, outside the view GS compares, counts for nothing
    assert scorer.score(shapely.box(1.52, 0.0, 1.6, 0.5)) == 0.0


@pytest.mark.parametrize("seq", [QUARTER, TRIANGLE], ids=["quarter-square", "triangle"])
def test_the_agent_folds_a_hand_made_target_exactly(seq: list[SimpleFold]) -> None:
    png, mask = _target(seq)
    episode = _play(png, _agent())
    assert gs(silhouette(episode.final, SIZE), mask) == 1.0
    assert episode.steps <= 4 and all(t.valid for t in episode.turns)
    assert episode.stopped  # it stops once the target is reached, before the step limit


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


def test_turns_left_reads_the_prompt() -> None:
    assert fs.turns_left("…\nTurn 2 of at most 5.\n…") == 4
    assert fs.turns_left("no turn line") == 1
