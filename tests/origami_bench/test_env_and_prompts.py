"""The environment's step and the answer parser: bad output is feedback, never a crash."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from shredfold.origami import fold, folded_silhouette, square_sheet
from shredfold.origami_bench.env import (
    EnvConfig,
    apply,
    replay_actions,
    run_episode,
    state_hash,
    step,
)
from shredfold.origami_bench.prompts import (
    Action,
    AnswerError,
    Stop,
    parse_action,
    parse_mcq,
    valid_history,
)

BOOK = '{"start": [0.5, 0], "end": [0.5, 1], "assignment": "V"}'


def test_parser_tolerates_fences_and_prose_but_not_extra_fields() -> None:
    fenced = f"Sure! Here is my fold:\n```json\n{BOOK}\n```\nHope that helps."
    assert parse_action(fenced) == Action((0.5, 0.0), (0.5, 1.0), "V")
    assert parse_action("<think>{maybe}</think> I stop. {\"stop\": true}") == Stop()
    assert parse_action('{"start": 3, "end": 0, "assignment": "M"}') == Action(3, 0, "M")
    for bad, reason in [
        ("I would fold it in half.", "not-json"),
        ('{"start": [0.5, 0], "end": [0.5, 1], "assignment": "V", "why": "x"}', "fields"),
        ('{"start": [0.5, 0], "end": [0.5, 1], "assignment": "X"}', "value"),
        ('{"start": [0.5], "end": [0.5, 1], "assignment": "V"}', "value"),
        ('{"start": true, "end": [0.5, 1], "assignment": "V"}', "value"),
        ('{"stop": "yes"}', "fields"),
    ]:
        with pytest.raises(AnswerError) as err:
            parse_action(bad)
        assert err.value.reason == reason


def test_mcq_parser() -> None:
    assert parse_mcq('The answer is ```json\n{"answer": "c"}\n```') == "C"
    with pytest.raises(AnswerError):
        parse_mcq('{"answer": "E"}')
    with pytest.raises(AnswerError):
        parse_mcq('{"answer": "A", "confidence": 0.9}')


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("not json at all", "not-json"),
        ('{"begin": [0, 0], "end": [1, 1], "assignment": "V"}', "fields"),
        ('{"start": [5, 5], "end": [6, 7], "assignment": "V"}', "off-sheet"),
        ('{"start": 99, "end": 0, "assignment": "M"}', "syntax"),
        ('{"start": [0.5, 0.5], "end": [0.5, 0.5], "assignment": "M"}', "syntax"),
    ],
)
def test_bad_actions_are_rejected_with_a_reason_and_leave_the_state(answer: str, reason: str) -> None:
    sheet = square_sheet()
    new, feedback, _ = step(sheet, answer, "fold")
    assert not feedback.valid and feedback.reason == reason
    assert state_hash(new) == state_hash(sheet)
    assert feedback.text().startswith(f"rejected ({reason})")


@pytest.mark.parametrize(("letter", "in_front"), [("V", True), ("M", False)])
def test_a_valid_fold_gives_the_folded_state_it_describes(letter: str, in_front: bool) -> None:
    # The book fold along x = 1/2, directed up: the left half turns over onto the right one,
    # in front of it for a valley and behind it for a mountain. By hand: the folded model
    # is the right half [1/2, 1] x [0, 1] (area 1/2), two layers everywhere (one overlapping
    # face pair), the left half seen from its back.
    sheet = square_sheet()
    answer = BOOK.replace('"V"', f'"{letter}"')
    new, feedback, action = step(sheet, answer, "fold")
    assert feedback.valid and isinstance(action, Action)
    assert state_hash(new) != state_hash(sheet)
    outline = folded_silhouette(new.geometry)
    assert outline.area == pytest.approx(0.5, abs=1e-9)
    assert outline.bounds == pytest.approx((0.5, 0.0, 1.0, 1.0), abs=1e-9)
    creases = new.pattern.assignments != "B"
    assert new.pattern.assignments[creases].tolist() == [letter]
    ends = new.pattern.vertices[new.pattern.edges[creases][0]]
    assert sorted(map(tuple, ends.round(9).tolist())) == [(0.5, 0.0), (0.5, 1.0)]
    assert new.layers.satisfiable and new.layers.states == 1 and new.layers.variables == 1
    centres = [new.pattern.vertices[f].mean(axis=0)[0] for f in new.pattern.faces]
    left = int(np.argmin(centres))
    assert new.geometry.flipped.tolist() == [i == left for i in range(2)]
    (f, g, s), = new.layers.face_orders.tolist()
    # FOLD faceOrders: s = +1 when f lies above g on the side f's normal points to
    f_above = (s == 1) != bool(new.geometry.flipped[f])
    assert (f_above == (f == left)) == in_front


def test_episode_counts_invalid_steps_and_ends_on_stop() -> None:
    answers = iter(["garbage", '{"start": [9, 9], "end": [9, 8], "assignment": "V"}', BOOK, '{"stop": true}'])
    prompts: list[str] = []

    def ask(request):  # type: ignore[no-untyped-def]
        prompts.append(request.text)
        return next(answers), {}

    ep = run_episode(b"png", EnvConfig(step_limit=10, image_size=64), ask, item=None)
    assert ep.stopped and ep.steps == 3 and len(ep.turns) == 4
    assert [t.valid for t in ep.turns] == [False, False, True, True]
    assert [t.effective for t in ep.turns] == [False, False, True, False]
    assert all(t.engine_version and len(t.state_hash) == 64 for t in ep.turns)
    # the history travels in the next prompt; agents read the accepted actions back
    assert "(invalid answer) -> rejected (not-json)" in prompts[1]
    assert valid_history(prompts[3]) == [json.loads(BOOK)]


def test_episode_stops_at_the_step_limit() -> None:
    ep = run_episode(b"png", EnvConfig(step_limit=3, image_size=64), lambda r: ("?", {}), item=None)
    assert not ep.stopped and ep.steps == 3 and all(not t.valid for t in ep.turns)


def test_an_action_applied_again_to_an_equal_state_is_remembered() -> None:
    book = {"start": [0.5, 0], "end": [0.5, 1], "assignment": "V"}
    half = {"start": [0, 0.5], "end": [1, 0.5], "assignment": "M"}
    # an agent and the environment each build the state: equal, not the same object
    ours, theirs = (fold(square_sheet(), (0.5, 0), (0.5, 1), "V") for _ in range(2))
    assert ours is not theirs and state_hash(ours) == state_hash(replay_actions([book], "fold"))
    action = Action((0.0, 0.5), (1.0, 0.5), "M")
    first = apply(ours, action, "fold")
    assert apply(theirs, action, "fold") is first
    assert state_hash(first) == state_hash(replay_actions([book, half], "fold"))
    # anything the outcome reads is in the key: the lattice, the action, its kind
    assert apply(replace(theirs, lattice=4), action, "fold") is not first
    assert apply(theirs, Action((0.0, 0.5), (1.0, 0.5), "V"), "fold") is not first
    assert apply(theirs, action, "crease") is not first
