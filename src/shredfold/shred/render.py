"""Document → page image, with ``truth`` = exactly the text drawn, in reading order.

Layout produces positioned text runs first (so the page height is known), then the paper
texture is made at that size and the runs are drawn onto it. This is the default style
(``render.style: shredfold``); ``paper`` (the ShredBench authors' page) is :mod:`.paper`, and
the entry points below hand such documents to it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from markdown_it import MarkdownIt
from PIL import Image, ImageDraw

from shredfold.corpus.document import Document, Lang
from shredfold.shred.fonts import Role, load_font
from shredfold.shred.page import Page, Run
from shredfold.shred.tablegrid import Cell, GridLayout, layout_grid, parse_table
from shredfold.shred.texture import surface
from shredfold.shred.wrap import hard_wrap, is_cjk, wrap
from shredfold.spec import RenderSettings
from shredfold.tables import table_text

HEADLINE_SCALE = {1: 1.45, 2: 1.2}  # h3..h6 use 1.1
PARAGRAPH_GAP = 0.5  # of a line height
TAB = "    "


def _line_height(size: int, settings: RenderSettings) -> int:
    return round(size * settings.line_spacing)


# ------------------------------------------------------------------ prose


def _inline_text(children: list, cjk: bool) -> Iterator[str]:
    """Yield hard-break-separated segments of an inline token's visible text."""
    buf: list[str] = []
    for child in children:
        if child.type in ("text", "code_inline"):
            buf.append(child.content)
        elif child.type == "softbreak":
            prev = buf[-1][-1:] if buf and buf[-1] else ""
            # A source line break inside Chinese text is not a word space.
            buf.append("" if cjk and prev and is_cjk(prev) else " ")
        elif child.type == "hardbreak":
            yield "".join(buf)
            buf = []
        elif child.type == "image":
            buf.extend(c.content for c in child.children or [] if c.type == "text")
    yield "".join(buf)


def _prose_blocks(markdown: str, cjk: bool) -> Iterator[tuple[int, list[str]]]:
    """(heading level or 0, hard-break segments) for each block, in reading order."""
    md = MarkdownIt("commonmark")
    tokens = md.parse(markdown)
    level = 0
    for tok in tokens:
        if tok.type == "heading_open":
            level = int(tok.tag[1:])
        elif tok.type == "heading_close":
            level = 0
        elif tok.type == "inline":
            segments = [
                " ".join(s.split()) if not cjk else s.strip()
                for s in _inline_text(tok.children or [], cjk)
            ]
            if any(segments):
                yield level, segments
        elif tok.type in ("fence", "code_block"):
            yield 0, tok.content.rstrip("\n").split("\n")


def markdown_text(markdown: str, cjk: bool) -> str:
    """The text a reader sees in a Markdown document (markup dropped), a line per block
    segment: what a rendered page of it shows, before wrapping."""
    return "\n".join(seg for _, segments in _prose_blocks(markdown, cjk) for seg in segments)


def _layout_prose(doc: Document, s: RenderSettings, lang: Lang) -> tuple[list[Run], int]:
    regular: Role = "cjk" if lang == "zh" else "prose"
    bold: Role = "cjk_bold" if lang == "zh" else "prose_bold"
    inner = s.width - 2 * s.margin
    runs: list[Run] = []
    y = float(s.margin)
    first = True
    for level, segments in _prose_blocks(doc.text, lang == "zh"):
        size = (
            round(s.prose_font_size * HEADLINE_SCALE.get(level, 1.1))
            if level
            else s.prose_font_size
        )
        role = bold if level else regular
        font = load_font(role, size)
        ascent, _ = font.getmetrics()
        step = _line_height(size, s)
        if not first:
            y += PARAGRAPH_GAP * _line_height(s.prose_font_size, s)
        first = False
        for seg in segments:
            for line in wrap(seg, font.getlength, inner) or [""]:
                runs.append(Run(s.margin, y + ascent, line, role, size))
                y += step
    return runs, round(y) + s.margin


# ------------------------------------------------------------------ code


def code_lines(text: str) -> list[str]:
    """Source lines as drawn before wrapping: tabs → 4 spaces, trailing blanks dropped."""
    lines = [ln.replace("\t", TAB).rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def _layout_code(doc: Document, s: RenderSettings) -> tuple[list[Run], int]:
    font = load_font("mono", s.code_font_size)
    ascent, _ = font.getmetrics()
    step = _line_height(s.code_font_size, s)
    runs: list[Run] = []
    y = float(s.margin)
    for line in code_lines(doc.text):
        for part in hard_wrap(line, font.getlength, s.width - 2 * s.margin):
            runs.append(Run(s.margin, y + ascent, part, "mono", s.code_font_size))
            y += step
    return runs, round(y) + s.margin


# ------------------------------------------------------------------ table


@dataclass(frozen=True)
class TableGrid:
    """Where a table's cells go on the page (the grid's top-left is ``origin``)."""

    cells: list[Cell]
    layout: GridLayout
    origin: tuple[int, int]
    size: int  # font size
    line_height: int
    pad: tuple[int, int]

    def box(self, cell: Cell) -> tuple[int, int, int, int]:
        """(left, top, right, bottom) of a cell in page pixels (its rules included)."""
        x0, y0 = self.origin
        lay = self.layout
        return (
            x0 + lay.col_x[cell.col],
            y0 + lay.row_y[cell.row],
            x0 + lay.col_x[cell.col + cell.colspan],
            y0 + lay.row_y[cell.row + cell.rowspan],
        )


def table_grid(doc: Document, s: RenderSettings) -> TableGrid:
    lang = doc.lang
    regular: Role = "cjk" if lang == "zh" else "prose"
    bold: Role = "cjk_bold" if lang == "zh" else "prose_bold"
    size = s.table_font_size
    fonts = {False: load_font(regular, size), True: load_font(bold, size)}
    cells, nrows, ncols = parse_table(doc.text)
    step = _line_height(size, s)
    pad_x, pad_y = round(0.45 * size), round(0.3 * size)

    def measure(cell: Cell, text: str) -> float:
        return fonts[cell.header].getlength(text)

    layout = layout_grid(cells, nrows, ncols, measure, s.width - 2 * s.margin, pad_x, pad_y, step)
    return TableGrid(cells, layout, (s.margin, s.margin), size, step, (pad_x, pad_y))


def table_runs(grid: TableGrid, lang: Lang) -> list[Run]:
    """The text lines of a table's cells, where they are drawn (cells in reading order)."""
    return [run for cell in _cell_runs(grid, lang) for run in cell]


def _cell_runs(grid: TableGrid, lang: Lang) -> list[list[Run]]:
    roles: dict[bool, Role] = {
        False: "cjk" if lang == "zh" else "prose",
        True: "cjk_bold" if lang == "zh" else "prose_bold",
    }
    ascent, _ = load_font(roles[False], grid.size).getmetrics()
    pad_x, pad_y = grid.pad
    out = []
    for cell, lines in zip(grid.cells, grid.layout.lines, strict=True):
        left, top, _, bottom = grid.box(cell)
        # Merged cells centre their text vertically, as spreadsheets and browsers do.
        body = len(lines) * grid.line_height
        y = top + max(pad_y, (bottom - top - body) // 2) + ascent
        runs = []
        for line in lines:
            runs.append(Run(left + pad_x, y, line, roles[cell.header], grid.size, cell.row))
            y += grid.line_height
        out.append(runs)
    return out


def _render_table(doc: Document, s: RenderSettings, rng: np.random.Generator, lang: Lang) -> Page:
    grid = table_grid(doc, s)
    height = table_height(grid, s)
    pixels = surface(table_width(grid, s), height, s.paper, s.texture, rng)
    for cell in grid.cells:
        if cell.header:  # a light wash, multiplied so the paper texture shows through
            left, top, right, bottom = grid.box(cell)
            box = pixels[top:bottom, left:right]
            box[...] = (box.astype(np.uint16) * 233 // 255).astype(np.uint8)
    image = Image.fromarray(pixels)
    draw = ImageDraw.Draw(image)
    rule = tuple(round(0.75 * i + 0.25 * p) for i, p in zip(s.ink, s.paper, strict=True))
    rule_w = max(1, round(grid.size / 14))
    for cell, runs in zip(grid.cells, _cell_runs(grid, lang), strict=True):
        left, top, right, bottom = grid.box(cell)
        draw.rectangle((left, top, right, bottom), outline=rule, width=rule_w)  # type: ignore[arg-type]
        for run in runs:
            draw.text((run.x, run.baseline), run.text, font=load_font(run.role, run.size), fill=s.ink, anchor="ls")
    html = doc.text.strip()
    return Page(image=image, truth=table_text(html), truth_html=html, lang=lang)


def table_height(grid: TableGrid, s: RenderSettings) -> int:
    return grid.layout.row_y[-1] + 2 * s.margin


def table_width(grid: TableGrid, s: RenderSettings) -> int:
    return _fit(s, grid.origin[0] + grid.layout.col_x[-1])


def _fit(s: RenderSettings, content_right: float) -> int:
    """The page width for content ending at ``content_right``: with ``fit: content`` the
    content's box plus the margin (paper with nothing on it only makes blank scraps), never
    wider than ``width``."""
    if s.fit == "page":
        return s.width
    return min(s.width, max(2 * s.margin + 1, math.ceil(content_right) + s.margin))


# ------------------------------------------------------------------ entry point


def page_runs(doc: Document, settings: RenderSettings) -> tuple[list[Run], tuple[int, int]]:
    """Every text line of the page where it is drawn, and the page's (width, height) (pure
    layout: no texture, nothing drawn). What the renderer draws; diagnostics locate
    characters by it."""
    if settings.style == "paper":
        from shredfold.shred.paper.page import paper_runs

        return paper_runs(doc)
    if doc.kind == "table":
        grid = table_grid(doc, settings)
        return table_runs(grid, doc.lang), (table_width(grid, settings), table_height(grid, settings))
    runs, height = _layout_code(doc, settings) if doc.kind == "code" else _layout_prose(doc, settings, doc.lang)
    height = max(height, 2 * settings.margin + _line_height(settings.prose_font_size, settings))
    right = max((r.x + load_font(r.role, r.size).getlength(r.text) for r in runs if r.text), default=0.0)
    numbered = [Run(r.x, r.baseline, r.text, r.role, r.size, i) for i, r in enumerate(runs)]
    return numbered, (_fit(settings, right), height)


def page_size(doc: Document, settings: RenderSettings) -> tuple[int, int]:
    """(width, height) of the page :func:`render_page` draws, from the layout alone (fonts
    measured, nothing drawn: a few milliseconds)."""
    if settings.style == "paper":
        from shredfold.shred.paper.page import paper_layout

        return paper_layout(doc)[1]
    if doc.kind == "table":
        grid = table_grid(doc, settings)
        return table_width(grid, settings), table_height(grid, settings)
    return page_runs(doc, settings)[1]


def render_page(doc: Document, settings: RenderSettings, rng: np.random.Generator) -> Page:
    """Draw ``doc`` on a page as tall as its content needs and ``settings.width`` wide (with
    ``fit: content``, as wide as its content needs up to that). The paper style draws no
    texture (its paper is flat), so it takes nothing from ``rng``."""
    if settings.style == "paper":
        from shredfold.shred.paper.page import render_paper

        return render_paper(doc)
    lang = doc.lang
    if doc.kind == "table":
        return _render_table(doc, settings, rng, lang)
    runs, (width, height) = page_runs(doc, settings)
    image = Image.fromarray(surface(width, height, settings.paper, settings.texture, rng))
    draw = ImageDraw.Draw(image)
    for run in runs:
        if run.text:
            font = load_font(run.role, run.size)
            draw.text((run.x, run.baseline), run.text, font=font, fill=settings.ink, anchor="ls")
    truth = "\n".join(run.text for run in runs)
    return Page(image=image, truth=truth, truth_html=None, lang=lang)
