"""The page's boxes: block flow with collapsing margins, lists, code blocks and tables.

Blocks stack down the body's content box. Vertical margins collapse as CSS 2 says (adjacent
siblings, a parent with no top padding or border and its first child, one with no bottom
padding or border and its last, empty blocks through themselves); the body's padding keeps
its children's margins inside it. Runs of inline content between blocks are anonymous
blocks laid out by :mod:`.inline`. The result is what to paint (rectangles, lines of text)
and how tall the body is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shredfold.shred.paper import css
from shredfold.shred.paper.css import (
    BLOCK_TAGS,
    HIDDEN_TAGS,
    Box,
    Colour,
    Font,
    block_style,
    inline_font,
)
from shredfold.shred.paper.inline import Item, Line, Placed, intrinsic_widths, layout_lines
from shredfold.shred.paper.markup import Node
from shredfold.shred.paper.shaping import face, primary_role, resolve, shape
from shredfold.shred.paper.table import BORDER, Cell, layout_table


@dataclass
class Rect:
    x0: float
    y0: float
    x1: float
    y1: float
    colour: Colour
    radius: float = 0.0
    round_left: bool = True
    round_right: bool = True
    shape: str = "rect"  # or "disc", "circle" (list bullets)


@dataclass
class TextLine:
    line: Line
    row: int | None = None  # the table row it is in (the truth of a table is read by rows)
    clip: float | None = None  # nothing right of this x is drawn (a code block's edge)


@dataclass
class Layout:
    rects: list[Rect] = field(default_factory=list)
    inline_rects: list[Rect] = field(default_factory=list)  # inline boxes' backgrounds
    lines: list[TextLine] = field(default_factory=list)
    bottom: float = 0.0  # the body's border-box bottom


def _is_block(child: Node | str) -> bool:
    return isinstance(child, Node) and (child.tag in BLOCK_TAGS or _has_block(child))


def _has_block(node: Node) -> bool:
    """An inline element holding a block (``<a><div>…``) is laid out as a block."""
    return node.tag not in BLOCK_TAGS and any(isinstance(c, Node) and c.tag in BLOCK_TAGS for c in node.children)


def _inline_items(node: Node | str, font: Font, out: list[Item]) -> None:
    if isinstance(node, str):
        out.append(Item("text", font, node))
        return
    if node.tag in HIDDEN_TAGS:
        return
    if node.tag == "br":
        out.append(Item("br", font))
        return
    inner = inline_font(node.tag, font)
    boxed = node.tag == "code"
    if boxed:
        out.append(Item("open", inner))
    for child in node.children:
        _inline_items(child, inner, out)
    if boxed:
        out.append(Item("close", inner))


class _Builder:
    def __init__(self) -> None:
        self.out = Layout()
        self.row: int | None = None
        self.clip: float | None = None

    # -------------------------------------------------------------- flow

    def flow(self, children: list[Node | str], font: Font, left: float, width: float, y: float, pending: float, depth: int) -> tuple[float, float]:
        """Lay out ``children`` from ``y`` with ``pending`` collapsed margin above; returns the
        bottom of the last in-flow content and the margin still pending below it."""
        group: list[Item] = []
        for child in [*children, None]:
            if child is not None and not _is_block(child):
                _inline_items(child, font, group)
                continue
            if group:
                lines = layout_lines(group, font, left, width, css.layout_unit(y + pending))
                group = []
                if lines:
                    self._add_lines(lines)
                    y, pending = lines[-1].top + lines[-1].height, 0.0
            if child is not None:
                assert isinstance(child, Node)
                y, pending = self.block(child, font, left, width, y, pending, depth)
        return y, pending

    def _add_lines(self, lines: list[Line]) -> None:
        self.out.lines.extend(TextLine(line, self.row, self.clip) for line in lines)

    def block(self, node: Node, parent: Font, left: float, width: float, y: float, pending: float, depth: int) -> tuple[float, float]:
        if node.tag in HIDDEN_TAGS or node.tag == "img":
            return y, pending
        nested = node.tag in ("ul", "ol") and depth > 0
        box, font = block_style(node.tag, parent, nested)
        if node.tag == "table":
            return self.table(node, font, box, left, width, y, pending)
        pad_t, pad_r, pad_b, pad_l = box.padding
        top_edge = pad_t + (box.border_top[0] if box.border_top else 0.0)
        bottom_edge = pad_b + (box.border_bottom[0] if box.border_bottom else 0.0)
        inner_left = left + box.margin_left + pad_l
        inner_width = width - box.margin_left - box.margin_right - pad_l - pad_r
        pending = max(pending, css.layout_unit(box.margin_top))
        first_line = len(self.out.lines)
        if top_edge > 0:
            top = css.layout_unit(y + pending)
            content_y, content_pending = top + top_edge, 0.0
        else:
            top = None
            content_y, content_pending = y, pending
        clip, self.clip = self.clip, (inner_left + inner_width + pad_r if node.tag == "pre" else self.clip)
        if node.tag in ("ul", "ol"):
            y_in, pend_in = self.list_items(node, font, inner_left, inner_width, content_y, content_pending, depth + 1)
        else:
            y_in, pend_in = self.flow(node.children, font, inner_left, inner_width, content_y, content_pending, depth)
        self.clip = clip
        if top is None:
            # Its top margin collapsed with its content's: the box starts where that went.
            placed = len(self.out.lines) > first_line
            top = self.out.lines[first_line].line.top if placed else css.layout_unit(y + pending)
        if bottom_edge > 0 or top_edge > 0 or box.background is not None:
            bottom = css.layout_unit(y_in + pend_in) + bottom_edge
            self._decorate(box, left + box.margin_left, top, left + width - box.margin_right, bottom)
            return bottom, css.layout_unit(box.margin_bottom)
        return y_in, max(pend_in, css.layout_unit(box.margin_bottom))

    def _decorate(self, box: Box, x0: float, y0: float, x1: float, y1: float) -> None:
        if box.background is not None:
            self.out.rects.append(Rect(x0, y0, x1, y1, box.background, box.radius))
        if box.border_top is not None:
            w, colour = box.border_top
            self.out.rects.append(Rect(x0, y0, x1, y0 + w, colour))
        if box.border_bottom is not None:
            w, colour = box.border_bottom
            self.out.rects.append(Rect(x0, y1 - w, x1, y1, colour))

    # -------------------------------------------------------------- lists

    def list_items(self, node: Node, font: Font, left: float, width: float, y: float, pending: float, depth: int) -> tuple[float, float]:
        ordered = node.tag == "ol"
        try:
            number = int(node.attrs.get("start", "1"))
        except ValueError:
            number = 1
        kids: list[Node | str] = []
        for child in node.children:
            if isinstance(child, Node) and child.tag == "li":
                if kids:  # stray content between items flows as it is
                    y, pending = self.flow(kids, font, left, width, y, pending, depth)
                    kids = []
                first = len(self.out.lines)
                y, pending = self.block(child, font, left, width, y, pending, depth)
                if len(self.out.lines) > first:
                    line = self.out.lines[first].line
                    if ordered:
                        self._marker(line, f"{number}. ", font, left)
                    else:
                        self._bullet(line, font, left, depth)
                number += 1
            else:
                kids.append(child)
        if kids:
            y, pending = self.flow(kids, font, left, width, y, pending, depth)
        return y, pending

    def _bullet(self, line: Line, font: Font, left: float, depth: int) -> None:
        """An outside bullet, which Chrome draws as a shape, not a glyph: a disc, then a
        circle, then a square, two thirds of the ascent across (halved, rounded up), as
        measured on its screenshots."""
        ascent = face(primary_role(font)).metrics(font.size)[0]
        side = (ascent * 2 // 3 + 1) // 2
        x0 = left - side - BULLET_GAP
        y0 = line.baseline - ascent + 3 * (ascent - ascent * 2 // 3) // 2
        kind = ("disc", "circle", "rect")[min(depth, 3) - 1]
        self.out.rects.append(Rect(x0, y0, x0 + side, y0 + side, font.colour, shape=kind))

    def _marker(self, line: Line, text: str, font: Font, left: float) -> None:
        """An outside list marker: its text ends where the item's content starts."""
        placed: list[Placed] = []
        x = 0.0
        for ch in text:
            role, bold = resolve(ch, font)
            glyphs = shape(ch, role, font.size)
            w = sum(g.advance for g in glyphs)
            placed.append(Placed(ch, x, w, role, font.size, bold, font.colour, False, glyphs, marker=True))
            x += w
        for p in placed:
            p.x += left - x
        line.chars[:0] = placed

    # -------------------------------------------------------------- tables

    def table(self, node: Node, font: Font, box: Box, left: float, width: float, y: float, pending: float) -> tuple[float, float]:
        top = css.layout_unit(y + max(pending, box.margin_top))
        pad = css.CELL_PADDING
        fonts = {True: font.but(bold=True), False: font}

        def content(cell: Cell) -> list[Node | str]:
            return cell.node.children

        def measure(cell: Cell) -> tuple[float, float]:
            items: list[Item] = []
            for child in content(cell):
                _inline_items(child, fonts[cell.header], items)
            return intrinsic_widths(items)

        def height_of(cell: Cell, w: float) -> float:
            probe = _Builder()
            bottom, pend = probe.flow(content(cell), fonts[cell.header], 0.0, w, 0.0, 0.0, 0)
            return bottom

        lay = layout_table(node, width, measure, height_of)
        for cell, h in zip(lay.cells, lay.heights, strict=True):
            x0, x1 = left + lay.col_x[cell.col], left + lay.col_x[cell.col + cell.colspan]
            y0, y1 = top + lay.row_y[cell.row], top + lay.row_y[cell.row + cell.rowspan]
            if cell.header:
                self.out.rects.append(Rect(x0, y0, x1, y1, css.HEADER_BACKGROUND))
            inner = y1 - y0 - 2 * pad - BORDER
            offset = css.layout_unit(max(0.0, (inner - h) / 2))
            row, self.row = self.row, cell.row
            self.flow(content(cell), fonts[cell.header], x0 + BORDER / 2 + pad, x1 - x0 - 2 * pad - BORDER, y0 + BORDER / 2 + pad + offset, 0.0, 0)
            self.row = row
        half = BORDER / 2
        for cell in lay.cells:  # collapsed borders, one pixel on each grid line
            x0, x1 = left + lay.col_x[cell.col], left + lay.col_x[cell.col + cell.colspan]
            y0, y1 = top + lay.row_y[cell.row], top + lay.row_y[cell.row + cell.rowspan]
            for r in ((x0 - half, y0 - half, x1 + half, y0 + half), (x0 - half, y1 - half, x1 + half, y1 + half),
                      (x0 - half, y0 - half, x0 + half, y1 + half), (x1 - half, y0 - half, x1 + half, y1 + half)):  # fmt: skip
                self.out.rects.append(Rect(*r, css.CELL_BORDER))
        bottom = top + lay.row_y[-1] + half
        return bottom, box.margin_bottom


BULLET_GAP = 15.0  # between a bullet and its item's text (measured)


def layout_body(body: Node) -> Layout:
    """Lay out the page's body: its content box starts at the padding, as wide as the page
    less the padding on both sides."""
    builder = _Builder()
    y, pending = builder.flow(body.children, css.BODY, css.PADDING, css.CONTENT_WIDTH, css.PADDING, 0.0, 0)
    builder.out.bottom = css.layout_unit(y + pending) + css.PADDING
    for tl in builder.out.lines:
        for frag in tl.line.fragments:
            builder.out.inline_rects.append(
                Rect(frag.x0, frag.top, frag.x1, frag.bottom, css.CODE_BACKGROUND, css.CODE_RADIUS, frag.first, frag.last)
            )
    return builder.out


__all__ = ["Layout", "Rect", "TextLine", "layout_body", "primary_role"]
