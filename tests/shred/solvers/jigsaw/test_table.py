"""Tables from a drawn page: cells from the rules, text placed by the OCR's boxes."""

from __future__ import annotations

import cv2
import numpy as np

from shredfold.corpus.document import Document
from shredfold.shred.render import render_page, table_grid
from shredfold.shred.solvers.jigsaw.table import table_html
from shredfold.shred.solvers.jigsaw.words import Word
from shredfold.spec import RenderSettings
from shredfold.tables import table_text

TABLE = """<table>
<thead><tr><th rowspan="2">Region</th><th rowspan="2">Product line</th><th colspan="2">Revenue</th></tr>
<tr><th>Q1</th><th>Q2</th></tr></thead>
<tbody>
<tr><td>North</td><td>Bicycles</td><td>412</td><td>538</td></tr>
<tr><td>East</td><td>Bicycles</td><td>289</td><td>344</td></tr>
<tr><td>West</td><td>Bicycles</td><td>503</td><td>577</td></tr>
<tr><td>Central</td><td>Bicycles</td><td>355</td><td>402</td></tr>
<tr><td>South</td><td>Accessories</td><td colspan="2">not reported</td></tr>
</tbody></table>"""

SETTINGS = RenderSettings()  # the default page: rules as thick as the benchmark draws them


def _page_and_words(join: tuple[str, str] | None = None) -> tuple[np.ndarray, list[Word]]:
    """The drawn page and one OCR box per cell, as a perfect reader would return them;
    ``join`` names two cells on one baseline that the reader returns as one line."""
    doc = Document(doc_id="t/table", domain="table", text=TABLE)
    page = render_page(doc, SETTINGS, np.random.default_rng(0))
    grid = table_grid(doc, SETTINGS)
    pad_x, pad_y = grid.pad
    words = []
    for cell in grid.cells:
        left, top, right, bottom = grid.box(cell)
        words.append(Word(cell.text, left + pad_x, top + pad_y, right - pad_x, bottom - pad_y, 0.99))
    if join:
        a, b = (next(w for w in words if w.text == t) for t in join)
        words = [w for w in words if w not in (a, b)]
        words.append(Word(f"{a.text} {b.text}", a.x0, min(a.y0, b.y0), b.x1, max(a.y1, b.y1), 0.99))
    return np.asarray(page.image.convert("RGB")), words


def test_every_cell_read_in_place_rebuilds_the_table() -> None:
    rgb, words = _page_and_words()
    assert table_text(table_html(rgb, words)) == table_text(TABLE)


def test_one_ocr_line_across_two_cells_is_cut_at_the_rule_between_them() -> None:
    rgb, words = _page_and_words(join=("Region", "Product line"))
    out = table_html(rgb, words)
    assert '<th rowspan="2">Region</th><th rowspan="2">Product line</th>' in out
    assert table_text(out) == table_text(TABLE)


def test_a_line_inside_a_merged_cell_is_not_cut() -> None:
    # "not reported" spans the Q1/Q2 columns: no rule crosses it, so it stays one text
    # even though its box straddles the column boundary.
    rgb, words = _page_and_words()
    out = table_html(rgb, words)
    assert '<td colspan="2">not reported</td>' in out


def _stepped(rgb: np.ndarray, band: int = 50, step: int = 2) -> np.ndarray:
    """The page as reassembled scraps draw it: every other band of rows a couple of pixels
    to the right, then every other band of columns a couple of pixels down, so that each
    rule is a chain of runs shorter than a rule-finder's minimum, stepping at the seams."""
    out = rgb.copy()
    for y in range(band, out.shape[0], 2 * band):
        out[y : y + band, step:] = rgb[y : y + band, :-step]
    shifted = out.copy()
    for x in range(band, out.shape[1], 2 * band):
        shifted[step:, x : x + band] = out[:-step, x : x + band]
    return shifted


def test_rules_that_step_at_the_seams_still_bound_the_cells() -> None:
    rgb, words = _page_and_words()
    assert table_text(table_html(_stepped(rgb), words)) == table_text(TABLE)


def test_rules_broken_by_white_seams_still_bound_the_cells() -> None:
    # A photograph's segmented scraps leave a few pixels of white between them, so each
    # rule is cut into runs shorter than a rule-finder's minimum wherever a seam crosses it.
    rgb, words = _page_and_words()
    grid = table_grid(Document(doc_id="t/table", domain="table", text=TABLE), SETTINGS)
    (x0, y0), lay = grid.origin, grid.layout
    seamed = rgb.copy()
    for a, b in zip(lay.col_x, lay.col_x[1:], strict=False):  # seams across the rows' rules
        seamed[:, x0 + (a + b) // 2 - 3 : x0 + (a + b) // 2 + 3] = 255
    for r in (2, 4):  # and across the columns' rules, mid-row
        y = y0 + (lay.row_y[r] + lay.row_y[r + 1]) // 2
        seamed[y - 3 : y + 3] = 255
    assert table_text(table_html(seamed, words)) == table_text(TABLE)


def test_cells_joined_in_an_l_by_missing_rules_become_one_rectangle() -> None:
    # Erase the rule between "412" and "538" and the one under "538": the three units form
    # an L whose box also covers "289"; one cell takes all four, none is left empty.
    rgb, words = _page_and_words()
    doc = Document(doc_id="t/table", domain="table", text=TABLE)
    grid = table_grid(doc, SETTINGS)
    box = {c.text: grid.box(c) for c in grid.cells}
    erased = rgb.copy()
    left, top, right, bottom = box["538"]
    erased[top + 4 : bottom - 4, left - 3 : left + 4] = 245  # between 412 and 538
    erased[bottom - 3 : bottom + 4, left + 4 : right - 4] = 245  # under 538
    out = table_html(erased, words)
    assert '<td rowspan="2" colspan="2">412 538 289 344</td>' in out
    assert "<td></td>" not in out


def _lightened(rgb: np.ndarray, x: int, top: int, bottom: int, level: int) -> np.ndarray:
    """``rgb`` with the rule at column ``x`` greyed to ``level`` over 12 px of every 30 from
    ``top`` to ``bottom``: as a crease's shading draws it on a photographed sheet, in dark
    pieces shorter than a rule-finder's minimum."""
    out = rgb.copy()
    for y in range(top, bottom, 30):
        part = out[y : y + 12, x - 3 : x + 4]
        part[part.mean(axis=2) < 150] = level
    return out


def test_a_rule_lightened_by_shading_still_bounds_the_cells() -> None:
    rgb, words = _page_and_words()
    grid = table_grid(Document(doc_id="t/table", domain="table", text=TABLE), SETTINGS)
    (x0, y0), lay = grid.origin, grid.layout
    # The rule between the regions and the product lines, greyed over the body's first
    # three rows (the rule stays dark above and below, where the sheet is not shaded).
    shaded = _lightened(rgb, x0 + lay.col_x[1], y0 + lay.row_y[2] + 6, y0 + lay.row_y[5], 185)
    out = table_html(shaded, words)
    assert "<td>North</td><td>Bicycles</td>" in out
    assert table_text(out) == table_text(TABLE)


def test_a_faint_line_alone_is_no_rule() -> None:
    # A crease's shadow down the middle of the product lines' column: as grey as a lightened
    # rule, but no dark rule runs along it, so it splits no cell.
    rgb, words = _page_and_words()
    grid = table_grid(Document(doc_id="t/table", domain="table", text=TABLE), SETTINGS)
    (x0, y0), lay = grid.origin, grid.layout
    x = x0 + (lay.col_x[1] + lay.col_x[2]) // 2
    creased = rgb.copy()
    creased[y0 : y0 + lay.row_y[-1], x - 1 : x + 2] = 185
    assert table_html(creased, words) == table_html(rgb, words)


def _photographed(rgb: np.ndarray) -> np.ndarray:
    """The page as a photograph of the authors' scene shows it: 1 px #999 rules reduced to
    a few grey levels under the off-white paper, the ink left dark, a little blur."""
    from shredfold.shred.solvers.jigsaw.table import grid

    _, _, horiz, vert = grid(rgb)
    out = rgb.astype(np.float32)
    paper = out.mean(axis=2) > 200
    out[paper] = 241.0
    out[(horiz | vert) & ~paper] = 233.0
    return np.clip(cv2.GaussianBlur(out, (0, 0), 0.7), 0, 255).astype(np.uint8)


def test_faint_photographed_rules_still_bound_the_cells() -> None:
    from shredfold.shred.solvers.jigsaw.table import grid

    rgb, words = _page_and_words()
    faint = _photographed(rgb)
    ys, xs, _, _ = grid(faint)
    assert (len(ys), len(xs)) == (len(grid(rgb)[0]), len(grid(rgb)[1]))
    assert table_text(table_html(faint, words)) == table_text(TABLE)


def test_the_shaded_rim_of_a_drawn_scrap_is_no_rule() -> None:
    from shredfold.shred.solvers.jigsaw.table import grid

    # Paper drawn on white, its rim a little darker (a curled edge's shading): as faint as
    # a photographed rule, but with white on one side.
    rgb = np.full((500, 700, 3), 255, np.uint8)
    rgb[50:450, 50:650] = 228
    rgb[53:447, 53:647] = 241
    ys, xs, _, _ = grid(cv2.GaussianBlur(rgb, (0, 0), 0.7))
    assert ys == [] and xs == []


def _shifted_below(rgb: np.ndarray, words: list[Word], y: int, dx: int
                   ) -> tuple[np.ndarray, list[Word]]:
    """The page with everything below ``y`` drawn ``dx`` px to the right, as a part of a
    page laid a few px off its neighbour draws it (its words read where they now are)."""
    out = rgb.copy()
    out[y:, dx:] = rgb[y:, :-dx]
    out[y:, :dx] = 255
    moved = [Word(w.text, w.x0 + dx, w.y0, w.x1 + dx, w.y1, w.score) if w.y0 >= y else w
             for w in words]
    return out, moved


def test_rules_drawn_in_parts_a_few_px_apart_are_one_rule() -> None:
    rgb, words = _page_and_words()
    for dx in (6, 9):
        shifted, moved = _shifted_below(rgb, words, rgb.shape[0] // 2, dx)
        assert table_text(table_html(shifted, moved)) == table_text(TABLE), dx


def test_a_bold_header_without_a_wash_is_the_header() -> None:
    rgb, words = _page_and_words()
    # The header's wash lifted to the body's paper: only its bold type tells it.
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    paper = int(np.median(grey))
    washed = (grey < paper) & (grey > 200)
    plain = rgb.copy()
    plain[washed] = paper
    out = table_html(plain, words)
    assert out.index("<thead>") < out.index("Region") < out.index("</thead>")
    assert "<th>Q1</th>" in out and "<td>North</td>" in out


def test_a_part_of_the_table_off_the_drawn_scraps_leaves_the_cells_on_them_apart() -> None:
    # A cluster that holds part of a page: below a slanting cut the drawing is white. No
    # rule can show there, and the units off the paper must not merge the cells they
    # border into one (the largest part of a paper-style table read as one cell).
    rgb, words = _page_and_words()
    h, w = rgb.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    off = yy / h + xx / w > 1.45  # the lower right corner, beyond a slanting cut
    rgb = rgb.copy()
    rgb[off] = 255
    seen = [wd for wd in words if not off[int((wd.y0 + wd.y1) / 2), int((wd.x0 + wd.x1) / 2)]]
    out = table_html(rgb, seen)
    # Each unit off the paper is an empty cell of its own; "355" keeps its own cell.
    assert "<tr><td>Central</td><td>Bicycles</td><td>355</td><td></td></tr>" in out
    assert "<tr><td>South</td><td>Accessories</td><td></td><td></td></tr>" in out
    assert "<tr><td>North</td><td>Bicycles</td><td>412</td><td>538</td></tr>" in out


def test_a_table_whose_grid_collapses_to_one_cell_is_read_by_its_rows() -> None:
    # A part laid 30 px off draws each column rule as two pieces too far apart to be one:
    # the boundaries between them read unruled, and merged units grew to their boxes until
    # one cell held the whole table. Read by its text rows instead, every row keeps its text.
    rgb, words = _page_and_words()
    shifted, moved = _shifted_below(rgb, words, rgb.shape[0] // 2, 30)
    out = table_html(shifted, moved)
    assert "rowspan" not in out and "colspan" not in out
    rows = [r for r in out.splitlines() if r.startswith("<tr>")]
    assert "<tr><td>North Bicycles 412 538</td></tr>" in rows
    assert rows[-1] == "<tr><td>South Accessories not reported</td></tr>"
    assert len(rows) == 8
