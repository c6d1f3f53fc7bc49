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

from shredfold.shred.paper.css import CELL_PADDING
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


def _units(v: float) -> int:
    """``v`` in Chrome's 1/64 px, rounded up (content widths) ..."""
    return -int(-v * 64 // 1)


def _muldiv(a: int, b: int, c: int) -> int:
    """``a * b / c`` rounded toward zero, as Chrome's fixed-point ``MulDiv``."""
    q = abs(a * b) // abs(c)
    return q if (a * b >= 0) == (c > 0) else -q


def distribute(target: int, lo: list[int], hi: list[int]) -> list[int]:
    """Chrome's width distribution over auto columns (CSS Tables 3, in 1/64 px): columns at
    their minima if that already fills ``target``; else each grows from its minimum in
    proportion to its room to grow, up to the maxima; past them, in proportion to its
    maximum. Each share is rounded toward zero and the last column takes the remainder."""
    n = len(lo)
    target = max(target, sum(lo))
    if sum(lo) >= target:
        return list(lo)
    if sum(hi) >= target:
        if sum(hi) == target:
            return list(hi)
        room = [h - m for h, m in zip(hi, lo, strict=True)]
        base, weights, total = lo, room, sum(room)
        spare = target - sum(lo)
    else:
        base, weights, total = hi, hi, sum(hi)
        spare = target - sum(hi)
    deltas = [_muldiv(spare, w, total) if total > 0 else int(spare / n) for w in weights]
    deltas[-1] += spare - sum(deltas)
    return [b + d for b, d in zip(base, deltas, strict=True)]


def _grow_rows(row_h: list[int], rows: range, need: int, starts: set[int]) -> None:
    """Chrome's share-out of a row-spanning cell's extra height (1/64 px): to the later rows
    where another spanning cell starts, evenly; else to the rows with content, in proportion
    to their heights; else to the last row."""
    spare = need - sum(row_h[r] for r in rows)
    if spare <= 0:
        return
    later = [r for r in rows if r != rows[0] and r in starts]
    filled = [r for r in rows if row_h[r] > 0]
    if later:
        shares = [spare // len(later)] * len(later)
        targets = later
    elif filled:
        total = sum(row_h[r] for r in filled)
        shares = [_muldiv(spare, row_h[r], total) for r in filled]
        targets = filled
    else:
        shares, targets = [0], [rows[-1]]
    shares[-1] += spare - sum(shares)
    for r, d in zip(targets, shares, strict=True):
        row_h[r] += d


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
    lo = [0] * ncols
    hi = [0] * ncols
    # A cell needs its content's widths (rounded up to 1/64 px, as Chrome measures text) and
    # its padding and half of each collapsed border.
    sizes = {id(cell): tuple(_units(v) + _units(extra) for v in measure(cell)) for cell in cells}
    for cell in cells:
        if cell.colspan == 1:
            cmin, cmax = sizes[id(cell)]
            lo[cell.col] = max(lo[cell.col], cmin)
            hi[cell.col] = max(hi[cell.col], cmax)
    # Then cells spanning columns, narrowest spans first, widen the columns they span.
    for cell in sorted((c for c in cells if c.colspan > 1), key=lambda c: (c.colspan, c.col)):
        cmin, cmax = sizes[id(cell)]
        cols = list(range(cell.col, min(ncols, cell.col + cell.colspan)))
        grown = distribute(cmin, [lo[c] for c in cols], [hi[c] for c in cols])
        for c, g in zip(cols, grown, strict=True):
            lo[c] = max(lo[c], g)
        grown = distribute(cmax, [lo[c] for c in cols], [hi[c] for c in cols])
        for c, g in zip(cols, grown, strict=True):
            hi[c] = max(lo[c], hi[c], g)
    grid = max(_units(width), sum(lo) + _units(BORDER)) - _units(BORDER)
    widths = distribute(grid, lo, hi)
    col_x = [BORDER / 2]
    for w in widths:
        col_x.append(col_x[-1] + w / 64)
    heights = [height_of(cell, col_x[cell.col + cell.colspan] - col_x[cell.col] - extra) for cell in cells]
    row_h = [0] * nrows
    starts = {cell.row for cell in cells if cell.rowspan > 1}
    for cell, h in zip(cells, heights, strict=True):
        if cell.rowspan == 1:
            row_h[cell.row] = max(row_h[cell.row], _units(h + extra))
    for cell, h in sorted(zip(cells, heights, strict=True), key=lambda ch: (ch[0].rowspan, ch[0].row)):
        if cell.rowspan > 1:
            _grow_rows(row_h, range(cell.row, cell.row + cell.rowspan), _units(h + extra), starts)
    row_y = [BORDER / 2]
    for h in row_h:
        row_y.append(row_y[-1] + h / 64)
    return TableLayout(cells, col_x, row_y, heights)
