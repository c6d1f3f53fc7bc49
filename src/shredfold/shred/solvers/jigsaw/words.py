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

import cv2
import numpy as np

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


# What the recogniser makes of a seam or a curled rim drawn on the page (a thin dark stroke):
# a lone stroke-like glyph ("1", "|", "一"). Code has no such token standing by itself (a
# brace, which does, is not one of them).
STROKE_GLYPHS = frozenset({"1", "l", "I", "|", "!", "i", "/", "\\", "'", "`", "-", "—", "一", "_", ".", ","})
# A seam drawn beside a glyph's edge, or two rims side by side, read as a few strokes at
# once, one of them upright ("11", "1.", "l1"): as lone, as much a stroke.
UPRIGHT_STROKES = frozenset({"1", "l", "I", "|", "!"})
ISOLATED_COLUMNS = 2.0  # ... with no other word this many characters either side of it


def _stroke_like(text: str) -> bool:
    return text in STROKE_GLYPHS or (
        0 < len(text) <= 3 and set(text) <= STROKE_GLYPHS and bool(set(text) & UPRIGHT_STROKES))


def without_strokes(words: Sequence[Word], cw: float | None) -> list[Word]:
    """The words, less the lone strokes that a drawn page's seams and rims are read as
    (see :data:`STROKE_GLYPHS`). One of them left of a page of code sets its least
    indented row, and every line of the page gains that many spaces (a paper-style Java
    page, N = 16: eight spaces on every line). One within the text is left out too: where
    it stands for a misread brace, leaving it out costs what keeping it would (and on
    that page keeping those within the text scored 0.148 to 0.129)."""
    if not cw:
        return list(words)
    reach = ISOLATED_COLUMNS * cw

    def alone(w: Word) -> bool:
        if not _stroke_like(w.text.strip()):
            return False
        for o in words:
            # Strokes beside strokes are one seam read as a chain ("1", "—", "1."), no text.
            if o is w or o.y1 <= w.y0 or o.y0 >= w.y1 or _stroke_like(o.text.strip()):
                continue
            if o.x0 - reach <= w.x1 and w.x0 <= o.x1 + reach:
                return False
        return True

    return [w for w in words if not alone(w)]


def format_text(words: Sequence[Word], kind: str, cw: float | None = None) -> str:
    """The words' text row by row; code indented by the character width ``cw`` (measured
    on ``words`` when not given: a part of a page may hold no word long enough), the lone
    strokes of seams left out (:func:`without_strokes`)."""
    if kind == "code":
        cw = cw or char_width(words)
        words = without_strokes(words, cw)
    grouped = group_rows(words)
    if not grouped:
        return ""
    if kind != "code":
        return "\n".join(" ".join(w.text for w in row) for row in grouped)
    # Code: a row starts at its first word's left edge.
    spaces = indents([row[0].x0 for row in grouped], cw)
    return "\n".join(
        " " * n + " ".join(w.text for w in row) for n, row in zip(spaces, grouped, strict=True)
    )


def stroke_width(ink: np.ndarray) -> float:
    """The width of the strokes of a 0/1 ink mask (px): its area over half its outline."""
    area = int(ink.sum())
    edge = area - int(cv2.erode(ink, np.ones((3, 3), np.uint8)).sum())
    return 2.0 * area / max(edge, 1)
