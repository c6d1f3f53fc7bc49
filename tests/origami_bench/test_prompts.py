"""OrigamiBench MCQ prompts: the associative wording asks for the option one fold away, the
causal one names the step made, which a built-in agent reads back from the text alone."""

from __future__ import annotations

import pytest

from shredfold.origami_bench.prompts import (
    MCQ_CAUSAL_TASK,
    MCQ_TASK,
    infer_template,
    mcq_request,
    mcq_step,
    mcq_template,
    step_line,
)
from shredfold.serve.templates import infer_template as serve_template

PNG = b"\x89PNG not really"
FOLD = {"kind": "fold", "start": [0.5, 1.0], "end": [0.5, 0.0], "assignment": "M"}
CREASES = {
    "kind": "crease",
    "creases": [
        {"start": [0.0, 0.0], "end": [1.0, 1.0], "assignment": "M"},
        {"start": [0.0, 0.5], "end": [1.0, 0.5], "assignment": "V"},
    ],
}


def _text(step: dict | None) -> str:
    return mcq_request(PNG, [PNG] * 4, item=None, step=step).text


def test_the_associative_prompt_names_no_step() -> None:
    text = _text(None)
    assert MCQ_TASK in text and MCQ_CAUSAL_TASK not in text
    assert "The step:" not in text and mcq_step(text) is None


def test_the_causal_prompt_names_the_fold_and_its_frame() -> None:
    text = _text(FOLD)
    assert MCQ_CAUSAL_TASK in text and MCQ_TASK not in text
    assert "a mountain (M) fold along the directed line from [0.5, 1] to [0.5, 0]" in text
    assert "folded-plane coordinates" in text and "margin of 5%" in text
    assert mcq_step(text) == FOLD


def test_named_crease_lines_are_in_sheet_coordinates_and_read_back() -> None:
    text = _text(CREASES)
    assert "mountain (M) from [0, 0] to [1, 1]; valley (V) from [0, 0.5] to [1, 0.5]" in text
    assert "sheet coordinates" in text
    assert mcq_step(text) == CREASES


def test_an_unassigned_crease_line_is_named_as_such_and_read_back() -> None:
    # Flat-Folder's designs leave some lines unassigned; their crease orders add them so
    step = {"kind": "crease", "creases": [{"start": [0.0, 0.25], "end": [1.0, 0.25], "assignment": "U"}]}
    text = _text(step)
    assert "unassigned (U) from [0, 0.25] to [1, 0.25]" in text
    assert mcq_step(text) == step


def test_coordinates_are_written_to_four_decimals_and_read_back_as_written() -> None:
    step = {"kind": "fold", "start": [-0.0, 1 / 3], "end": [0.123456, -0.25], "assignment": "V"}
    line = step_line(step)
    assert "from [0, 0.3333] to [0.1235, -0.25]" in line
    assert mcq_step(line) == {"kind": "fold", "start": [0.0, 0.3333], "end": [0.1235, -0.25], "assignment": "V"}


@pytest.mark.parametrize("step", [None, FOLD, CREASES])
def test_serve_recognises_both_wordings(step: dict | None) -> None:
    text = _text(step)
    assert infer_template(text) == serve_template(text) == mcq_template() == "origami-mcq/v3"


@pytest.mark.parametrize(
    "text",
    [
        "The step: a valley (V) fold along the directed line from [1.2.3, 0] to [1, 1]",
        "The step: a valley (V) fold along the directed line from [" + "9" * 400 + ", 0] to [1, 1]",
        "The step: a sideways (S) fold along the directed line from [0, 0] to [1, 1]",
        "The step: crease lines added to the pattern: none at all. The right option shows it.",
    ],
)
def test_a_step_line_that_is_not_as_written_names_no_step(text: str) -> None:
    assert mcq_step(text) is None
