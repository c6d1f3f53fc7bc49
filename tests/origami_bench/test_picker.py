"""The image-only MCQ picker: it reads the five pictures and nothing else."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shredfold.calls import Message, ModelCallError, Request
from shredfold.models.builtin.origami_agents import OrigamiSearch
from shredfold.origami import FoldState, fold, square_sheet
from shredfold.origami_bench.env import render_folded
from shredfold.origami_bench.picker import choose, decode, fold_fit
from shredfold.prompts.origami import MCQ_TASK, mcq_request, mcq_template
from shredfold.spec import ModelConfig

SIZE = 256


def _after(*folds: tuple[tuple[float, float], tuple[float, float], str]) -> FoldState:
    state = square_sheet()
    for start, end, assignment in folds:
        state = fold(state, start, end, assignment)
        assert isinstance(state, FoldState), state
    return state


def _png(state: FoldState) -> bytes:
    return render_folded(state, SIZE)


BOOK_V = ((0.5, 0.0), (0.5, 1.0), "V")
BOOK_M = ((0.5, 0.0), (0.5, 1.0), "M")
DIAGONAL = ((0.0, 0.0), (1.0, 1.0), "V")
CUPBOARD = ((0.25, 0.0), (0.25, 1.0), "V"), ((0.75, 1.0), (0.75, 0.0), "V")


def test_a_fold_is_recovered_from_the_pictures_with_its_side() -> None:
    square = decode(_png(square_sheet()))
    valley, mountain = decode(_png(_after(DIAGONAL))), decode(_png(_after(((0, 0), (1, 1), "M"))))
    fv, fm = fold_fit(square, valley), fold_fit(square, mountain)
    assert fv.score > 0.95 and fm.score > 0.95
    assert fv.valley and not fm.valley
    # the line is the diagonal: in pixels (y down) its normal is along (1, 1) / sqrt 2
    assert abs(abs(fv.normal @ np.array([1, 1]) / np.sqrt(2)) - 1) < 0.02
    # two folds, or none, are not one fold of the square
    assert fold_fit(square, decode(_png(_after(BOOK_V, ((0.5, 0.5), (1.0, 0.5), "V"))))).score < 0.85
    assert fold_fit(square, square).score == 0.0


def test_the_one_option_that_is_one_fold_away_is_chosen() -> None:
    ref = _after(BOOK_V)
    answer = _after(BOOK_V, ((0.5, 0.5), (1.0, 0.5), "V"))  # in half again
    earlier = square_sheet()  # unfolding is no fold
    later = _after(BOOK_V, ((0.5, 0.5), (1.0, 0.5), "V"), ((0.5, 0.0), (1.0, 0.5), "V"))
    unrelated = _after(DIAGONAL)
    pictures = [_png(ref), _png(earlier), _png(later), _png(answer), _png(unrelated)]
    got = choose(pictures)
    assert got.index == 2 and got.tied == (2,) and got.reason == "the only option one fold away"


def test_among_several_folds_of_the_reference_a_natural_valley_is_preferred() -> None:
    # from the blank sheet, folds along the middle (V and M) and along a tilted, shifted line
    # are all one fold away; the prompt does not say which fold was made
    tilted = ((0.42, 0.0), (0.62, 1.0), "V")
    options = [_after(tilted), _after(BOOK_M), _after(BOOK_V), _after(((0.3, 0.0), (0.95, 1.0), "V"))]
    got = choose([_png(square_sheet()), *map(_png, options)])
    assert set(got.tied) >= {0, 1, 2}
    assert got.index == 2  # the middle line beats the tilted ones, the valley the mountain


def test_origami_search_answers_from_the_request_alone() -> None:
    ref = _after(BOOK_V)
    answer = _after(BOOK_V, ((0.5, 0.5), (1.0, 0.5), "V"))
    options = [square_sheet(), _after(DIAGONAL), answer, _after(*CUPBOARD)]
    request = mcq_request(_png(ref), [_png(o) for o in options], item="not-a-stored-item")
    agent = OrigamiSearch(ModelConfig(id="origami-search", adapter="origami-search"), None)
    assert json.loads(agent.complete(request).text) == {"answer": "C"}


def test_a_request_without_five_sane_pictures_is_refused_with_its_cause() -> None:
    agent = OrigamiSearch(ModelConfig(id="origami-search", adapter="origami-search"), None)
    png = _png(square_sheet())
    for images, cause in [
        ([png] * 3, "5 pictures"),
        ([png] * 4 + [b"\x89PNG not really"], "not a readable image"),
        ([png] * 4 + [render_folded(square_sheet(), 64)], "not all of one size"),
    ]:
        request = Request(template=mcq_template(), messages=(Message(role="user", text=MCQ_TASK, images=tuple(images)),))
        with pytest.raises(ModelCallError, match=cause):
            agent.complete(request)
