"""Recognised words on a drawn page, formatted as text (prose, code).

Shared by the page reader (:mod:`.read`) and the table rebuilder (:mod:`.table`). Rows and
indentation follow the OCR reader's rule (:mod:`shredfold.shred.ocr.rows`); only the
width of a character is measured here, on the recognised text (a drawn page keeps no
glyph positions).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from shredfold.shred.ocr.rows import group_rows, indents


@dataclass(frozen=True)
class Word:
    """A recognised box in the coordinates of the whole drawn cluster."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    score: float

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def box(self) -> tuple[float, float, float, float]:
        return (self.x0, self.y0, self.x1, self.y1)


def _columns(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def char_width(words: Sequence[Word]) -> float | None:
    """The width of one character of monospaced ``words`` (px), from the words long enough
    to measure it by; None when there are none."""
    widths = [(w.x1 - w.x0) / _columns(w.text) for w in words if _columns(w.text) >= 4]
    return statistics.median(widths) if widths else None


def format_text(words: Sequence[Word], kind: str, cw: float | None = None) -> str:
    """The words' text row by row; code indented by the character width ``cw`` (measured
    on ``words`` when not given: a part of a page may hold no word long enough)."""
    grouped = group_rows(words)
    if not grouped:
        return ""
    if kind != "code":
        return "\n".join(" ".join(w.text for w in row) for row in grouped)
    # Code: a row starts at its first word's left edge.
    spaces = indents([row[0].x0 for row in grouped], cw or char_width(words))
    return "\n".join(
        " " * n + " ".join(w.text for w in row) for n, row in zip(spaces, grouped, strict=True)
    )
