"""A read page written back as the Markdown it was typeset from (the paper's protocol asks
for Markdown, and scores against the source as written).

What the page shows says what the source held:

* a ruled grid is a table (written as HTML, :mod:`shredfold.shred.solvers.jigsaw.table`); text that
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

from shredfold.shred.ocr.rows import group_rows
from shredfold.shred.solvers.jigsaw.words import Word, char_width, format_text, stroke_width

# A line's core height (its x-height, the band its letters all fill) over the body's, at
# least this much -> its heading level. Set at 2.2, 1.8 and 1.4 times the body size, the
# authors' h1-h3 measure about 2.05 (h1, serif, on their composites), 1.7 and 1.3.
HEADING_RATIOS = ((1.85, 1), (1.5, 2), (1.2, 3))
PARAGRAPH_GAP = 1.3  # lines further apart than this many line pitches: a new paragraph
SHORT_LINE = 2.5  # a line ending this many body heights short of the column was broken
BOLD_RATIO = 1.3  # strokes this much heavier than the body's are bold
WORD_GAP = 0.25  # of a box's height: a gap in its ink at least this wide parts two words
MIN_BOLD_INK = 20  # px of ink a word needs for its stroke weight to say anything ...
MIN_BOLD_SHARE = 0.5  # ... and at least this many squares of its box's height
CODE_MARKS = frozenset("{}()[];=<>_")
CODE_MARK_SHARE = 0.035  # of a page's characters: more of these marks and it is code
CODE_WORDS = re.compile(
    r"^\s*(def|class|import|from|return|if|elif|else|for|while|try|except|with|public|"
    r"private|protected|static|void|int|const|#include|package|template|struct|using|"
    r"namespace|throw|new|final|override|auto|bool|std::)\b"
)
CODE_LINE_SHARE = 0.3  # of the lines: more starting with a keyword and it is code
INDENT_STEP = 4  # columns of one level of code indentation ...
INDENT_SHARE = 0.5  # ... where at least this share of indents are whole steps


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
    for r in group_rows(words):
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


def pages_markdown(parts: Sequence[tuple[np.ndarray, Sequence[Word]]]) -> str:
    """The Markdown of a page read in parts (clusters of a page that did not come together,
    or scraps read one by one), in the order given (but a table's largest part first).

    Program text is one fenced block however many parts it was read in: an answer's
    longest fenced block is what is scored (``prompts.shred.read_answer``), so a fence per
    part would leave all parts but one out of the score. For the same reason a part of a
    page that is not program text is never fenced, however much it looks like code on its
    own (a few figures and brackets of a table's corner, "109", "0", "(sn": fenced, it was
    all of a table's answer that was scored, raw NED 0.99)."""
    every = [w for _, words in parts for w in words]
    if looks_like_code(every):
        cw = char_width(every)  # one type size: a short part is indented by the others' too
        bodies = [snap_indents(format_text(words, "code", cw)) for _, words in parts]
        # Full-width forms the recogniser gives for ASCII marks ("）", "；"): code is ASCII.
        body = unicodedata.normalize("NFKC", "\n".join(b for b in bodies if b))
        return f"```\n{body}\n```" if body else ""
    from shredfold.shred.solvers.jigsaw.table import is_ruled_table

    tables = [is_ruled_table(rgb) for rgb, _ in parts]
    ruled = [k for k, t in enumerate(tables) if t]
    if ruled:
        # Only an answer's first table is scored: a table read in parts leads with the ruled
        # part that holds most of its text, the others after it in the order given. Led by
        # the first part given, a paper-style table, N = 12, was scored on a corner of four
        # figures (raw NED 0.772; 0.365 led by its largest part). Written as one table
        # instead, rows of parts whose place is not known fell among the rows of the
        # largest part (raw NED up by as much as 0.11 on tables that came apart).
        lead = max(ruled, key=lambda k: sum(len(w.text) for w in parts[k][1]))
        order = [lead, *(k for k in range(len(parts)) if k != lead)]
    else:
        order = list(range(len(parts)))
    texts = (page_markdown(*parts[k], fence=False, table=tables[k]) for k in order)
    return "\n\n".join(t for t in texts if t)


def snap_indents(code: str, step: int = INDENT_STEP) -> str:
    """Indents one column off a multiple of ``step`` put on it.

    Indents are measured from the page's least indented line, and a page drawn from
    scraps laid together a little askew drifts by a column or so from top to bottom; code
    is indented in steps of (mostly) four. So where most indents are whole steps, an
    indent one column off a step is taken for that step (two off stays: a continuation
    line lined up under something)."""
    lines = code.split("\n")
    indents = [len(t) - len(t.lstrip(" ")) for t in lines if t.strip()]
    if not indents or sum(i % step == 0 for i in indents) < INDENT_SHARE * len(indents):
        return code
    out = []
    for t in lines:
        n = len(t) - len(t.lstrip(" "))
        off = n % step
        if off == 1:
            n -= 1
        elif off == step - 1:
            n += 1
        out.append(" " * n + t.lstrip(" ") if t.strip() else t)
    return "\n".join(out)


def page_markdown(rgb: np.ndarray, words: Sequence[Word], fence: bool = True,
                  table: bool | None = None) -> str:
    """The Markdown of one upright page (or part of one): a table, code (without
    ``fence``, written as prose) or prose. ``table``: whether it shows a ruled grid, where
    already known."""
    from shredfold.shred.solvers.jigsaw.table import is_ruled_table, table_html

    if table is None:
        table = is_ruled_table(rgb)
    if table:
        return table_html(rgb, words)
    if fence and looks_like_code(words):
        body = snap_indents(format_text(words, "code"))
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
    """What joins a wrapped line to the next: a space, or nothing next to CJK text (its
    ideographs and full-width stops, which a line may end or start with) and after a
    hyphen between letters: a browser sets no hyphens of its own, so a wrapped line ending
    in one broke a hyphenated word ("seven-" / "hour" is "seven-hour")."""
    tail, head = before[-1:], after[:1]
    if any(unicodedata.east_asian_width(ch) in "WF" for ch in (tail, head) if ch):
        return ""
    if tail == "-" and before[-2:-1].isalpha() and head.isalnum():
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


@dataclass(frozen=True)
class _Stretch:
    """A run of ink in a word box set off by gaps (a printed word), as characters of the
    box's text (by its share of the box's width) and the weight of its strokes."""

    start: int
    end: int
    weight: float


def stroke_weights(rgb: np.ndarray, words: Sequence[Word]) -> dict[int, list[_Stretch]]:
    """Per word box (by ``id``), its printed words: the runs of ink between gaps of at
    least WORD_GAP box heights, each with its stroke width (ink area over half its outline;
    NaN where it shows too little ink) and the characters of the box's text it covers. The
    ink, not the recognised spaces, splits the box: the recogniser drops some spaces."""
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    out: dict[int, list[_Stretch]] = {}
    h, w = grey.shape
    for wd in words:
        x0, y0 = max(int(wd.x0), 0), max(int(wd.y0), 0)
        x1, y1 = min(int(np.ceil(wd.x1)), w), min(int(np.ceil(wd.y1)), h)
        box = grey[y0:y1, x0:x1]
        if box.size == 0 or not wd.text:
            out[id(wd)] = []
            continue
        _, ink = cv2.threshold(box, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
        cols = ink.any(axis=0)
        gap = max(2, int(WORD_GAP * (y1 - y0)))
        # Runs of ink columns, joined across gaps narrower than ``gap`` (within a word).
        filled = cv2.morphologyEx(cols.astype(np.uint8).reshape(1, -1), cv2.MORPH_CLOSE,
                                  np.ones((1, gap), np.uint8)).ravel().astype(bool)
        edges = np.flatnonzero(np.diff(np.concatenate([[0], filled.view(np.int8), [0]])))
        stretches = []
        for a, b in zip(edges[::2], edges[1::2], strict=True):
            first = int(round(a / max(x1 - x0, 1) * len(wd.text)))
            last = int(round(b / max(x1 - x0, 1) * len(wd.text)))
            stretches.append(_Stretch(first, max(last, first + 1), _stroke(ink[:, a:b])))
        out[id(wd)] = stretches
    return out


def _stroke(ink: np.ndarray) -> float:
    # A short word ("a", a comma) shows too little ink to weigh its strokes.
    if int(ink.sum()) < max(MIN_BOLD_INK, MIN_BOLD_SHARE * ink.shape[0] ** 2):
        return float("nan")
    return stroke_width(ink)


def _bold_tokens(weights: dict[int, list[_Stretch]]) -> dict[int, list[_Stretch]]:
    """The heavy stretches of each box (strokes BOLD_RATIO times the body's)."""
    values = [st.weight for sts in weights.values() for st in sts if st.weight == st.weight]
    if len(values) < 5:
        return {}
    body = float(np.median(values))
    return {k: [st for st in sts if st.weight == st.weight and st.weight >= BOLD_RATIO * body]
            for k, sts in weights.items()}


def _marked(ln: _Line, bold: dict[int, list[_Stretch]]) -> str:
    """The line's text with its bold runs wrapped in ``**`` (each run snapped to the word
    boundaries of the text; a space put back after it where the recogniser dropped one)."""
    texts = []
    for wd in ln.words:
        text = wd.text
        heavy = [False] * len(text)
        for st in bold.get(id(wd), []):
            for i in range(max(st.start, 0), min(st.end, len(text))):
                heavy[i] = True
        texts.append(_wrap_runs(text, heavy))
    return " ".join(texts)


def _wrap_runs(text: str, heavy: list[bool]) -> str:
    # Runs grow or shrink to whole words of the text (its spaces): the ink's share of
    # the box places them only to a character or two.
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    flags = []
    for a, b in words:
        part = heavy[a:b]
        flags.append(sum(part) > 0.5 * len(part))
    if not any(flags):
        return _split_glued(text, heavy)
    out, k = [], 0
    while k < len(words):
        if not flags[k]:
            out.append(text[words[k][0] : words[k][1]])
            k += 1
            continue
        j = k
        while j + 1 < len(words) and flags[j + 1]:
            j += 1
        out.append("**" + text[words[k][0] : words[j][1]] + "**")
        k = j + 1
    return " ".join(out)


def _split_glued(text: str, heavy: list[bool]) -> str:
    """A bold run inside one recognised word ("Date:2025", the space between dropped):
    where the heavy characters cover the word's start, it is split there."""
    if not text or not heavy[0]:
        return text
    cut = heavy.index(False) if False in heavy else len(text)
    if cut < 2 or cut >= len(text) - 1:
        return f"**{text}**" if cut >= len(text) - 1 else text
    # Snap to a boundary between a letter or stop and what follows (": 2025").
    for k in (cut, cut - 1, cut + 1):
        if 0 < k < len(text) and not text[k - 1].isalnum() and text[k].isalnum():
            cut = k
            break
    return f"**{text[:cut]}** {text[cut:]}"
