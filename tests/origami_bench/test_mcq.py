"""Multiple-choice items a model can answer from its pictures: the gate on near-identical
options, the replacement of the distractors it turns away, and dropped items."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from shredfold.origami import fold
from shredfold.origami_bench.designs import builtin_designs
from shredfold.origami_bench.env import render_folded
from shredfold.origami_bench.items import McqSpec
from shredfold.origami_bench.mcq import (
    MIN_DIFFERENT_SHARE,
    McqDropped,
    StateCache,
    build_mcq,
    different_share,
    distinct,
    picture,
)
from shredfold.origami_bench.procedural import replay
from shredfold.store import content_key

SIZE = 256
BOOK = {"start": [0.5, 0.0], "end": [0.5, 1.0], "assignment": "V"}
CORNER = {"start": [0.5, 0.75], "end": [0.75, 1.0], "assignment": "V"}  # the house's roof


def _design(sequence: list[dict], name: str = "test/house"):
    base = next(d for d in builtin_designs() if d.id == "builtin/house")
    key = content_key("test_design", 1, {"sequence": sequence})
    return base.model_copy(update={"id": name, "key": key, "sequence": tuple(sequence), "tier": "easy"})


def _spec(design, k: int, answer: int = 0) -> McqSpec:
    key = content_key("test_mcq", 1, {"k": k, "answer": answer}, [design.key])
    return McqSpec(key=key, variant="mcq_causal", index=0, design=design, k=k, answer=answer, tier="easy")


def test_the_gate_tells_a_flap_in_front_from_one_behind_only_by_its_outline_and_rejects_it() -> None:
    # a book fold shows the back on both outer layers: the corner folded in front or behind
    # shows the same colour, and the pictures differ only by the flap's two edges
    book = replay(_design([BOOK]).steps())[-1]
    valley, mountain = (fold(book, (0.5, 0.75), (0.75, 1.0), a) for a in "VM")
    v, m, ref = (picture(render_folded(s, SIZE)) for s in (valley, mountain, book))
    assert 0 < different_share(v, m) < MIN_DIFFERENT_SHARE
    assert not distinct(v, m) and not distinct(v, v)
    assert distinct(v, ref) and distinct(m, ref)  # the corner is gone from the outline


def test_the_gate_counts_clear_differences_only() -> None:
    a = np.full((100, 100, 3), 255, np.int16)
    b = a.copy()
    b[:10, :10] = 250  # a faint tint over 1%: not a difference a model can rely on
    assert different_share(a, b) == 0.0
    b[:4, :10] = 0  # 0.4% clearly different: still too few
    assert different_share(a, b) == pytest.approx(0.004) and not distinct(a, b)
    b[:6, :10] = 0
    assert distinct(a, b)


def test_an_other_assignment_distractor_that_looks_like_the_answer_is_replaced() -> None:
    design = _design([BOOK, CORNER])
    cache = StateCache()
    item = build_mcq(_spec(design, k=1, answer=2), [design, *builtin_designs()], SIZE, cache)
    assert item.kinds[2] == "answer" and item.answer == "C"
    assert "other-assignment" in item.rejected and "other-assignment" not in item.kinds
    pictures = [picture(p) for p in (item.reference, *item.options)]
    for a, b in itertools.combinations(pictures, 2):
        assert different_share(a, b) >= MIN_DIFFERENT_SHARE


def test_an_item_whose_fold_barely_shows_is_dropped() -> None:
    tiny = {"start": [0.5, 0.97], "end": [0.53, 1.0], "assignment": "V"}  # a corner of ~3 pixels
    design = _design([BOOK, tiny], name="test/tiny")
    with pytest.raises(McqDropped, match="differs from the reference"):
        build_mcq(_spec(design, k=1), [design, *builtin_designs()], SIZE, StateCache())
