"""Pages: the truth is exactly what is drawn; code keeps indentation; tables keep spans."""

from __future__ import annotations

import math

import numpy as np

from shredfold.corpus.document import Document
from shredfold.shred.fonts import font_roles, load_font
from shredfold.shred.render import code_lines, page_size, render_page, table_grid
from shredfold.shred.wrap import CLOSING, OPENING
from shredfold.spec import RenderSettings
from shredfold.tables import table_text


def _render(doc: Document, settings: RenderSettings, seed: int = 0):
    return render_page(doc, settings, np.random.default_rng(seed))


def test_code_truth_is_its_lines_with_indentation(code_py: Document, small) -> None:
    page = _render(code_py, small)
    expected = [ln.replace("\t", "    ").rstrip() for ln in code_py.text.strip("\n").split("\n")]
    assert page.truth.split("\n") == expected
    assert '    """Area of a simple shape."""' in page.truth.split("\n")  # the tab
    # as wide as the longest line plus the margin, never wider than the page
    right = max(small.margin + load_font("mono", small.code_font_size).getlength(ln) for ln in expected)
    assert page.image.size[0] == math.ceil(right) + small.margin < small.width
    assert _render(code_py, small.model_copy(update={"fit": "page"})).image.size[0] == small.width
    assert page.truth_html is None and page.lang == "en"


def test_long_code_lines_are_hard_wrapped_not_lost(small) -> None:
    long = "x = [" + ", ".join(str(i) for i in range(200)) + "]"
    doc = Document(doc_id="t/long", domain="code_java", text=f"int a;\n{long}\n")
    lines = _render(doc, small).truth.split("\n")
    assert lines[0] == "int a;"
    assert len(lines) > 2 and "".join(lines[1:]) == long
    assert code_lines("\n\n\tx\t\n\n") == ["    x"]


def test_prose_truth_is_the_drawn_text(news_en: Document, small) -> None:
    page = _render(news_en, small)
    lines = page.truth.split("\n")
    assert lines[0].startswith("Council approves")  # the headline, without "#"
    assert "*" not in page.truth and "#" not in page.truth  # markup is not drawn
    words = " ".join(lines).split()
    assert "project" in words and "budget" in words
    assert small.width - 3 * small.prose_font_size < page.image.size[0] <= small.width
    assert page.image.mode == "RGB"


def test_chinese_wraps_without_leading_punctuation(news_zh: Document, small) -> None:
    page = _render(news_zh, small)
    assert page.lang == "zh"
    lines = page.truth.split("\n")
    assert len(lines) > 4
    for line in lines:
        assert line and line[0] not in CLOSING and line[-1] not in OPENING
    assert "".join(lines[1:]).replace(" ", "") == "".join(
        news_zh.text.split("\n", 2)[2].split()
    ).replace(" ", "")


def test_table_truth_and_every_cell_drawn(table_doc: Document, small) -> None:
    page = _render(table_doc, small)
    assert page.truth == table_text(table_doc.text)
    assert page.truth_html == table_doc.text.strip()
    grid = table_grid(table_doc, small)
    assert [c.text for c in grid.cells] == [
        "Region", "Population", "2010", "2020", "North", "12.1", "13.4",
        "South", "8.7 (no census in 2020)",
    ]  # fmt: skip
    ink = np.asarray(page.image.convert("L")) < 128
    for cell, lines in zip(grid.cells, grid.layout.lines, strict=True):
        left, top, right, bottom = grid.box(cell)
        inside = ink[top + 3 : bottom - 2, left + 3 : right - 2]
        assert inside.any(), f"no text drawn in {cell.text!r}"
        assert " ".join(lines) == cell.text


def test_merged_cells_span_their_rows_and_columns(table_doc: Document, small) -> None:
    grid = table_grid(table_doc, small)
    by_text = {c.text: c for c in grid.cells}
    region, population = by_text["Region"], by_text["Population"]
    assert (region.row, region.col, region.rowspan, region.colspan) == (0, 0, 2, 1)
    assert (population.colspan, by_text["2010"].col, by_text["2020"].col) == (2, 1, 2)
    merged = by_text["8.7 (no census in 2020)"]
    assert (merged.col, merged.colspan) == (1, 2)
    # A rule is drawn where cells meet and not across a merged cell (its text may cross
    # the line where a rule would be, so "drawn" means dark along nearly its whole length).
    page = np.asarray(_render(table_doc, small).image.convert("L"))
    x_rule = grid.box(by_text["2020"])[0]  # between the 2010 and 2020 columns
    north, south = grid.box(by_text["12.1"]), grid.box(merged)
    assert _ruled(page[north[1] + 4 : north[3] - 4, x_rule - 1 : x_rule + 2])
    assert not _ruled(page[south[1] + 4 : south[3] - 4, x_rule - 1 : x_rule + 2])
    y_rule = grid.box(by_text["2010"])[1]  # between the two head rows
    left, _, right, _ = grid.box(region)
    assert _ruled(page[y_rule - 1 : y_rule + 2, left + 4 : right - 4].T) is False
    left, _, right, _ = grid.box(by_text["2010"])
    assert _ruled(page[y_rule - 1 : y_rule + 2, left + 4 : right - 4].T)


def test_table_cells_that_fit_the_page_are_not_wrapped() -> None:
    # Short headers over short numbers, and names that set their column's width: on a page
    # with room to spare every cell keeps one line (a column cut a pixel short once
    # wrapped "Won" into "Wo" / "n").
    names = ["Riverton Rovers", "Lakeside Wanderers", "Port Ellis United", "Causeway Town"]
    body = "".join(f"<tr><td>{n}</td><td>{k}</td><td>{9 - k}</td></tr>" for k, n in enumerate(names))
    text = ("<table><thead><tr><th>Team</th><th>Won</th><th>Lost</th></tr></thead>"
            f"<tbody>{body}</tbody></table>")
    doc = Document(doc_id="t/won", domain="table", text=text)
    for size in range(14, 40, 3):
        grid = table_grid(doc, RenderSettings(table_font_size=size))
        assert [len(lines) for lines in grid.layout.lines] == [1] * len(grid.cells), size


def _ruled(band: np.ndarray) -> bool:
    """Is there a line along this band (rows = positions along it, 3 px across)?"""
    return bool((band.min(axis=1) < 140).mean() > 0.95)


def test_page_is_deterministic_given_the_seed(news_en: Document, small) -> None:
    a, b, c = _render(news_en, small, 1), _render(news_en, small, 1), _render(news_en, small, 2)
    assert a.image.tobytes() == b.image.tobytes()
    assert a.image.tobytes() != c.image.tobytes()  # the paper texture differs
    assert a.truth == c.truth


def test_texture_zero_gives_flat_paper(news_en: Document, small) -> None:
    flat = small.model_copy(update={"texture": 0.0})
    px = np.asarray(_render(news_en, flat).image)
    assert (px[:10, :10] == flat.paper).all()


def test_font_roles_follow_script_and_kind(news_en, news_zh, code_py, table_doc) -> None:
    assert font_roles(news_en) == ("prose", "prose_bold")
    assert font_roles(news_zh) == ("cjk", "cjk_bold")
    assert font_roles(code_py) == ("mono",)
    assert font_roles(table_doc) == ("prose", "prose_bold")


def test_page_size_is_the_rendered_size_without_drawing(news_en, news_zh, code_py, table_doc, small) -> None:
    for doc in (news_en, news_zh, code_py, table_doc, Document(doc_id="t/empty", domain="news_en", text="x")):
        assert page_size(doc, small) == _render(doc, small).image.size, doc.doc_id
