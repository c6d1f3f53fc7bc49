"""A read page written back as the Markdown it was typeset from (the paper's protocol asks
for Markdown, and scores against the source as written).

What the page shows says what the source held:

* a ruled grid is a table (written as HTML, :mod:`shredfold.jigsaw.table`); text that
  reads as program code is code (a fenced block, indentation kept); the rest is prose;
* in prose, a line set larger than the body is a heading, ``#`` to ``###`` by how much
  larger (a browser sets ``h1``-``h3`` at 2.2, 1.8 and 1.4 times the body size, as the
  ShredBench authors' style does); lines of one heading level in a row are one heading;
* a gap between lines wider than the line pitch starts a new paragraph; within a
  paragraph, lines run together (with a space, or none between lines of CJK text), except
  after a line that stops short of the text column, which was broken by hand (``nl2br``);
* a run of words set in heavier strokes than the body is bold (``**…**``).
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from shredfold.jigsaw.words import Word, format_text, rows

# A line's core height (its x-height, the band its letters all fill) over the body's, at
# least this much -> its heading level. Set at 2.2, 1.8 and 1.4 times the body size, the
# authors' h1-h3 measure about 2.05 (h1, serif, on their composites), 1.7 and 1.3.
HEADING_RATIOS = ((1.85, 1), (1.5, 2), (1.2, 3))
PARAGRAPH_GAP = 1.3  # lines further apart than this many line pitches: a new paragraph
SHORT_LINE = 2.5  # a line ending this many body heights short of the column was broken
BOLD_RATIO = 1.3  # strokes this much heavier than the body's are bold
MIN_BOLD_INK = 20  # px of ink a word needs for its stroke weight to say anything
CODE_MARKS = frozenset("{}()[];=<>_")
CODE_MARK_SHARE = 0.035  # of a page's characters: more of these marks and it is code
CODE_WORDS = re.compile(
    r"^\s*(def|class|import|from|return|if|elif|else|for|while|try|except|with|public|"
    r"private|protected|static|void|int|const|#include|package|template|struct|using|"
    r"namespace|throw|new|final|override|auto|bool|std::)\b"
)
CODE_LINE_SHARE = 0.3  # of the lines: more starting with a keyword and it is code


@dataclass(frozen=True)
class _Line:
    words: list[Word]
    x0: float
    x1: float
    y0: float
    y1: float
    height: float  # the median height of its words' boxes
    core: float  # px: the height of the band its letters' ink fills (x-height)

    @property
    def advance(self) -> float:
        """px of line per character."""
        return (self.x1 - self.x0) / max(len(self.text), 1)

    @property
    def centre(self) -> float:
        return (self.y0 + self.y1) / 2

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


def _lines(words: Sequence[Word], grey: np.ndarray | None = None) -> list[_Line]:
    out = []
    for r in rows(words):
        x0, x1 = min(w.x0 for w in r), max(w.x1 for w in r)
        y0, y1 = min(w.y0 for w in r), max(w.y1 for w in r)
        height = statistics.median(w.height for w in r)
        core = _core(grey, x0, y0, x1, y1) if grey is not None else 0.0
        out.append(_Line(list(r), x0, x1, y0, y1, height, core or 0.6 * height))
    return out


def _core(grey: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> float:
    """Rows of the box that hold at least half as much ink as its inkiest row: the band
    all letters fill (x-height, or a CJK glyph's body), which grows with the type size
    whatever the letters (a box's height depends on ascenders and descenders)."""
    box = grey[max(int(y0), 0) : int(np.ceil(y1)), max(int(x0), 0) : int(np.ceil(x1))]
    if box.size == 0:
        return 0.0
    _, ink = cv2.threshold(box, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    prof = ink.sum(axis=1).astype(np.float64)
    if prof.max() < 3:
        return 0.0
    return float((prof >= 0.5 * prof.max()).sum())


def is_cjk(text: str) -> bool:
    """Mostly CJK ideographs (and kana, hangul): lines of it join with no space."""
    letters = [ch for ch in text if ch.isalnum()]
    wide = sum(unicodedata.east_asian_width(ch) in "WF" for ch in letters)
    return bool(letters) and wide >= 0.5 * len(letters)


def looks_like_code(words: Sequence[Word]) -> bool:
    """Program text: many of the marks code is made of, or many lines opening with a
    keyword of a common language."""
    lines = [ln.text for ln in _lines(words)]
    chars = sum(len(t) for t in lines)
    if not chars:
        return False
    marks = sum(ch in CODE_MARKS for t in lines for ch in t)
    keyed = sum(bool(CODE_WORDS.match(t)) for t in lines)
    return marks >= CODE_MARK_SHARE * chars or keyed >= CODE_LINE_SHARE * len(lines)


def page_markdown(rgb: np.ndarray, words: Sequence[Word]) -> str:
    """The Markdown of one upright page (or part of one): a table, code or prose."""
    from shredfold.jigsaw.table import grid, table_html

    ys, xs, _, _ = grid(rgb)
    if len(ys) >= 3 and len(xs) >= 3:
        return table_html(rgb, words)
    if looks_like_code(words):
        body = format_text(words, "code")
        return f"```\n{body}\n```" if body else ""
    return prose_markdown(words, rgb)


def prose_markdown(words: Sequence[Word], rgb: np.ndarray) -> str:
    """Prose as Markdown: headings, paragraphs, hand-broken lines and bold runs, from the
    words read on ``rgb`` (the upright page they were read on)."""
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    # A lone mark on a line of its own is a speck read as a letter, not prose.
    lines = [ln for ln in _lines(words, grey) if len(ln.text.strip()) > 1]
    if not lines:
        return ""
    body_h = _body_height(lines)
    body_core = _by_chars(lines, lambda ln: ln.core)
    body_advance = _by_chars(lines, lambda ln: ln.advance)

    def size(ln: _Line) -> float:
        return min(ln.core / body_core, ln.advance / body_advance)

    pitch = _pitch(lines, body_h)
    body = [ln for ln in lines if not _level(size(ln))]
    right = float(np.percentile([ln.x1 for ln in body], 90)) if body else max(ln.x1 for ln in lines)
    bold = _bold_tokens(stroke_weights(rgb, [w for ln in body for w in ln.words]))
    blocks: list[str] = []
    level_prev = 0
    for k, ln in enumerate(lines):
        level = _level(size(ln))
        gap = k == 0 or ln.centre - lines[k - 1].centre > PARAGRAPH_GAP * max(
            pitch, 1.2 * max(ln.height, lines[k - 1].height))
        text = _marked(ln, bold) if not level else ln.text
        if level:
            if level == level_prev and blocks and not _gapped(ln, lines[k - 1], pitch):
                blocks[-1] += _joiner(blocks[-1], text) + text
            else:
                blocks.append("#" * level + " " + text)
        elif gap or level_prev:
            blocks.append(text)
        else:
            prev = lines[k - 1]
            hand = prev.x1 < right - SHORT_LINE * body_h
            blocks[-1] += "\n" + text if hand else _joiner(blocks[-1], text) + text
        level_prev = level
    return "\n\n".join(blocks)


def _gapped(ln: _Line, prev: _Line, pitch: float) -> bool:
    """Two heading lines too far apart to be one wrapped heading."""
    return ln.centre - prev.centre > PARAGRAPH_GAP * max(pitch, 1.4 * max(ln.height, prev.height))


def _joiner(before: str, after: str) -> str:
    """What joins a wrapped line to the next: a space, or nothing between CJK text."""
    tail, head = before[-1:], after[:1]
    if tail and head and is_cjk(tail) and is_cjk(head):
        return ""
    return " "


def _level(ratio: float) -> int:
    for least, level in HEADING_RATIOS:
        if ratio >= least:
            return level
    return 0


def _by_chars(lines: Sequence[_Line], value: Callable[[_Line], float]) -> float:
    """The median of a line's measure over all characters (the body's, where most are)."""
    return float(np.median([value(ln) for ln in lines for _ in range(max(1, len(ln.text)))]))


def _body_height(lines: Sequence[_Line]) -> float:
    """The height of the body text's lines: the median over characters."""
    return _by_chars(lines, lambda ln: ln.height)


def _pitch(lines: Sequence[_Line], body_h: float) -> float:
    """The distance between neighbouring lines of body text within a paragraph: the
    shortest common one (paragraph gaps and headings are longer)."""
    steps = [b.centre - a.centre for a, b in zip(lines, lines[1:], strict=False)
             if abs(a.height - body_h) < 0.25 * body_h and abs(b.height - body_h) < 0.25 * body_h]
    steps = [s for s in steps if s > 0.8 * body_h]
    if not steps:
        return 1.6 * body_h
    low = float(np.percentile(steps, 20, method="lower"))
    near = [s for s in steps if abs(s - low) <= 0.2 * low]
    return float(np.median(near))


def stroke_weights(rgb: np.ndarray, words: Sequence[Word]) -> dict[int, list[float]]:
    """Per word (by ``id``), the stroke width of each space-separated token of its text,
    measured where the token lies in its box (by its share of the characters): ink area
    over half its outline. NaN where a token shows too little ink."""
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    out: dict[int, list[float]] = {}
    h, w = grey.shape
    for wd in words:
        tokens = wd.text.split(" ")
        total = max(len(wd.text), 1)
        x0, y0 = max(int(wd.x0), 0), max(int(wd.y0), 0)
        x1, y1 = min(int(np.ceil(wd.x1)), w), min(int(np.ceil(wd.y1)), h)
        box = grey[y0:y1, x0:x1]
        if box.size == 0:
            out[id(wd)] = [float("nan")] * len(tokens)
            continue
        _, ink = cv2.threshold(box, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
        weights, start = [], 0
        for tok in tokens:
            a = x0 + (x1 - x0) * start / total
            b = x0 + (x1 - x0) * (start + len(tok)) / total
            start += len(tok) + 1
            part = ink[:, max(int(a) - x0, 0) : max(int(b) - x0, 0)]
            weights.append(_stroke(part))
        out[id(wd)] = weights
    return out


def _stroke(ink: np.ndarray) -> float:
    area = int(ink.sum())
    if area < MIN_BOLD_INK:
        return float("nan")
    inner = cv2.erode(ink, np.ones((3, 3), np.uint8))
    edge = area - int(inner.sum())
    return 2.0 * area / max(edge, 1)


def _bold_tokens(weights: dict[int, list[float]]) -> dict[int, list[bool]]:
    values = [v for ws in weights.values() for v in ws if v == v]
    if len(values) < 5:
        return {}
    body = float(np.median(values))
    return {k: [v == v and v >= BOLD_RATIO * body for v in ws] for k, ws in weights.items()}


def _marked(ln: _Line, bold: dict[int, list[bool]]) -> str:
    """The line's text with its bold runs wrapped in ``**``."""
    tokens: list[tuple[str, bool]] = []
    for wd in ln.words:
        flags = bold.get(id(wd))
        parts = wd.text.split(" ")
        if flags is None or len(flags) != len(parts):
            flags = [False] * len(parts)
        tokens += [(p, f) for p, f in zip(parts, flags, strict=True) if p]
    out, run = [], []
    for tok, heavy in tokens + [("", False)]:
        if heavy:
            run.append(tok)
            continue
        if run:
            out.append("**" + " ".join(run) + "**")
            run = []
        if tok:
            out.append(tok)
    return " ".join(out)
