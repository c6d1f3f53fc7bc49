"""Recognised text boxes grouped into rows, and code indentation in character columns.

One rule for both readers of the built-in models: the OCR reader (:mod:`.reader`, which
measures a column's width on the ink) and jigsaw's page reader
(:mod:`shredfold.shred.solvers.jigsaw.words`, which measures it on the recognised text).
Pure functions over values: no imaging library is loaded.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

__all__ = ["Boxed", "group_rows", "indents"]


class Boxed(Protocol):
    """A recognised text box: ``box`` is (x0, y0, x1, y1) in pixels, y down."""

    @property
    def box(self) -> tuple[float, float, float, float]: ...


B = TypeVar("B", bound=Boxed)


def _centre(item: Boxed) -> float:
    return (item.box[1] + item.box[3]) / 2


def _height(item: Boxed) -> float:
    return item.box[3] - item.box[1]


def group_rows(items: Iterable[B]) -> list[list[B]]:
    """Boxes grouped into text rows, top to bottom; each row left to right.

    Boxes are taken by their vertical centre; a box joins the current row when its centre
    is within half a height (the smaller of its own and the row's median) of the row's
    mean centre. Comparing centres rather than growing the row's extent keeps a tall
    stray box from chaining two lines into one.
    """
    rows: list[list[B]] = []
    for item in sorted(items, key=_centre):
        if rows:
            row = rows[-1]
            row_centre = statistics.fmean(_centre(b) for b in row)
            row_height = statistics.median(_height(b) for b in row)
            if abs(_centre(item) - row_centre) <= 0.5 * min(_height(item), row_height):
                row.append(item)
                continue
        rows.append([item])
    return [sorted(row, key=lambda b: b.box[0]) for row in rows]


def indents(starts: Sequence[float], width: float | None) -> list[int]:
    """Leading spaces of each row of code: how many columns of ``width`` px its start (x,
    px) lies right of the least indented row's, rounded; never negative. All zero when no
    width could be measured.

    Relative to the least indented row, not to column 0: a piece cut from the middle of a
    function shows no line at column 0 of the file."""
    if not starts or not width:
        return [0] * len(starts)
    left = min(starts)
    return [max(0, round((start - left) / width)) for start in starts]
