"""Multiple-choice items a model can answer from its pictures: the gate on near-identical
options, the replacement of the distractors it turns away, and dropped items."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from shredfold.origami import fold
from shredfold.origami_bench.crease_order import OrderBook
from shredfold.origami_bench.design import replay
from shredfold.origami_bench.designs import builtin_designs
from shredfold.origami_bench.env import render_folded
from shredfold.origami_bench.items import McqSpec
from shredfold.origami_bench.mcq import (
    MIN_DIFFERENT_SHARE,
    ONE_FOLD_FIT,
    McqDropped,
    StateCache,
    build_mcq,
    different_share,
    distinct,
    read_mcq,
    write_mcq,
)
from shredfold.origami_bench.solvers.picker import Picture, decode, fold_fit
from shredfold.store import content_key

SIZE = 256
BOOK = {"start": [0.5, 0.0], "end": [0.5, 1.0], "assignment": "V"}
CORNER = {"start": [0.5, 0.75], "end": [0.75, 1.0], "assignment": "V"}  # the house's roof


def _design(sequence: list[dict], name: str = "test/house"):
    base = next(d for d in builtin_designs() if d.id == "builtin/house")
    key = content_key("test_design", 1, {"sequence": sequence})
    return base.model_copy(update={"id": name, "key": key, "sequence": tuple(sequence), "tier": "easy"})


def _spec(design, k: int, answer: int = 0, variant: str = "mcq_causal") -> McqSpec:
    key = content_key("test_mcq", 1, {"k": k, "answer": answer, "variant": variant}, [design.key])
    return McqSpec(key=key, variant=variant, index=0, design=design, k=k, answer=answer, tier="easy")


def test_the_gate_tells_a_flap_in_front_from_one_behind_only_by_its_outline_and_rejects_it() -> None:
    # a book fold shows the back on both outer layers: the corner folded in front or behind
    # shows the same colour, and the pictures differ only by the flap's two edges
    book = replay(_design([BOOK]).steps())[-1]
    valley, mountain = (fold(book, (0.5, 0.75), (0.75, 1.0), a) for a in "VM")
    v, m, ref = (decode(render_folded(s, SIZE)) for s in (valley, mountain, book))
    assert 0 < different_share(v, m) < MIN_DIFFERENT_SHARE
    assert not distinct(v, m) and not distinct(v, v)
    assert distinct(v, ref) and distinct(m, ref)  # the corner is gone from the outline


def test_the_gate_counts_clear_differences_only() -> None:
    white = np.full((100, 100, 3), 255, np.int16)
    b = white.copy()
    b[:10, :10] = 250  # a faint tint over 1%: not a difference a model can rely on

    def pic(rgb: np.ndarray) -> Picture:
        return Picture(rgb, np.any(rgb != 255, axis=2))

    assert different_share(pic(white), pic(b)) == 0.0
    b[:4, :10] = 0  # 0.4% clearly different: still too few
    assert different_share(pic(white), pic(b)) == pytest.approx(0.004) and not distinct(pic(white), pic(b))
    b[:6, :10] = 0
    assert distinct(pic(white), pic(b))


def test_an_other_assignment_distractor_that_looks_like_the_answer_is_replaced() -> None:
    design = _design([BOOK, CORNER])
    cache = StateCache()
    item = build_mcq(_spec(design, k=1, answer=2), [design, *builtin_designs()], SIZE, cache)
    assert item.kinds[2] == "answer" and item.answer == "C"
    assert "other-assignment:close" in item.rejected and "other-assignment" not in item.kinds
    pictures = [decode(p) for p in (item.reference, *item.options)]
    for a, b in itertools.combinations(pictures, 2):
        assert different_share(a, b) >= MIN_DIFFERENT_SHARE


def test_an_item_whose_fold_barely_shows_is_dropped() -> None:
    tiny = {"start": [0.5, 0.97], "end": [0.53, 1.0], "assignment": "V"}  # a corner of ~3 pixels
    design = _design([BOOK, tiny], name="test/tiny")
    with pytest.raises(McqDropped, match="differs from the reference"):
        build_mcq(_spec(design, k=1), [design, *builtin_designs()], SIZE, StateCache())


def test_from_the_blank_sheet_no_other_design_s_first_fold_is_offered() -> None:
    # every one-fold state of any design is one fold of the blank sheet: offered beside the
    # answer, it would be a second right option
    designs = [d.model_copy(update={"tier": "easy"}) for d in builtin_designs()]
    diagonal = next(d for d in designs if d.id == "builtin/diagonal-fold")
    cache = StateCache()
    rejected = []
    for answer in range(4):  # seeded draws: some item meets another design's first fold
        item = build_mcq(_spec(diagonal, k=0, answer=answer, variant="mcq_assoc"), designs, SIZE, cache)
        assert item.kinds.count("unrelated") == 3
        rejected += item.rejected
        ref = decode(item.reference)
        fits = {i: fold_fit(ref, decode(p)).score for i, p in enumerate(item.options)}
        assert fits[item.kinds.index("answer")] >= ONE_FOLD_FIT
        assert all(f < ONE_FOLD_FIT for i, f in fits.items() if item.kinds[i] != "answer")
        if "unrelated:one-fold" in rejected:
            break
    assert "unrelated:one-fold" in rejected


def test_a_causal_item_stores_the_fold_its_prompt_names_and_an_associative_one_none(tmp_path) -> None:
    design = _design([BOOK, CORNER, {"start": [1.0, 0.5], "end": [0.5, 0.5], "assignment": "V"}])
    designs = [design, *builtin_designs()]
    cache = StateCache()
    item = build_mcq(_spec(design, k=1, answer=3), designs, SIZE, cache)
    assert item.step == {"kind": "fold", **CORNER}  # the answer's step, whatever the position
    write_mcq(item, tmp_path)
    assert json.loads((tmp_path / "item.json").read_text())["step"] == item.step
    assert read_mcq(tmp_path) == item
    assoc = build_mcq(_spec(design, k=1, variant="mcq_assoc"), designs, SIZE, cache)
    assert assoc.step is None


def test_a_causal_item_on_a_crease_order_names_the_crease_lines_added() -> None:
    designs = [d.model_copy(update={"tier": "easy"}) for d in builtin_designs()]
    waterbomb = next(d for d in designs if d.id == "builtin/waterbomb-base")
    orders = OrderBook()
    cache = StateCache(orders)
    steps = orders.get(waterbomb).steps
    assert steps is not None and len(steps) == 2
    item = build_mcq(_spec(waterbomb, k=1), designs, SIZE, cache)
    assert item.step == {"kind": "crease", "creases": [dict(a) for a in steps[1]]}
    assert {"earlier", "other-assignment"} & set(item.kinds)
    # the first line swapped from the bare sheet is the answer turned over: never offered
    first = build_mcq(_spec(waterbomb, k=0), designs, SIZE, cache)
    assert first.step == {"kind": "crease", "creases": [dict(a) for a in steps[0]]}
    assert "other-assignment" not in first.kinds and first.kinds.count("answer") == 1
