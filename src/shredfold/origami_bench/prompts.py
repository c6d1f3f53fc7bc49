"""OrigamiBench prompt templates (versioned) and answer parsing.

Templates: ``origami-mcq/v3`` (one-step multiple choice; the associative variant asks for
the option one fold away, the causal one names the step made) and ``origami-fold/v3`` /
``origami-crease/v3`` (one turn of a full-step episode; the action kind is in the name).
Bump ``VERSION`` when any wording changes: it is part of every response key.

Parsing is tolerant of what surrounds the JSON (code fences, prose, a ``<think>`` block) and
strict about the JSON itself: exactly the documented fields, of the documented types.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from shredfold.calls import Message, Request
from shredfold.limits import MAX_ANSWER_CHARS

# v3: the causal MCQ prompt names the step made; the view note gives the pictures' margin
VERSION = "v3"
LETTERS = "ABCD"

SYSTEM = (
    "You are an expert in origami and in the geometry of folding paper. Answer exactly in "
    "the JSON format asked for."
)

MCQ_TASK = (
    "Image 1 is a reference origami state seen from above. Images 2 to 5 are the options "
    "A, B, C and D. Exactly one option shows the reference after exactly one more simple "
    "fold (every layer folded along one line). Reply with one JSON object "
    '{"answer": "<letter>"} and nothing else.'
)

# The causal variant: the step is named (a line after this wording, :func:`step_line`), so
# exactly one option is right by the prompt; the others are another step of the same design.
MCQ_CAUSAL_TASK = (
    "Image 1 is a reference origami state seen from above. Images 2 to 5 are the options "
    "A, B, C and D. Exactly one option shows the reference after the step named below. "
    'Reply with one JSON object {"answer": "<letter>"} and nothing else.'
)

_VIEW_NOTE = (
    "Folded-state pictures show the square region from (-0.5, -0.5) to (1.5, 1.5), y up, "
    "inside a white margin of 5% of the picture's side; the "
    "unfolded sheet is the unit square from (0, 0) to (1, 1). The front of the paper is cream, "
    "the back is blue; the paper is opaque, so only the side of the top layer shows, with "
    "black lines along the edges of the layers in view. Crease pattern: mountain red "
    "dash-dot, valley blue dashed."
)

FULLSTEP_TASK = {
    "fold": (
        "Fold a square sheet into the target shape. Image 1 is the target folded state, "
        "image 2 the current folded state, image 3 the current crease pattern. Each turn you "
        "make one simple fold: every layer on the left of the directed line start -> end "
        "turns over onto the right side, in front for a valley (V), behind for a mountain (M). "
        "Points are folded-plane coordinates [x, y] or vertex ids (listed below). Reply with "
        'one JSON object {"start": [x, y], "end": [x, y], "assignment": "M" or "V"}, or '
        '{"stop": true} when the model matches the target.'
    ),
    "crease": (
        "Fold a square sheet into the target shape. Image 1 is the target folded state, "
        "image 2 the current folded state, image 3 the current crease pattern. Each turn you "
        "add one crease to the crease pattern between two points of the unfolded sheet, "
        "mountain (M) or valley (V); the folded state is shown whenever the pattern folds "
        "flat. Points are sheet coordinates [x, y] or vertex ids (listed below). Reply with "
        'one JSON object {"start": [x, y], "end": [x, y], "assignment": "M" or "V"}, or '
        '{"stop": true} when the model matches the target.'
    ),
}

ActionKind = Literal["fold", "crease"]

# A turn lists at most this many vertices (the rest as "…"): a long list is noise to a model.
MAX_VERTICES_SHOWN = 200


def mcq_template() -> str:
    return f"origami-mcq/{VERSION}"


def fullstep_template(kind: ActionKind) -> str:
    return f"origami-{kind}/{VERSION}"


def task_of_template(template: str) -> str:
    """``'origami-mcq/v1'`` → ``'mcq'``; ``'origami-fold/v1'`` → ``'fold'``."""
    m = re.fullmatch(r"origami-(mcq|fold|crease)/v\d+", template)
    if not m:
        raise ValueError(f"not an OrigamiBench template: {template!r}")
    return m.group(1)


def infer_template(prompt: str) -> str:
    """The template whose task wording a prompt contains (for ``shredfold serve``)."""
    if MCQ_TASK in prompt or MCQ_CAUSAL_TASK in prompt:
        return mcq_template()
    for kind, task in FULLSTEP_TASK.items():
        if task in prompt:
            return fullstep_template(kind)  # type: ignore[arg-type]
    raise ValueError("prompt matches no OrigamiBench template of version " + VERSION)


# ---------------------------------------------------------------- requests


# "U": a crease line a FOLD file leaves unassigned (Flat-Folder's designs have some, and
# their crease orders add them as they are)
_ASSIGNMENT = {"V": "valley", "M": "mountain", "U": "unassigned"}


def _num(v: float) -> str:
    """A coordinate as the prompt writes it: 4 decimals, trailing zeros dropped."""
    s = f"{float(v) + 0.0:.4f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def _pt(p: Any) -> str:
    return f"[{_num(p[0])}, {_num(p[1])}]"


def _line(c: Mapping[str, Any]) -> str:
    a = str(c["assignment"])
    return f"{_ASSIGNMENT[a]} ({a}) from {_pt(c['start'])} to {_pt(c['end'])}"


def step_line(step: Mapping[str, Any]) -> str:
    """The sentence naming a causal item's step: a simple fold (``{"kind": "fold", "start",
    "end", "assignment"}``, folded-plane coordinates) or crease lines added to the pattern
    (``{"kind": "crease", "creases": [{"start", "end", "assignment"}, …]}``, sheet
    coordinates). :func:`mcq_step` reads it back."""
    if step["kind"] == "fold":
        a = str(step["assignment"])
        return (
            f"The step: a {_ASSIGNMENT[a]} ({a}) fold along the directed line from "
            f"{_pt(step['start'])} to {_pt(step['end'])} (folded-plane coordinates, the "
            "pictures' frame described below; every layer on the left of the line turns over "
            "onto the right side, in front for a valley, behind for a mountain)."
        )
    lines = "; ".join(_line(c) for c in step["creases"])
    return (
        "The step: crease lines added to the reference's crease pattern (sheet coordinates, "
        f"the unfolded unit square): {lines}. The right option shows the folded state of the "
        "pattern with them."
    )


# a coordinate as step_line writes it; bounded, so that no text can make an infinite one
_NUM = r"(-?\d{1,6}(?:\.\d{1,6})?)"
_FOLD_STEP = re.compile(
    r"The step: an? (?:valley|mountain) \(([VM])\) fold along the directed line from "
    rf"\[{_NUM}, {_NUM}\] to \[{_NUM}, {_NUM}\]"
)
_CREASE_STEP = re.compile(r"The step: crease lines added to [^:\n]*: ([^\n]*?)\. The right option")
_CREASE = re.compile(rf"(?:valley|mountain|unassigned) \(([VMU])\) from \[{_NUM}, {_NUM}\] to \[{_NUM}, {_NUM}\]")


def mcq_step(prompt: str) -> dict[str, Any] | None:
    """The step a causal MCQ prompt names (as :func:`step_line` was given it, coordinates
    rounded as written), or None (the associative wording names none). For built-in agents,
    which read only what a model reads."""
    m = _FOLD_STEP.search(prompt)
    if m:
        x0, y0, x1, y1 = (float(v) for v in m.groups()[1:])
        return {"kind": "fold", "start": [x0, y0], "end": [x1, y1], "assignment": m.group(1)}
    m = _CREASE_STEP.search(prompt)
    if m:
        creases = [
            {"start": [float(c[1]), float(c[2])], "end": [float(c[3]), float(c[4])], "assignment": c[0]}
            for c in _CREASE.findall(m.group(1))
        ]
        return {"kind": "crease", "creases": creases} if creases else None
    return None


def mcq_request(
    reference: bytes, options: list[bytes], item: str | None, step: Mapping[str, Any] | None = None
) -> Request:
    """The associative wording without ``step``, the causal one naming it with it."""
    if len(options) != 4:
        raise ValueError("a multiple-choice item has four options")
    text = MCQ_TASK if step is None else MCQ_CAUSAL_TASK + "\n" + step_line(step)
    return Request(
        template=mcq_template(),
        messages=(
            Message(role="system", text=SYSTEM),
            Message(role="user", text=text + "\n" + _VIEW_NOTE, images=(reference, *options)),
        ),
        item=item,
    )


@dataclass(frozen=True)
class HistoryEntry:
    """One earlier turn as the model is told about it."""

    action: dict[str, Any] | None  # the parsed action; None when the answer did not parse
    feedback: str  # "valid" or "rejected (reason): detail"

    def line(self, n: int) -> str:
        shown = json.dumps(self.action, separators=(",", ":")) if self.action is not None else "(invalid answer)"
        return f"{n}. {shown} -> {self.feedback}"


def fullstep_request(
    *,
    kind: ActionKind,
    target: bytes,
    folded: bytes,
    pattern: bytes,
    vertices: list[tuple[float, float]],
    history: list[HistoryEntry],
    step_limit: int,
    item: str | None,
) -> Request:
    lines = [FULLSTEP_TASK[kind], _VIEW_NOTE]
    shown = vertices[:MAX_VERTICES_SHOWN]
    lines.append(
        "Vertices (id: x, y): "
        + "; ".join(f"{i}: {x:.4f}, {y:.4f}" for i, (x, y) in enumerate(shown))
        + (" …" if len(vertices) > len(shown) else "")
    )
    lines.append(f"Turn {len(history) + 1} of at most {step_limit}.")
    if history:
        lines.append("Your earlier turns:")
        lines += [h.line(i + 1) for i, h in enumerate(history)]
        lines.append(f"Feedback on your last action: {history[-1].feedback}")
    return Request(
        template=fullstep_template(kind),
        messages=(
            Message(role="system", text=SYSTEM),
            Message(role="user", text="\n".join(lines), images=(target, folded, pattern)),
        ),
        item=item,
    )


_HISTORY_LINE = re.compile(r"^(\d+)\. (\{.*\}) -> valid$", re.M)


def valid_history(prompt: str) -> list[dict[str, Any]]:
    """The actions of the earlier turns that were accepted, in order (for built-in agents)."""
    return [json.loads(m.group(2)) for m in _HISTORY_LINE.finditer(prompt)]


def turn_number(prompt: str) -> int:
    m = re.search(r"Turn (\d+) of at most (\d+)\.", prompt)
    return int(m.group(1)) if m else 1


# ---------------------------------------------------------------- parsing


class AnswerError(ValueError):
    """A model answer that is not a valid action; ``reason`` is machine-readable."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


# Possessive quantifiers around the info string: "```" followed by a long run of blanks
# must not cost quadratic time (no token after a blank run can take a blank).
_FENCE = re.compile(r"```[ \t]*+[A-Za-z]*+[ \t]*+\n?(.*?)```", re.S)


def _drop_think(text: str) -> str:
    """``text`` without its ``<think>…</think>`` blocks.

    What ``re.sub(r"<think>.*?</think>", "", text, flags=re.S)`` gives, in linear time:
    that pattern rescans the rest of the answer from every unclosed ``<think>``.
    """
    out, pos = [], 0
    while (start := text.find("<think>", pos)) >= 0:
        end = text.find("</think>", start + len("<think>"))
        if end < 0:
            break
        out.append(text[pos:start])
        pos = end + len("</think>")
    out.append(text[pos:])
    return "".join(out)


# Where a JSON object can begin: "{", blanks, then a key or "}". A failed attempt costs
# time proportional to its offset (the error message counts lines from the start), so
# the number of attempts is bounded.
_OBJECT_START = re.compile(r'\{\s*+["}]')
MAX_JSON_TRIES = 1_000


def extract_json(text: str) -> Any:
    """The JSON object in an answer: a fenced block first, else the first ``{…}`` that parses.

    Bounded work on any answer: the first :data:`~shredfold.limits.MAX_ANSWER_CHARS`
    characters are read, at most :data:`MAX_JSON_TRIES` places where an object could begin
    are tried, and an object nested deeper than the interpreter's recursion limit does not
    parse.
    """
    body = _drop_think(text[:MAX_ANSWER_CHARS])
    candidates = [m.group(1) for m in _FENCE.finditer(body)]
    candidates.append(body)
    decoder = json.JSONDecoder()
    tries = 0
    for chunk in candidates:
        for m in _OBJECT_START.finditer(chunk):
            tries += 1
            if tries > MAX_JSON_TRIES:
                raise AnswerError(
                    "not-json", f"no JSON object in the first {MAX_JSON_TRIES} places one could begin"
                )
            try:
                # An index, not a slice: slicing would copy the rest at every attempt.
                obj, _ = decoder.raw_decode(chunk, m.start())
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                return obj
    raise AnswerError("not-json", "no JSON object found in the answer")


def parse_mcq(text: str) -> str:
    obj = extract_json(text)
    if set(obj) != {"answer"}:
        raise AnswerError("fields", f"expected exactly the field 'answer', got {sorted(obj)}")
    ans = obj["answer"]
    if not isinstance(ans, str) or ans.strip().upper() not in LETTERS or len(ans.strip()) != 1:
        raise AnswerError("value", f"answer must be one of A, B, C, D, got {ans!r}")
    return ans.strip().upper()


@dataclass(frozen=True)
class Action:
    start: int | tuple[float, float]
    end: int | tuple[float, float]
    assignment: str

    def as_json(self) -> dict[str, Any]:
        def pt(p: int | tuple[float, float]) -> Any:
            return p if isinstance(p, int) else [p[0], p[1]]

        return {"start": pt(self.start), "end": pt(self.end), "assignment": self.assignment}


@dataclass(frozen=True)
class Stop:
    pass


def _point(v: Any, name: str) -> int | tuple[float, float]:
    if isinstance(v, bool):
        raise AnswerError("value", f"{name} must be a vertex id or [x, y], got {v!r}")
    if isinstance(v, int):
        if v < 0:
            raise AnswerError("value", f"{name}: vertex ids are not negative, got {v}")
        return v
    if (
        isinstance(v, list)
        and len(v) == 2
        and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in v)
        and all(math.isfinite(c) for c in v)
    ):
        return (float(v[0]), float(v[1]))
    raise AnswerError("value", f"{name} must be a vertex id or [x, y] of two finite numbers, got {v!r}")


def parse_action(text: str) -> Action | Stop:
    obj = extract_json(text)
    if "stop" in obj:
        if set(obj) != {"stop"} or obj["stop"] is not True:
            raise AnswerError("fields", 'a stop action is exactly {"stop": true}')
        return Stop()
    want = {"start", "end", "assignment"}
    if set(obj) != want:
        extra, missing = sorted(set(obj) - want), sorted(want - set(obj))
        raise AnswerError("fields", f"unknown fields {extra}, missing {missing}")
    if obj["assignment"] not in ("M", "V"):
        raise AnswerError("value", f"assignment must be 'M' or 'V', got {obj['assignment']!r}")
    return Action(_point(obj["start"], "start"), _point(obj["end"], "end"), obj["assignment"])
