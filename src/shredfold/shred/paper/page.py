"""The paper style's entry points: a document's runs (for the failure diagnostics and the
cut), its page size, and its page.

The page is what the authors' screenshot shows: 1600 px wide, as tall as the body (at least
1000 px) plus 100 px, less the part of the window Chrome's frame takes (:data:`.css.WINDOW_FRAME`).
The truth is the text drawn, a drawn line per line (a table's is its reading-order text);
what a line shows right of a code block's edge is cut off there, as Chrome clips it.
"""

from __future__ import annotations

import functools
import math

from shredfold.corpus.document import Document
from shredfold.shred.page import Page, Run
from shredfold.shred.paper import css
from shredfold.shred.paper.blocks import Layout, TextLine, layout_body
from shredfold.shred.paper.markup import document_tree
from shredfold.tables import table_text


@functools.lru_cache(maxsize=16)
def _layout(text: str, domain: str) -> tuple[Layout, tuple[int, int]]:
    doc = Document(doc_id="-", domain=domain, text=text)  # type: ignore[arg-type]
    layout = layout_body(document_tree(doc))
    scroll_height = math.floor(layout.bottom + 0.5)  # Chrome rounds halves up
    height = max(scroll_height, css.MIN_HEIGHT) + css.EXTRA_HEIGHT - css.WINDOW_FRAME
    return layout, (css.PAGE_WIDTH, height)


def paper_layout(doc: Document) -> tuple[Layout, tuple[int, int]]:
    """The laid-out page of ``doc`` and its (width, height) (cached: do not change it)."""
    return _layout(doc.text, doc.domain)


def _visible(tl: TextLine) -> list:
    return [c for c in tl.line.chars if tl.clip is None or c.x < tl.clip]


def paper_runs(doc: Document) -> tuple[list[Run], tuple[int, int]]:
    """Every drawn piece of text in one face, where it is drawn, and the page size."""
    layout, size = paper_layout(doc)
    runs: list[Run] = []
    for n, tl in enumerate(layout.lines):
        line = tl.row if doc.kind == "table" and tl.row is not None else n
        chars = _visible(tl)
        start = 0
        for i in range(1, len(chars) + 1):
            if i < len(chars) and (chars[i].role, chars[i].size) == (chars[start].role, chars[start].size):
                continue
            part = chars[start:i]
            x0 = part[0].x
            edges = tuple(c.x - x0 for c in part) + (part[-1].x + part[-1].width - x0,)
            text = "".join(c.ch for c in part)
            runs.append(Run(x0, tl.line.baseline, text, part[0].role, part[0].size, line, edges))
            start = i
    return runs, size


def paper_truth(doc: Document) -> str:
    layout, _ = paper_layout(doc)
    if doc.kind == "table":
        return table_text(doc.text.strip())
    return "\n".join("".join(c.ch for c in _visible(tl)) for tl in layout.lines)


def render_paper(doc: Document) -> Page:
    from shredfold.shred.paper.paint import paint

    layout, (width, height) = paper_layout(doc)
    image = paint(layout, width, height)
    html = doc.text.strip() if doc.kind == "table" else None
    return Page(image=image, truth=paper_truth(doc), truth_html=html, lang=doc.lang)
