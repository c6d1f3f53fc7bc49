"""GS alignment, designs and their tiers, multiple-choice items."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np

from shredfold.metrics.shape import aligned_iou, iou
from shredfold.origami_bench.design import builtin_folder, replay, tier_of
from shredfold.origami_bench.designs import builtin_designs
from shredfold.origami_bench.mcq import StateCache, build_mcq, plan_mcq
from shredfold.origami_bench.procedural import random_sequence
from shredfold.spec import TierThresholds


def test_gs_ignores_the_squares_symmetries_and_translation() -> None:
    a = np.zeros((64, 64), bool)
    a[10:20, 5:40] = True  # a bar
    moved = np.rot90(np.roll(np.roll(a, 17, axis=0), 9, axis=1))
    assert iou(a, moved) < 0.2
    assert aligned_iou(moved, a) == 1.0
    b = np.zeros_like(a)
    b[30:40, 30:40] = True
    assert 0 < aligned_iou(b, a) < 0.5
    assert aligned_iou(np.zeros_like(a), a) == 0.0


def test_builtin_designs_have_categories_tiers_and_sequences() -> None:
    designs = builtin_designs()
    assert len(designs) >= 12
    assert {d.category for d in designs} == {"geometry"}
    assert sum(d.sequence is not None for d in designs) >= 10
    t = TierThresholds()
    assert tier_of(4, 1, t) == "easy" and tier_of(12, 1, t) == "medium" and tier_of(4, 30, t) == "hard"


def test_the_builtin_files_are_what_their_sources_write(tmp_path) -> None:
    # author_builtin (run by hand) goes pattern -> FOLD frame -> FOLD object -> file; the
    # shipped files must read back to the same patterns with the same metadata in the same
    # order (ice-cream-cone's last bits differ since the engine's affine maps changed: a
    # re-authored file would get a new key, so the shipped one stays)
    from shredfold.origami import read_pattern
    from shredfold.origami_bench.crease_order import same_pattern
    from shredfold.origami_bench.designs import author_builtin

    written = author_builtin(tmp_path)
    shipped = {p.name: p for p in builtin_folder().glob("*.fold")}
    assert sorted(p.name for p in written) == sorted(shipped)
    for path in written:
        ours, theirs = json.loads(path.read_text()), json.loads(shipped[path.name].read_text())
        assert list(ours) == list(theirs), path.name
        assert {k: v for k, v in ours.items() if k != "vertices_coords"} == {
            k: v for k, v in theirs.items() if k != "vertices_coords"
        }, path.name
        assert same_pattern(read_pattern(path.read_text()), read_pattern(shipped[path.name].read_text())), path.name
    identical = [p.name for p in written if p.read_bytes() == shipped[p.name].read_bytes()]
    assert len(identical) >= len(written) - 1


def test_procedural_sequences_are_seeded_and_replayable() -> None:
    a = random_sequence(np.random.default_rng(3), 3)
    b = random_sequence(np.random.default_rng(3), 3)
    assert a == b and len(a) == 3
    assert len(replay(a)) == 4


def test_mcq_items_have_balanced_answers_and_one_right_option() -> None:
    designs = [d.model_copy(update={"tier": "easy"}) for d in builtin_designs()]
    specs = plan_mcq(designs, "mcq_causal", 12, seed=0, size=64)
    assert Counter(s.answer for s in specs) == {0: 3, 1: 3, 2: 3, 3: 3}
    cache = StateCache()
    for s in specs[:4]:
        item = build_mcq(s, designs, 64, cache)
        assert item.kinds.count("answer") == 1 and item.kinds[s.answer] == "answer"
        assert len(set(item.options)) == 4 and item.reference not in item.options


def test_procedural_designs_are_distinct_items_with_distinct_content() -> None:
    from shredfold.origami_bench.designs import procedural_designs
    from shredfold.spec import DesignSources

    designs = procedural_designs(DesignSources(builtin=False, procedural=4, procedural_folds=(2, 3)), seed=5)
    assert len({d.key for d in designs}) == 4
    assert len({json.dumps(d.sequence) for d in designs}) == 4  # not one design four times
    patterns = [d.pattern() for d in designs]
    assert len({(p.vertices.round(9).tobytes(), "".join(p.assignments)) for p in patterns}) == 4
    again = procedural_designs(DesignSources(builtin=False, procedural=4, procedural_folds=(2, 3)), seed=5)
    assert [d.key for d in again] == [d.key for d in designs]
    other = procedural_designs(DesignSources(builtin=False, procedural=4, procedural_folds=(2, 3)), seed=6)
    assert {d.key for d in other}.isdisjoint(d.key for d in designs)


def test_mcq_items_draw_their_steps_per_item() -> None:
    from shredfold.origami_bench.designs import procedural_designs
    from shredfold.origami_bench.mcq import plan_mcq
    from shredfold.spec import DesignSources

    # one design with a long sequence: the items differ only by the step each one draws
    (design,) = procedural_designs(DesignSources(builtin=False, procedural=1, procedural_folds=(6, 6)), seed=1)
    design = design.model_copy(update={"tier": "easy"})  # the catalogue gives tiers
    specs = plan_mcq([design], "mcq_causal", 8, seed=1, size=64)
    assert len({s.key for s in specs}) == 8
    assert len({s.k for s in specs}) >= 3  # steps drawn per item, not one step for all
