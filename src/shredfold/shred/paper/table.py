"""A table with collapsed 1 px borders, laid out as Chrome's automatic table layout does.

Each cell's minimum and maximum widths (its widest unbreakable piece of text, its text on one
line) plus padding and half of each collapsed border make its columns' widths; a cell that
spans columns widens them in proportion to their maxima when it needs more. The table is as
wide as its container (``width: 100%``): the room left over after every column's maximum is
shared in proportion to the maxima, and a shortfall below them takes from each column's
excess over its minimum in proportion. Rows are as tall as their tallest cell; a cell's
content is centred vertically (``vertical-align: middle``, the browser default).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from shredfold.shred.paper.css import CELL_PADDING, layout_unit
from shredfold.shred.paper.markup import Node

BORDER = 1.0  # every cell's border; collapsed, half of it lies on each side of a grid line


@dataclass
class Cell:
    node: Node
    row: int
    col: int
    rowspan: int
    colspan: int
    header: bool


@dataclass
class TableLayout:
    cells: list[Cell]
    col_x: list[float]  # grid line x positions (centres of the collapsed borders)
    row_y: list[float]
    heights: list[float] = field(default_factory=list)  # each cell's content height


def _rows(table: Node) -> list[Node]:
    """The table's rows in the order they are drawn (head, bodies, foot)."""
    head: list[Node] = []
    body: list[Node] = []
    foot: list[Node] = []
    for child in table.children:
        if not isinstance(child, Node):
            continue
        group = {"thead": head, "tfoot": foot}.get(child.tag, body)
        if child.tag == "tr":
            body.append(child)
        elif child.tag in ("thead", "tbody", "tfoot"):
            group.extend(r for r in child.children if isinstance(r, Node) and r.tag == "tr")
    return head + body + foot


def _span(node: Node, name: str) -> int:
    try:
        return max(1, min(1000, int(node.attrs.get(name, "1"))))
    except ValueError:
        return 1


def grid_cells(table: Node) -> tuple[list[Cell], int, int]:
    """The table's cells with their grid positions, and its row and column counts."""
    cells: list[Cell] = []
    taken: set[tuple[int, int]] = set()
    rows = _rows(table)
    ncols = 0
    for r, tr in enumerate(rows):
        c = 0
        for td in tr.children:
            if not isinstance(td, Node) or td.tag not in ("td", "th"):
                continue
            while (r, c) in taken:
                c += 1
            rs = min(_span(td, "rowspan"), len(rows) - r)
            cs = _span(td, "colspan")
            for dr in range(rs):
                for dc in range(cs):
                    taken.add((r + dr, c + dc))
            cells.append(Cell(td, r, c, rs, cs, td.tag == "th"))
            c += cs
        ncols = max(ncols, c, *(cc + 1 for rr, cc in taken if rr == r))
    return cells, len(rows), ncols


def _distribute(extra: float, weights: list[float]) -> list[float]:
    total = sum(weights)
    if total <= 0:
        return [extra / len(weights)] * len(weights)
    return [extra * w / total for w in weights]


def layout_table(
    table: Node,
    width: float,
    measure: Callable[[Cell], tuple[float, float]],
    height_of: Callable[[Cell, float], float],
) -> TableLayout:
    """Column and row positions (relative to the table's border box) for a table ``width``
    wide; ``measure`` gives a cell content's (min, max) width, ``height_of`` its height when
    laid out at a given width."""
    cells, nrows, ncols = grid_cells(table)
    if not cells:
        return TableLayout([], [0.0, BORDER / 2], [0.0, BORDER / 2])
    extra = 2 * CELL_PADDING + BORDER
    lo = [0.0] * ncols
    hi = [0.0] * ncols
    sizes = {id(cell): measure(cell) for cell in cells}
    for cell in sorted(cells, key=lambda c: c.colspan):
        cmin, cmax = (v + extra for v in sizes[id(cell)])
        cols = range(cell.col, cell.col + cell.colspan)
        if cell.colspan == 1:
            lo[cell.col] = max(lo[cell.col], cmin)
            hi[cell.col] = max(hi[cell.col], cmax)
            continue
        span_hi = sum(hi[c] for c in cols)
        if cmax > span_hi:
            for c, d in zip(cols, _distribute(cmax - span_hi, [hi[c] for c in cols]), strict=True):
                hi[c] += d
        span_lo = sum(lo[c] for c in cols)
        if cmin > span_lo:
            for c, d in zip(cols, _distribute(cmin - span_lo, [hi[c] for c in cols]), strict=True):
                lo[c] += d
    hi = [max(h, lo_) for h, lo_ in zip(hi, lo, strict=True)]
    grid = max(width, sum(lo) + BORDER) - BORDER
    if grid >= sum(hi):
        widths = [h + d for h, d in zip(hi, _distribute(grid - sum(hi), hi), strict=True)]
    elif sum(hi) > sum(lo):
        t = (grid - sum(lo)) / (sum(hi) - sum(lo))
        widths = [lo_ + (h - lo_) * t for lo_, h in zip(lo, hi, strict=True)]
    else:
        widths = lo
    col_x = [BORDER / 2]
    for w in widths:
        col_x.append(layout_unit(col_x[-1] + w))
    heights = [height_of(cell, col_x[cell.col + cell.colspan] - col_x[cell.col] - extra) for cell in cells]
    row_h = [0.0] * nrows
    for cell, h in zip(cells, heights, strict=True):
        if cell.rowspan == 1:
            row_h[cell.row] = max(row_h[cell.row], h + extra)
    for cell, h in zip(cells, heights, strict=True):
        if cell.rowspan > 1:
            rows = range(cell.row, cell.row + cell.rowspan)
            short = h + extra - sum(row_h[r] for r in rows)
            if short > 0:
                for r, d in zip(rows, _distribute(short, [row_h[r] for r in rows]), strict=True):
                    row_h[r] += d
    row_y = [BORDER / 2]
    for h in row_h:
        row_y.append(layout_unit(row_y[-1] + h))
    return TableLayout(cells, col_x, row_y, heights)
