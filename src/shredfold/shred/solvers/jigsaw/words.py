"""Recognised words on a drawn page, grouped into rows and formatted as text (prose, code).

Shared by the page reader (:mod:`.read`) and the table rebuilder (:mod:`.table`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


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


def rows(words: Sequence[Word]) -> list[list[Word]]:
    """Words grouped into text rows top to bottom, each left to right (a word joins a row
    it overlaps vertically by half the smaller height)."""
    out: list[tuple[float, float, list[Word]]] = []
    for wd in sorted(words, key=lambda w: (w.y0 + w.y1) / 2):
        if out:
            r0, r1, members = out[-1]
            if min(r1, wd.y1) - max(r0, wd.y0) >= 0.5 * min(r1 - r0, wd.height):
                members.append(wd)
                out[-1] = (min(r0, wd.y0), max(r1, wd.y1), members)
                continue
        out.append((wd.y0, wd.y1, [wd]))
    return [sorted(m, key=lambda w: w.x0) for _, _, m in out]


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
    grouped = rows(words)
    if not grouped:
        return ""
    if kind != "code":
        return "\n".join(" ".join(w.text for w in row) for row in grouped)
    # Code: indentation from where each row starts, in character widths of the monospaced
    # font, relative to the least indented row (column 0 on a whole page).
    cw = cw or char_width(words)
    left = min(row[0].x0 for row in grouped)
    out = []
    for row in grouped:
        indent = round((row[0].x0 - left) / cw) if cw else 0
        out.append(" " * indent + " ".join(w.text for w in row))
    return "\n".join(out)
