"""The paper style's page, checked by hand against Chromium's layout of the same HTML.

The expected numbers were read off Debian's headless Chromium (156) laying out the same
Markdown under the authors' stylesheet with only the pinned faces: element boxes from
``getBoundingClientRect`` and character rectangles from ``Range.getClientRects``.
"""

from __future__ import annotations

import numpy as np
import pytest

from shredfold.corpus.document import Document
from shredfold.corpus.loaders import load_builtin
from shredfold.shred.paper import css
from shredfold.shred.paper.page import paper_layout, paper_runs, paper_truth, render_paper

HEADING = "# News Article 41\n**Date:** 2025-12-21\n\nA short paragraph.\n"


def _doc(text: str, domain: str = "news_en") -> Document:
    return Document(doc_id="t/paper", domain=domain, text=text)  # type: ignore[arg-type]


def _line(layout, text: str):
    return next(tl.line for tl in layout.lines if tl.line.text.startswith(text))


def test_a_heading_is_centred_over_its_3px_rule() -> None:
    doc = _doc(HEADING)
    layout, (width, height) = paper_layout(doc)
    h1 = _line(layout, "News Article 41")
    # Chromium: the h1 box starts at 101.266 (body padding 60 + 0.67em of 61.6 px), its
    # line is 98.547 px tall, 'N' starts at 528.016 (the text centred in 1480 px).
    assert h1.top == pytest.approx(101.265625, abs=1e-6)
    assert h1.height == pytest.approx(98.546875, abs=1e-6)
    assert h1.chars[0].x == pytest.approx(528.015625, abs=0.05)
    assert [c.role for c in h1.chars if not c.ch.isspace()] == ["serif_bold"] * 13
    rule = [r for r in layout.rects if r.colour == (0x33, 0x33, 0x33)]
    assert len(rule) == 1
    # padding 20 below the line, then the 3 px rule, across the content box; the h1 box ends
    # at 222.8125 and the next line starts 40 px below.
    assert (rule[0].x0, rule[0].x1) == (60, 1540)
    assert rule[0].y0 == pytest.approx(219.8125) and rule[0].y1 == pytest.approx(222.8125)
    assert _line(layout, "Date:").top == pytest.approx(262.8125)
    pixels = np.asarray(render_paper(doc).image)
    assert (pixels[220:223, 100:1500] == (0x33, 0x33, 0x33)).all()
    assert (pixels[219, 100:1500] == css.PAPER).all() and (pixels[223, 100:1500] == css.PAPER).all()
    assert width == 1600 and height == 1000 + 100 - 143  # a short page: the window's minimum


def test_a_hard_break_ends_a_line_without_justifying_it() -> None:
    layout, _ = paper_layout(_doc(HEADING))
    date = _line(layout, "Date:")
    assert date.text == "Date: 2025-12-21"
    assert [c.role for c in date.chars[:5]] == ["serif_bold"] * 5
    # natural spacing: the space after "Date:" is the bold face's own (no justification)
    assert date.chars[6].x - date.chars[5].x == pytest.approx(8.9, abs=0.05)


def test_a_justified_paragraph_puts_words_where_chromium_does() -> None:
    doc = next(d for d in load_builtin("news_en") if d.doc_id.endswith("01_city_budget"))
    layout, _ = paper_layout(doc)
    line = _line(layout, "The Riverton City Council approved")
    assert line.text.endswith("ending a seven-")  # Blink breaks after a hyphen before a letter
    starts = [c.x for i, c in enumerate(line.chars) if i == 0 or line.chars[i - 1].ch == " "]
    chromium = [60, 123.40625, 255.5, 323.078125, 441.15625, 584.390625, 611.21875, 692.609375,
                800, 947.734375, 1057.484375, 1139.046875, 1314.765625, 1422.34375, 1449.171875]  # fmt: skip
    assert starts == pytest.approx(chromium, abs=0.1)
    last = line.chars[-1]
    assert last.x + last.width == pytest.approx(1540, abs=0.01)  # flush right
    # the paragraph's last line is not stretched
    final = _line(layout, "parking fees downtown.")
    assert final.chars[-1].x + final.chars[-1].width < 1500


def test_runs_give_each_justified_character_its_place() -> None:
    doc = next(d for d in load_builtin("news_en") if d.doc_id.endswith("01_city_budget"))
    runs, _ = paper_runs(doc)
    run = next(r for r in runs if r.text.startswith("The Riverton City Council"))
    assert run.edges is not None and len(run.edges) == len(run.text) + 1
    council = run.text.index("Council")
    assert run.x + run.edges[council] == pytest.approx(323.078125, abs=0.1)
    assert all(b >= a for a, b in zip(run.edges, run.edges[1:], strict=False))


def test_a_code_block_is_grey_with_rounded_corners_and_its_lines_on_lighter_stripes() -> None:
    code = "def area(r):\n    return 3.14 * r * r\n"
    doc = _doc(code, "code_python")
    layout, _ = paper_layout(doc)
    block = [r for r in layout.rects if r.colour == css.PRE_BACKGROUND]
    assert len(block) == 1
    pre = block[0]
    # the fenced block's pre: margin 28 below the body padding, 20 px padding around two
    # 44.797 px lines (Chromium: 88 .. 217.594)
    assert (pre.x0, pre.x1, pre.radius) == (60, 1540, 5)
    assert pre.y0 == pytest.approx(88) and pre.y1 == pytest.approx(88 + 40 + 2 * 44.796875)
    first, second = (tl.line for tl in layout.lines)
    assert first.text == "def area(r):" and second.text == "    return 3.14 * r * r"
    assert first.chars[0].role == "mono"
    assert first.chars[0].x == pytest.approx(85)  # 20 px padding, then code's own 5 px
    assert second.chars[0].x == pytest.approx(80)  # padding only where the code element starts
    assert second.chars[1].x - second.chars[0].x == pytest.approx(16.857, abs=0.001)
    stripes = layout.inline_rects
    assert [(s.round_left, s.round_right) for s in stripes] == [(True, False), (False, True)]
    assert stripes[0].y0 == pytest.approx(first.baseline - 26 - 2)
    assert stripes[0].y1 == pytest.approx(first.baseline + 7 + 2)
    pixels = np.asarray(render_paper(doc).image)
    assert tuple(pixels[100, 70]) == css.PRE_BACKGROUND  # the block's padding
    assert tuple(pixels[int(first.baseline) - 24, 82]) == css.CODE_BACKGROUND  # code's padding, in its stripe
    assert tuple(pixels[int(first.baseline) - 24, 600]) == css.PRE_BACKGROUND  # past the stripe's end
    assert tuple(pixels[88, 60]) == css.PAPER  # a rounded corner


def test_a_table_has_collapsed_borders_grey_header_cells_and_chromium_column_widths() -> None:
    table = (
        "<table>\n<thead><tr><th rowspan=\"2\">Region</th><th colspan=\"2\">Population</th></tr>\n"
        "<tr><th>2010</th><th>2020</th></tr></thead>\n<tbody>\n"
        "<tr><td>North</td><td>12.1</td><td>13.4</td></tr>\n"
        "<tr><td>South</td><td colspan=\"2\">8.7 (no census in 2020)</td></tr>\n</tbody></table>"
    )
    doc = _doc(table, "table")
    layout, _ = paper_layout(doc)
    borders = [r for r in layout.rects if r.colour == css.CELL_BORDER]
    xs = sorted({round((r.x0 + r.x1) / 2, 3) for r in borders if r.x1 - r.x0 == 1})
    ys = sorted({round((r.y0 + r.y1) / 2, 3) for r in borders if r.y1 - r.y0 == 1})
    # Chromium's cell boxes: columns at 60.5 | 466.922 | 1003.172 | 1539.5, rows 90.5 ..
    # 369.688 by 69.797 (one 44.797 px line, 2 x 12 padding, the collapsed 1 px border)
    assert xs == pytest.approx([60.5, 466.922, 1003.172, 1539.5], abs=0.01)
    assert ys == pytest.approx([90.5, 160.297, 230.094, 299.891, 369.688], abs=0.01)
    headers = [r for r in layout.rects if r.colour == css.HEADER_BACKGROUND]
    assert len(headers) == 4
    region = _line(layout, "Region")
    # vertically centred in its two rows: Chromium puts its text top at 142.891
    assert region.baseline - 26 == pytest.approx(142.890625, abs=0.01)
    assert region.chars[0].x == pytest.approx(60.5 + 0.5 + 12)
    assert [c.role for c in region.chars] == ["serif_bold"] * 6
    pixels = np.asarray(render_paper(doc).image)
    assert tuple(pixels[200, 466]) == css.CELL_BORDER and tuple(pixels[200, 465]) == css.HEADER_BACKGROUND
    assert tuple(pixels[90, 300]) == css.CELL_BORDER and tuple(pixels[250, 300]) == css.PAPER
    assert paper_truth(doc).split("\n")[0] == "Region | Population"


def test_chinese_falls_back_to_noto_sans_cjk_and_justifies_around_ideographs() -> None:
    doc = next(d for d in load_builtin("news_zh") if d.doc_id.endswith("01_metro_line"))
    layout, _ = paper_layout(doc)
    line = _line(layout, "经过近五年的建设")
    roles = {c.ch: c.role for c in line.chars}
    assert roles["经"] == "cjk_fallback" and roles["1"] == "serif" and roles["，"] == "cjk_fallback"
    # Chromium: the line's slack shared around ideographs (28.83 px apart), digits not
    # stretched (17.81), and a share before an ideograph that follows a digit
    i = line.text.index("12号")
    assert [line.chars[k].x for k in (1, 2, i, i + 1)] == pytest.approx([88.83, 117.66, 434.77, 452.58], abs=0.02)
    assert line.chars[i + 2].x - line.chars[i + 1].x == pytest.approx(17.81 + 0.83, abs=0.02)
    assert line.text.endswith("共设车站13")
    heading = _line(layout, "地铁12号线")
    assert all(c.bold for c in heading.chars if c.role == "cjk_fallback")  # synthetic bold


def test_truth_is_the_text_drawn_and_a_code_line_past_the_block_is_cut_where_chromium_clips_it() -> None:
    long = "x = " + " + ".join(f"value_{i}" for i in range(20))
    doc = _doc(long + "\nprint(x)\n", "code_python")
    truth = paper_truth(doc).split("\n")
    # the block's padding box ends at 1540; its text starts at 85 and advances 16.857 px a
    # character: the 87th starts 5 px before the edge and shows in part
    assert truth[0] == long[:87] and truth[1] == "print(x)"
    runs, _ = paper_runs(doc)
    assert "".join(r.text for r in runs if r.line == 0) == long[:87]


def test_lists_get_bullets_drawn_as_shapes_and_numbers_as_text() -> None:
    layout, _ = paper_layout(_doc("- one\n- two\n\nAnd\n\n1. first\n2. second\n"))
    assert [r.shape for r in layout.rects] == ["disc", "disc"]
    disc = layout.rects[0]
    # Chromium: a 9 px disc at x 76..85, 15 px left of the item text (at 100)
    assert (disc.x0, disc.x1) == (76, 85)
    assert _line(layout, "1.").text == "1. first"
    assert _line(layout, "1.").chars[3].x == pytest.approx(100)


def test_pages_are_the_same_bytes_each_time_and_odd_input_still_makes_a_page() -> None:
    from shredfold.shred.paper.page import _layout

    doc = next(d for d in load_builtin("news_zh") if d.doc_id.endswith("01_metro_line"))
    first = render_paper(doc).image.tobytes()
    _layout.cache_clear()
    assert render_paper(doc).image.tobytes() == first
    for text in ("", "<script>x</script>", "<table><tr><td colspan='99999'>a</td></tr></table>", "x" * 5000):
        page = render_paper(_doc(text))
        assert page.image.size[0] == 1600 and page.image.size[1] >= 957
