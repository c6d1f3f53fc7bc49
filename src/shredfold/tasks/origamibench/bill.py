"""OrigamiBench's part of the bill (``shredfold plan SPEC --cost``): its requests carry
``image_size``² pictures (five per multiple-choice item, three per full-step turn); a typical
answer is a short JSON object; full-step episodes are counted at ``step_limit`` turns each,
an upper bound (an episode may stop earlier), a turn's text growing with its history
(approximated)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache

from shredfold.models.accounting import text_tokens
from shredfold.origami_bench.prompts import HistoryEntry, fullstep_request, mcq_request
from shredfold.spec import OrigamiBenchSpec, ResolvedSpec
from shredfold.store import Store
from shredfold.tasks.base import Cell
from shredfold.tasks.benchmark import Shape

# What a typical OrigamiBench answer looks like (its length is what counts).
MCQ_ANSWER = '{"answer": "A"}'
FOLD_ANSWER = '{"start": [0.5, 0.0], "end": [0.5, 1.0], "assignment": "V"}'
# the step a causal MCQ prompt names, at the longest a coordinate is written (a crease-order
# step naming several lines is longer; most name one)
MCQ_STEP = {"kind": "fold", "start": [-0.1234, 0.1234], "end": [1.1234, -0.1234], "assignment": "M"}
# A full-step turn's vertex list grows as folds cut the sheet: a blank square's 4 corners,
# then about 4 more per earlier turn (an approximation; the list is capped at 200 anyway).
VERTICES_START, VERTICES_PER_TURN = 4, 4
FULLSTEP = "origami_fullstep"


def mcq_shapes(cell: Cell, ob: OrigamiBenchSpec) -> list[Shape]:
    side = (ob.image_size, ob.image_size)
    step = MCQ_STEP if cell.item_set.labels.get("task") == "mcq_causal" else None
    text = text_tokens(mcq_request(b"", [b""] * 4, item=None, step=step).text)
    return [Shape(text, (side,) * 5, text_tokens(MCQ_ANSWER), count=len(cell.item_set.items))]


@lru_cache(maxsize=1024)
def _turn_text(kind: str, turn: int, step_limit: int) -> int:
    action = json.loads(FOLD_ANSWER)
    request = fullstep_request(
        kind=kind,  # type: ignore[arg-type]
        target=b"", folded=b"", pattern=b"",
        vertices=[(0.5, 0.5)] * (VERTICES_START + VERTICES_PER_TURN * (turn - 1)),
        history=[HistoryEntry(action, "valid")] * (turn - 1),
        step_limit=step_limit, item=None,
    )  # fmt: skip
    return text_tokens(request.text)


def fullstep_shapes(cell: Cell, ob: OrigamiBenchSpec) -> list[Shape]:
    side = (ob.image_size, ob.image_size)
    episodes = len(cell.item_set.items)
    return [
        Shape(_turn_text(ob.action, t, ob.step_limit), (side,) * 3, text_tokens(FOLD_ANSWER), count=episodes)
        for t in range(1, ob.step_limit + 1)
    ]


class OrigamiBill:
    """The bill's view of a plan's OrigamiBench cells."""

    def __init__(self, spec: ResolvedSpec, store: Store | None) -> None:
        self.ob = spec.spec.origami

    def requests(self, cell: Cell) -> int:
        """Full-step episodes at ``step_limit`` turns each; an MCQ item is one request."""
        if cell.task == FULLSTEP and self.ob is not None:
            return len(cell.item_set.items) * self.ob.step_limit
        return len(cell.item_set.items)

    def shapes(self, cell: Cell) -> list[Shape]:
        assert self.ob is not None
        return fullstep_shapes(cell, self.ob) if cell.task == FULLSTEP else mcq_shapes(cell, self.ob)

    def notes(self, cells: Sequence[Cell]) -> list[str]:
        if self.ob is None or not any(c.task == FULLSTEP for c in cells):
            return []
        return [
            f"OrigamiBench full-step: {self.ob.step_limit} turns per episode (step_limit), an upper "
            "bound: an episode may stop earlier"
        ]
