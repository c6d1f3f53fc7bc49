"""HTML table → grid of cells (rowspan/colspan honoured) → column widths and row heights."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from shredfold.shred.wrap import wrap
from shredfold.tables import parse_html

MAX_SPAN = 1000  # browsers clamp absurd spans; so do we, to keep the grid small


@dataclass(frozen=True)
class Cell:
    row: int
    col: int
    rowspan: int
    colspan: int
    text: str
    header: bool


def parse_table(html: str) -> tuple[list[Cell], int, int]:
    """The cells of the first ``<table>`` in ``html`` placed on a grid, and its (rows,
    columns). Cell text and spans come from :func:`shredfold.tables.parse_html`, the
    parser the truth (``table_text``) and TEDS use, so what is drawn is what is scored."""
    table = parse_html(html)
    rows = table.rows
    nrows = len(rows)
    taken: set[tuple[int, int]] = set()
    cells: list[Cell] = []
    for r, row in enumerate(rows):
        c = 0
        for cell in row:
            while (r, c) in taken:
                c += 1
            rs = max(1, min(cell.rowspan, MAX_SPAN, nrows - r))
            cs = max(1, min(cell.colspan, MAX_SPAN))
            for i in range(rs):
                for j in range(cs):
                    taken.add((r + i, c + j))
            cells.append(Cell(r, c, rs, cs, cell.text, r < len(table.head)))
            c += cs
    if not cells:
        raise ValueError("table has no cells")
    ncols = max(cell.col + cell.colspan for cell in cells)
    return cells, nrows, ncols


@dataclass(frozen=True)
class GridLayout:
    col_x: list[int]  # ncols + 1 boundaries, relative to the table's left edge
    row_y: list[int]  # nrows + 1 boundaries, relative to the table's top
    lines: list[list[str]]  # wrapped text of each cell, in ``cells`` order


def layout_grid(
    cells: list[Cell],
    nrows: int,
    ncols: int,
    measure: Callable[[Cell, str], float],
    max_width: int,
    pad_x: int,
    pad_y: int,
    line_height: int,
) -> GridLayout:
    """Column widths from content (shrunk toward each column's longest word to fit
    ``max_width``), then row heights from the wrapped text; spans get what they need."""

    def natural(cell: Cell) -> float:
        return measure(cell, cell.text) + 2 * pad_x

    def minimum(cell: Cell) -> float:
        words = cell.text.split() or [""]
        longest = max(max(measure(cell, w) for w in words), measure(cell, "M"))
        return longest + 2 * pad_x

    nat = [2.0 * pad_x + 8] * ncols
    low = [2.0 * pad_x + 8] * ncols
    for cell in cells:
        if cell.colspan == 1:
            nat[cell.col] = max(nat[cell.col], natural(cell))
            low[cell.col] = max(low[cell.col], minimum(cell))
    if sum(nat) <= max_width:
        widths = nat
    elif sum(low) <= max_width:
        k = (max_width - sum(low)) / (sum(nat) - sum(low))
        widths = [lo + (na - lo) * k for lo, na in zip(low, nat, strict=True)]
    else:  # even single words do not fit: shrink everything, words break by character
        widths = [lo * max_width / sum(low) for lo in low]
    # A spanning cell widens its columns evenly, within the page.
    for cell in sorted(cells, key=lambda c: c.colspan):
        if cell.colspan > 1:
            cols = range(cell.col, cell.col + cell.colspan)
            have = sum(widths[i] for i in cols)
            slack = max_width - sum(widths)
            want = min(natural(cell), have + max(0.0, slack))
            if want > have:
                extra = (want - have) / cell.colspan
                for i in cols:
                    widths[i] += extra
    col_x = [0]
    for w in widths:
        # Rounded up: a column cut to a whole pixel below its text's width would wrap a
        # header such as "Won" into "Wo" / "n" on a page with room to spare.
        col_x.append(col_x[-1] + math.ceil(w))

    lines: list[list[str]] = []
    need: list[int] = []
    for cell in cells:
        inner = col_x[cell.col + cell.colspan] - col_x[cell.col] - 2 * pad_x
        wrapped = wrap(cell.text, lambda s, cell=cell: measure(cell, s), inner) or [""]
        lines.append(wrapped)
        need.append(len(wrapped) * line_height + 2 * pad_y)
    heights = [line_height + 2 * pad_y] * nrows
    for cell, h in zip(cells, need, strict=True):
        if cell.rowspan == 1:
            heights[cell.row] = max(heights[cell.row], h)
    for cell, h in sorted(zip(cells, need, strict=True), key=lambda p: p[0].rowspan):
        if cell.rowspan > 1:
            rows = range(cell.row, cell.row + cell.rowspan)
            short = h - sum(heights[i] for i in rows)
            if short > 0:
                for k, i in enumerate(rows):
                    heights[i] += short // cell.rowspan + (1 if k < short % cell.rowspan else 0)
    row_y = [0]
    for h in heights:
        row_y.append(row_y[-1] + h)
    return GridLayout(col_x, row_y, lines)
