"""Simple-fold sequences for designs that have none, so one-step items can come from them.

A one-step item shows a design's state after k steps and after k + 1. Procedural and built-in
designs have a fold sequence; Flat-Folder's designs have only their crease pattern, and few
of those have a flat-foldable order of adding their creases (:mod:`.crease_order`; 4 of the
200 shared designs). For the others, a design's steps are the simple folds that the
full-step search (:mod:`.fold_search`) plans from the blank sheet toward the design's folded
outline, drawn as the full-step task draws it (centred in the view): each prefix is a
folded state on the way to the design's silhouette, the last one its closest simple-fold
approximation, and the items made from them are classified by the design's category and
tier. A design whose crease order exists keeps that (its items show the design's own
creases); one that no simple fold brings closer to its outline, or whose outline the
simple folds approximate poorly (:data:`MIN_SCORE`), gives no sequence, with the reason.

:func:`find_simple_folds` is a pure function of the design (and its budget). Finding costs
seconds per design, so the results for Flat-Folder's pinned designs are shipped
(``data/flat_folder/simple_folds.json``, written by ``bench/simple_folds.py``, keyed by the
FOLD file's SHA-256 like :mod:`.known`) and never searched while planning;
:func:`with_simple_folds` gives a design its shipped sequence.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict

from shredfold.origami_bench.design import Design
from shredfold.store import content_key, sha256_bytes

FINDER_VERSION = 1
STEPS = 8  # most simple folds a sequence has
MIN_SCORE = 0.5  # GS's measure (on polygons) the sequence's last state must reach
DATA_FILE = "simple_folds.json"


class FoundFolds(BaseModel):
    """What the finder made of a design: a sequence of simple folds, or why there is none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sequence: tuple[dict[str, Any], ...] | None = None
    reason: str = ""
    score: float | None = None  # the last state's GS measure against the design's outline

    @property
    def found(self) -> bool:
        return self.sequence is not None


def finder_params() -> dict[str, Any]:
    """Everything besides the design that shapes what the finder returns."""
    from shredfold.origami import ENGINE_VERSION

    return {"version": FINDER_VERSION, "steps": STEPS, "min_score": MIN_SCORE, "engine": ENGINE_VERSION}


def design_outline(design: Design) -> Any:
    """The design's folded outline where the full-step task draws it: its bounding box
    centred on the sheet's centre (:func:`.targets.centred`), without solving the layers
    (the outline needs only where each face lands)."""
    import numpy as np
    import shapely

    from shredfold.origami import fold_geometry, folded_silhouette

    pattern = design.pattern()
    outline = folded_silhouette(fold_geometry(pattern))
    lo_x, lo_y, hi_x, hi_y = outline.bounds
    sheet = pattern.vertices
    shift = (sheet.min(axis=0) + sheet.max(axis=0)) / 2 - np.array([lo_x + hi_x, lo_y + hi_y]) / 2
    return shapely.affinity.translate(outline, float(shift[0]), float(shift[1]))


def find_simple_folds(design: Design) -> FoundFolds:
    """A sequence of at most :data:`STEPS` simple folds from the blank sheet toward the
    design's outline, or the reason there is none (see the module's note)."""
    from shredfold.origami import square_sheet
    from shredfold.origami_bench.crease_order import find_crease_order
    from shredfold.origami_bench.solvers.fold_search import plan_toward
    from shredfold.origami_bench.target_picture import target_of_outline

    if design.sequence is not None:
        return FoundFolds(reason="has a fold sequence")
    order = find_crease_order(design)
    if order.found:
        return FoundFolds(reason=f"has a crease order of {len(order.steps or ())} steps (its items use it)")
    try:
        outline = design_outline(design)
    except Exception as exc:  # noqa: BLE001 - a design the engine cannot fold is a reason, not a crash
        return FoundFolds(reason=f"no folded outline ({type(exc).__name__}: {exc})")
    if outline.is_empty or outline.area <= 0:
        return FoundFolds(reason="no folded outline (empty)")
    actions, score = plan_toward(square_sheet(), target_of_outline(outline), STEPS)
    score = round(float(score), 6)
    if not actions:
        return FoundFolds(reason="no simple fold brings the blank sheet closer to its outline", score=score)
    if score < MIN_SCORE:
        return FoundFolds(reason=f"simple folds reach only {score:.2f} of its outline (< {MIN_SCORE})", score=score)
    return FoundFolds(sequence=tuple(actions), score=score)


# ---------------------------------------------------------------- the shipped results


def _text() -> str:
    return (resources.files("shredfold.origami_bench") / "data" / "flat_folder" / DATA_FILE).read_text()


@cache
def shipped() -> dict[str, FoundFolds]:
    """The shipped results by the SHA-256 of the design's file."""
    data = json.loads(_text())
    return {sha: FoundFolds.model_validate(row["found"]) for sha, row in data["designs"].items()}


def shipped_for(design: Design) -> FoundFolds | None:
    """What the finder made of a design read from a file, as shipped (None: not searched)."""
    return None if design.origin is None else shipped().get(design.origin.sha256)


def data_digest() -> str:
    return sha256_bytes(_text().encode())


def with_simple_folds(design: Design) -> Design:
    """The design with its shipped simple-fold sequence, under a key of its own (so items
    and states made from it are told from the design's), or the design itself when it has
    a sequence already or none is shipped for it."""
    if design.sequence is not None:
        return design
    found = shipped_for(design)
    if found is None or found.sequence is None:
        return design
    return design.model_copy(update={"sequence": found.sequence, "key": _key(found.sequence, design.key)})


def _key(sequence: tuple[dict[str, Any], ...], design_key: str) -> str:
    return content_key("origami_simple_folds", FINDER_VERSION, {"sequence": list(sequence)}, [design_key])
