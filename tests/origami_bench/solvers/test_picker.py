"""The MCQ picker: it reads the five pictures and the step the prompt names, nothing else."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shredfold.calls import Message, ModelCallError, Request
from shredfold.models.builtin.origami_agents import OrigamiSearch
from shredfold.origami import FoldState, fold, square_sheet
from shredfold.origami_bench.env import render_folded
from shredfold.origami_bench.prompts import MCQ_TASK, mcq_request, mcq_step, mcq_template
from shredfold.origami_bench.solvers.picker import choose, decode, fold_fit, predict_fold
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


def _named(start: tuple[float, float], end: tuple[float, float], assignment: str) -> dict:
    return {"kind": "fold", "start": list(start), "end": list(end), "assignment": assignment}


# the cupboard's first door, then the right quarter folded in front (its back shows over the
# cream) or behind (hidden under the sheet: the cream stays)
DOOR = CUPBOARD[0]
RIGHT_V = ((0.75, 1.0), (0.75, 0.0), "V")
RIGHT_M = ((0.75, 1.0), (0.75, 0.0), "M")
NEAR_V = ((0.7, 1.0), (0.7, 0.0), "V")


def _door_item() -> list[bytes]:
    options = [_after(DOOR, RIGHT_M), _after(DOOR, NEAR_V), _after(DOOR, RIGHT_V), _after(DOOR, RIGHT_V, BOOK_V)]
    return [_png(_after(DOOR)), *map(_png, options)]


@pytest.mark.parametrize(("fold", "want"), [(RIGHT_V, 2), (RIGHT_M, 0), (NEAR_V, 1)])
def test_a_named_fold_picks_its_result_over_the_other_assignment_and_a_nearby_line(fold: tuple, want: int) -> None:
    got = choose(_door_item(), _named(*fold))
    assert got.index == want and got.reason == "the closest to the named fold"
    # the prediction is close to the real result, and the others are clearly further
    assert got.misses[want] < 0.02
    assert all(m > got.misses[want] + 0.005 for i, m in enumerate(got.misses) if i != want)


def test_the_prediction_puts_a_valley_in_front_and_a_mountain_behind() -> None:
    ref = decode(_png(_after(DOOR)))
    valley, mountain = (predict_fold(ref, *f[:2], f[2]) for f in (RIGHT_V, RIGHT_M))
    strip = (slice(100, 150), slice(136, 146))  # x ~ 0.57..0.65 (115.2 pixels a unit), mid height
    assert (valley.rgb[strip] == (120, 160, 210)).all(axis=-1).mean() > 0.9  # the flap's back
    assert (mountain.rgb[strip] == (250, 235, 200)).all(axis=-1).mean() > 0.9  # the sheet's front
    assert (valley.mask == mountain.mask).all() and not valley.mask[:, 160:].any()  # nothing right of x = 0.75


def test_a_named_fold_overrides_the_image_only_preferences() -> None:
    # from the blank sheet every option is one fold away; without a step the picker takes the
    # natural valley (2), with one it takes the named fold
    tilted = ((0.42, 0.0), (0.62, 1.0), "V")
    options = [_after(tilted), _after(BOOK_M), _after(BOOK_V), _after(((0.3, 0.0), (0.95, 1.0), "V"))]
    pictures = [_png(square_sheet()), *map(_png, options)]
    assert choose(pictures).index == 2
    assert choose(pictures, _named(*tilted)).index == 0
    assert choose(pictures, _named(*BOOK_M)).index == 1


def test_origami_search_reads_the_named_step_from_the_prompt() -> None:
    agent = OrigamiSearch(ModelConfig(id="origami-search", adapter="origami-search"), None)
    ref, *options = _door_item()
    for named, letter in ((RIGHT_V, "C"), (RIGHT_M, "A")):
        request = mcq_request(ref, options, item=None, step=_named(*named))
        assert mcq_step(request.text) == _named(*named)
        assert json.loads(agent.complete(request).text) == {"answer": letter}


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


def test_a_named_fold_line_of_two_equal_points_is_refused_with_its_cause() -> None:
    agent = OrigamiSearch(ModelConfig(id="origami-search", adapter="origami-search"), None)
    ref, *options = _door_item()
    request = mcq_request(ref, options, item=None, step=_named((0.5, 0.5), (0.5, 0.5), "V"))
    with pytest.raises(ModelCallError, match="two equal points"):
        agent.complete(request)
