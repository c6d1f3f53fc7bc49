"""Where every character of a page is drawn: a box per non-space character, in reading order.

Made once, when the sample is built, from the renderer's own layout
(:func:`shredfold.shred.render.page_runs`, the same pinned fonts; no texture is made and
nothing is drawn) and stored with the sample (``layout.json``, part of its bytes and key):
scoring and the report read it back (:meth:`PageGlyphs.from_json`) rather than lay the page
out again, so they cannot disagree with the page the scraps were cut from. A character's box spans its advance
(the run's own character edges where it gives them, as a shaped or justified line does;
else Pillow's ``getlength`` of the line up to and including it, so kerning is counted) and
the font's ascent and descent around the baseline.

The characters are NFKC-normalised one by one and whitespace is dropped, so the sequence is
the "skeleton" of the scored text: what :func:`skeleton` makes of the truth (and of an
answer) after the metrics' normalisation.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np

from shredfold.corpus.document import Document
from shredfold.metrics.text import normalize
from shredfold.shred.fonts import load_font
from shredfold.shred.render import page_runs
from shredfold.shred.wrap import is_cjk
from shredfold.spec import RenderSettings
from shredfold.tables import CELL_SEP


@dataclass(frozen=True)
class PageGlyphs:
    """Non-space characters of a page in reading order: ``chars[i]`` is drawn in
    ``boxes[i]`` = (x0, y0, x1, y1) page pixels, on truth line ``lines[i]``; ``words[i]``
    numbers the word it belongs to (-1: punctuation or symbols, not a word)."""

    chars: str
    boxes: np.ndarray  # (n, 4) float64
    lines: np.ndarray  # (n,) int64
    words: np.ndarray  # (n,) int64
    width: int
    height: int

    def to_json(self) -> dict[str, object]:
        # Python's float repr round-trips, so the boxes read back are the boxes drawn.
        return {
            "chars": self.chars, "boxes": self.boxes.tolist(), "lines": self.lines.tolist(),
            "words": self.words.tolist(), "width": self.width, "height": self.height,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PageGlyphs:
        return cls(
            chars=str(data["chars"]),
            boxes=np.asarray(data["boxes"], dtype=np.float64).reshape(-1, 4),
            lines=np.asarray(data["lines"], dtype=np.int64),
            words=np.asarray(data["words"], dtype=np.int64),
            width=int(data["width"]),
            height=int(data["height"]),
        )


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def page_glyphs(doc: Document, settings: RenderSettings) -> PageGlyphs:
    runs, (width, height) = page_runs(doc, settings)
    chars: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []
    lines: list[int] = []
    words: list[int] = []
    word = -1
    after_word = False  # the previous character continues a word
    joint = (-1.0, -1.0)  # where the previous run ended: (x, baseline)
    for run in runs:
        font = load_font(run.role, run.size)
        ascent, descent = font.getmetrics()
        top, bottom = run.baseline - ascent, run.baseline + descent
        if abs(run.x - joint[0]) > 0.5 or run.baseline != joint[1]:
            after_word = False  # a word goes on into a run only where the last one ended
        prev_end = 0.0
        for i, ch in enumerate(run.text):
            end = run.edges[i + 1] if run.edges is not None else font.getlength(run.text[: i + 1])
            start = run.edges[i] if run.edges is not None else prev_end
            x0, x1 = run.x + start, run.x + end
            prev_end = end
            wordy = _word_char(ch)
            # A CJK character is a word of its own (as ROUGE-L's tokens are); a run of
            # letters and digits is one word.
            cjk = wordy and is_cjk(ch)
            if wordy and (not after_word or cjk):
                word += 1
            after_word = wordy and not cjk
            if ch.isspace():
                continue
            for f in unicodedata.normalize("NFKC", ch):
                if not f.isspace():
                    chars.append(f)
                    boxes.append((x0, top, x1, bottom))
                    lines.append(run.line)
                    words.append(word if wordy else -1)
        joint = (run.x + prev_end, run.baseline)
    return PageGlyphs(
        chars="".join(chars),
        boxes=np.asarray(boxes, dtype=np.float64).reshape(-1, 4),
        lines=np.asarray(lines, dtype=np.int64),
        words=np.asarray(words, dtype=np.int64),
        width=width,
        height=height,
    )


def skeleton(text: str, kind: str) -> str:
    """The characters that are scored, without whitespace (and without the cell separators
    of a table): the metrics' normalisation of ``text``, then its non-space characters."""
    norm = normalize(text, kind)  # type: ignore[arg-type]
    if kind == "table":
        norm = "\n".join(line.replace(CELL_SEP, "") for line in norm.split("\n"))
    return "".join(norm.split())
