"""Simple-fold sequences for designs that have none: what the finder makes of a design, the
results shipped for Flat-Folder's pinned designs (a sample recomputed), and the one-step
items they give, classified by the design's tier and category."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import shapely

from shredfold.origami import folded_silhouette
from shredfold.origami_bench import simple_folds as sf
from shredfold.origami_bench.design import Design
from shredfold.origami_bench.designs import builtin_designs, flat_folder_design
from shredfold.origami_bench.env import replay_actions
from shredfold.origami_bench.flat_folder import manifest
from shredfold.origami_bench.mcq import StateCache, build_mcq, plan_mcq
from shredfold.origami_bench.solvers.fold_search import Node, Scorer
from shredfold.origami_bench.target_picture import target_of_outline
from shredfold.store import sha256_bytes

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "flat-folder" / "instagram"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared Flat-Folder designs not found at {SHARED}")


def _data() -> dict:
    return json.loads(sf._text())


def _shared(name: str) -> Design:
    data = (SHARED / name).read_bytes()
    match = manifest().identify(data)
    assert match is not None, name
    return flat_folder_design(match, SHARED / name, data)


def _shared_rows(n: int, *, found: bool) -> list[tuple[str, dict]]:
    """``n`` shipped rows spread over the file order whose design (the same bytes: the shared
    folder holds later revisions of a few) is in the shared folder."""
    shas = {sha256_bytes(p.read_bytes()): p.name for p in SHARED.glob("*.fold")}
    rows = sorted((shas[sha], r) for sha, r in _data()["designs"].items() if sha in shas)
    rows = [(name, r) for name, r in rows if (r["found"]["sequence"] is not None) == found]
    step = max(1, len(rows) // n)
    return rows[::step][:n]


def test_the_shipped_data_is_keyed_by_pinned_designs_with_the_finders_parameters() -> None:
    data = _data()
    pinned = {e.sha256 for e in manifest().entries}
    assert set(data["designs"]) == pinned  # every pinned design, keyed by its file's SHA-256
    assert data["searched"] == len(data["designs"]) == data["pinned"] == len(pinned) == 366
    assert data["upstream_commit"] == manifest().commit
    assert data["params"] == sf.finder_params()  # a finder that changed needs the data made again
    assert len({r["design"] for r in data["designs"].values()}) == len(data["designs"])
    # the bar of issue 30: nine designs in ten have steps (simple folds or a crease order)
    with_steps = [r for r in data["designs"].values() if r["found"]["sequence"] or "crease order" in r["found"]["reason"]]
    assert len(with_steps) >= 0.9 * len(data["designs"])
    for r in data["designs"].values():
        f = sf.FoundFolds.model_validate(r["found"])
        assert f.found == (f.reason == "")
        if f.found:
            assert f.score is not None and f.score >= sf.MIN_SCORE and 1 <= len(f.sequence or ()) <= sf.STEPS


@needs_shared
def test_shipped_sequences_fold_with_the_engine_to_the_score_they_claim() -> None:
    for name, row in _shared_rows(6, found=True):
        design = _shared(name)
        assert (design.id, design.tier, design.category) == (row["design"], row["tier"], row["category"])
        state = replay_actions(list(row["found"]["sequence"]), "fold")
        assert state.flat_foldable and len(state.steps) == len(row["found"]["sequence"])
        scorer = Scorer(target_of_outline(sf.design_outline(design)))
        node = Node(folded_silhouette(state.geometry), (), 0.0)
        scorer.score_all([node])
        assert node.score == pytest.approx(row["found"]["score"], abs=2e-3), name


@pytest.mark.slow  # builds the search's outline library (some 30 s of CPU)
@needs_shared
def test_the_finder_gives_the_shipped_result_for_a_sample_of_designs() -> None:
    # recomputed from the design alone: one design with simple folds, one with a crease order
    # (whose items use it), both from the shared folder
    sample = _shared_rows(1, found=True) + [
        (n, r) for n, r in _shared_rows(50, found=False) if "crease order" in r["found"]["reason"]
    ][:1]
    assert len(sample) == 2
    for name, row in sample:
        got = sf.find_simple_folds(_shared(name))
        want = sf.FoundFolds.model_validate(row["found"])
        assert got.reason == want.reason and got.score == want.score, name
        assert (got.sequence is None) == (want.sequence is None)
        if got.sequence is not None:
            assert json.loads(json.dumps(got.sequence)) == json.loads(json.dumps(want.sequence))


def test_a_design_with_a_fold_sequence_keeps_it() -> None:
    house = next(d for d in builtin_designs() if d.id == "builtin/house")
    assert sf.find_simple_folds(house) == sf.FoundFolds(reason="has a fold sequence")
    assert sf.with_simple_folds(house) is house


@needs_shared
def test_a_flat_folder_design_takes_its_shipped_folds_under_a_key_of_its_own() -> None:
    (name, row), = _shared_rows(1, found=True)
    design = _shared(name)
    assert design.sequence is None
    made = sf.with_simple_folds(design)
    assert made.key != design.key  # its states and items are told from the pattern's own
    assert (made.id, made.tier, made.category) == (design.id, design.tier, design.category)
    assert [s.as_action() for s in made.steps() or []] == row["found"]["sequence"]


@needs_shared
def test_one_step_items_come_from_flat_folder_designs_by_their_tier() -> None:
    rows = _shared_rows(3, found=True)
    designs = [_shared(name) for name, _ in rows]
    specs = plan_mcq(designs, "mcq_causal", 3, seed=0, size=128)
    assert {s.design.id for s in specs} == {d.id for d in designs}
    assert all(s.tier == next(d.tier for d in designs if d.id == s.design.id) for s in specs)
    spec = specs[0]
    cache = StateCache()
    item = build_mcq(spec, designs, 128, cache)
    # the answer is the design's simple-fold state after one more fold than the reference
    from shredfold.origami_bench.env import render_folded

    states = cache.prefixes(spec.design)
    assert item.options[item.kinds.index("answer")] == render_folded(states[spec.k + 1], 128)
    assert item.reference == render_folded(states[spec.k], 128)


def test_a_target_known_as_a_polygon_is_the_one_its_picture_shows() -> None:
    from shredfold.origami_bench.env import render_folded
    from shredfold.origami_bench.target_picture import read_target

    state = replay_actions([{"start": [0.0, 0.0], "end": [1.0, 1.0], "assignment": "V"}], "fold")
    outline = folded_silhouette(state.geometry)
    known, read = target_of_outline(outline), read_target(render_folded(state, 256))
    assert known.px == pytest.approx(read.px)
    assert shapely.hausdorff_distance(known.outline.boundary, read.outline.boundary) <= 2 * read.px
    assert known.area == pytest.approx(read.area, rel=0.03)
