"""A read page written back as the Markdown it was set from (what the paper's protocol
scores against): headings by type size, paragraphs by the gaps between lines, lines that
stop short kept as hand breaks, bold runs by stroke weight, code fenced, tables as HTML."""

from __future__ import annotations

import numpy as np
from paper_photos import CJK, LATIN, page

from shredfold.shred.solvers.jigsaw.markdown import (
    is_cjk,
    looks_like_code,
    page_markdown,
    pages_markdown,
    snap_indents,
)
from shredfold.shred.solvers.jigsaw.words import Word


def test_a_page_set_from_markdown_is_written_back_as_that_markdown() -> None:
    pg = page(LATIN)
    assert page_markdown(pg.rgb, pg.words) == pg.source
    assert pg.source.startswith("# Harbour Ferry Returns\n\n**Date:** 2025-12-21\n\nThe harbour")


def test_cjk_lines_run_together_without_spaces() -> None:
    pg = page(CJK, cjk=True)
    assert page_markdown(pg.rgb, pg.words) == pg.source
    assert is_cjk("港口渡轮于周一") and not is_cjk("Harbour ferry")


def test_heading_levels_follow_the_type_size() -> None:
    blocks = [("p", "Body text set at the body size, a line long enough to measure well.")]
    pg = page(blocks)
    top = 300  # room above the body line for the heading
    first = pg.words[0]
    body = Word(first.text, first.x0, first.y0 + top, first.x1, first.y1 + top, 1.0)
    for factor, mark in ((2.2, "#"), (1.8, "##"), (1.4, "###")):
        # A heading above the body, set ``factor`` times larger: its box and its letters'
        # core band that much taller, each letter that much wider.
        h = body.height * factor
        head = Word("A heading set larger", body.x0, body.y0 - 3 * h,
                    body.x0 + (body.x1 - body.x0) * factor * 20 / len(body.text), body.y0 - 2 * h,
                    1.0)
        rgb = np.vstack([np.full((top, pg.rgb.shape[1], 3), 250, np.uint8), pg.rgb])
        x0, y0, x1, y1 = (int(v) for v in (head.x0, max(head.y0, 0), head.x1, head.y1))
        core = (y1 - y0) // 2
        rgb[y0 + core // 2 : y0 + core // 2 + core, x0:x1:3] = 20  # letters filling the band
        out = page_markdown(rgb, [head, body])
        assert out.split("\n\n")[0] == f"{mark} A heading set larger", (factor, out)


def test_a_line_that_stops_short_inside_a_paragraph_is_a_hand_break() -> None:
    pg = page(LATIN)
    lines = [w for w in pg.words if w.text.startswith(("The harbour", "weeks of"))]
    first, second = lines
    short = Word("The harbour ferry returned", first.x0, first.y0, first.x0 + 300, first.y1, 1.0)
    out = page_markdown(pg.rgb, [short, second])
    assert out == "The harbour ferry returned\n" + second.text


def test_a_line_wrapped_after_a_hyphen_joins_the_next_without_a_space() -> None:
    pg = page(LATIN)
    first, second = [w for w in pg.words if w.text.startswith(("The harbour", "weeks of"))]
    # The browser broke "six-week" at its hyphen: the two halves are one word again.
    broke = Word(first.text.rsplit(" ", 1)[0] + " six-", first.x0, first.y0, first.x1,
                 first.y1, 1.0)
    out = page_markdown(pg.rgb, [broke, second])
    assert out == broke.text + second.text
    # A dash standing alone between words keeps its spaces.
    dash = Word(first.text + " -", first.x0, first.y0, first.x1, first.y1, 1.0)
    assert page_markdown(pg.rgb, [dash, second]) == dash.text + " " + second.text


def test_program_text_is_a_fenced_code_block_with_its_indentation() -> None:
    code = ["def area(r):", "    return 3.14 * r * r", "", "print(area(2))"]
    words = []
    for k, line in enumerate(code):
        if line.strip():
            indent = len(line) - len(line.lstrip())
            words.append(Word(line.strip(), 40 + 14 * indent, 40 + 30 * k,
                              40 + 14 * len(line), 62 + 30 * k, 1.0))
    assert looks_like_code(words)
    rgb = np.full((200, 600, 3), 250, np.uint8)
    assert page_markdown(rgb, words) == "```\ndef area(r):\n    return 3.14 * r * r\nprint(area(2))\n```"


def code_words(code: list[str], top: int = 40) -> list[Word]:
    words = []
    for k, line in enumerate(code):
        if line.strip():
            indent = len(line) - len(line.lstrip())
            words.append(Word(line.strip(), 40 + 14 * indent, top + 30 * k,
                              40 + 14 * len(line), top + 22 + 30 * k, 1.0))
    return words


def test_code_read_in_parts_is_one_fenced_block() -> None:
    # Only an answer's longest fenced block is scored: two parts of a page that did not
    # come together go in one block, in the order given.
    rgb = np.full((200, 600, 3), 250, np.uint8)
    first = code_words(["class Cache {", "    int size() {", "        return n;"])
    second = code_words(["    }", "}"])
    out = pages_markdown([(rgb, first), (rgb, second)])
    assert out == "```\nclass Cache {\n    int size() {\n        return n;\n    }\n}\n```"
    assert out.count("```") == 2


def test_prose_read_in_parts_is_the_parts_blocks_in_order() -> None:
    pg = page(LATIN)
    half = len(pg.words) // 2
    head, rest = pg.words[:half], pg.words[half:]
    out = pages_markdown([(pg.rgb, rest), (pg.rgb, head)])
    assert out == page_markdown(pg.rgb, rest) + "\n\n" + page_markdown(pg.rgb, head)
    # The parts keep the order given: the heading, in the second part, comes after.
    assert "```" not in out and out.index("# Harbour Ferry Returns") > 0


def test_a_part_that_looks_like_code_beside_prose_is_not_fenced() -> None:
    # A corner of a page read on its own ("109", "0", "(sn") looks like code; fenced, it
    # would be all of the answer that is scored.
    pg = page(LATIN)
    corner = code_words(["109", "0", "(sn"])
    assert looks_like_code(corner) and not looks_like_code([*pg.words, *corner])
    out = pages_markdown([(pg.rgb, pg.words), (pg.rgb, corner)])
    assert "```" not in out
    assert out.startswith(page_markdown(pg.rgb, pg.words) + "\n\n")
    assert out.split()[-2:] == ["109", "(sn"]  # a lone mark on its own line is a speck


def test_indents_a_column_off_a_step_are_put_on_it() -> None:
    drifted = "class A:\n    def f(self):\n         return 1\n   def g(self):\n        pass"
    assert snap_indents(drifted) == (
        "class A:\n    def f(self):\n        return 1\n    def g(self):\n        pass")
    # Two columns off (a continuation lined up under a bracket) stays; and code whose
    # indents are mostly not whole steps is left as read.
    assert snap_indents("f(a,\n  b)\n    c") == "f(a,\n  b)\n    c"
    assert snap_indents("a\n  b\n   c\n     d") == "a\n  b\n   c\n     d"


def test_prose_is_not_taken_for_code() -> None:
    assert not looks_like_code(page(LATIN).words)
    assert not looks_like_code(page(CJK, cjk=True).words)


def ruled_grid() -> tuple[np.ndarray, list[Word]]:
    """A drawn 3 x 2 grid of rules and its six cells' words."""
    rgb = np.full((260, 620, 3), 250, np.uint8)
    ys, xs = [20, 90, 160, 230], [20, 300, 600]
    for y in ys:
        rgb[y : y + 2, 20:602] = 60
    for x in xs:
        rgb[20:232, x : x + 2] = 60
    words = [Word(t, x + 20, y + 20, x + 120, y + 48, 1.0)
             for t, (x, y) in zip(["Station", "Platform", "Harbour", "2", "Airport", "3"],
                                  [(xs[c], ys[r]) for r in range(3) for c in range(2)], strict=True)]
    return rgb, words


def test_a_ruled_grid_is_a_table_written_as_html() -> None:
    rgb, words = ruled_grid()
    html = page_markdown(rgb, words)
    assert html.startswith("<table>") and html.endswith("</table>")
    assert "<td>Harbour</td><td>2</td>" in html and "<td>Airport</td><td>3</td>" in html


def test_a_table_read_in_parts_leads_with_its_largest_ruled_part() -> None:
    # Only an answer's first table is scored: a corner of the grid given first, or a column
    # of names cut off it, must not stand in for the part that holds most of the table.
    rgb, words = ruled_grid()
    corner = np.full((200, 330, 3), 250, np.uint8)
    for y in (10, 90, 170):
        corner[y : y + 2, 10:322] = 60
    for x in (10, 160, 320):
        corner[10:172, x : x + 2] = 60
    figures = [Word("57", 30, 20, 70, 48, 1.0)]
    names = np.full((200, 300, 3), 250, np.uint8)
    column = [Word(t, 20, 20 + 60 * k, 200, 48 + 60 * k, 1.0)
              for k, t in enumerate(["Riverton Rovers", "Port Ellis United", "Causeway Town"])]
    parts = [(names, column), (corner, figures), (rgb, words)]
    out = pages_markdown(parts)
    assert out.startswith(page_markdown(rgb, words) + "\n\n")
    # The others follow in the order given, each as it reads.
    rest = out.split("\n\n", 1)[1]
    assert rest == page_markdown(names, column) + "\n\n" + page_markdown(corner, figures)
    assert rest.startswith("Riverton Rovers") and rest.endswith("</table>")
