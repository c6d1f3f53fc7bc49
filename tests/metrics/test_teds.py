"""TEDS / TEDS-S and table text, with values worked out by hand."""

import pytest

from shredfold.metrics.teds import table_scores, teds, teds_s
from shredfold.tables import find_table, table_text

# table, thead, tr, 2 x td, tbody, 2 x (tr, 2 x td) = 12 nodes.
REF = (
    "<table><thead><tr><th>Name</th><th>Qty</th></tr></thead>"
    "<tbody><tr><td>apple</td><td>3</td></tr><tr><td>pear</td><td>10</td></tr></tbody>"
    "</table>"
)
MARKDOWN = "| Name | Qty |\n|:-----|----:|\n| apple | 3 |\n| pear | 10 |"


def test_identical_tables_score_one() -> None:
    assert teds(REF, REF) == 1.0
    assert teds_s(REF, REF) == 1.0


def test_changed_cell_text_lowers_teds_but_not_teds_s() -> None:
    pred = REF.replace("<td>10</td>", "<td>12</td>")
    # One rename of "10" -> "12": normalised Levenshtein 1/2, over 12 nodes.
    assert teds(pred, REF) == pytest.approx(1 - 0.5 / 12)
    assert teds_s(pred, REF) == 1.0


def test_teds_s_is_teds_with_structure_only() -> None:
    pred = REF.replace("<td>10</td>", "<td>12</td>")
    assert teds(pred, REF, structure_only=True) == teds_s(pred, REF) == 1.0


def test_removed_row_lowers_both() -> None:
    pred = REF.replace("<tr><td>pear</td><td>10</td></tr>", "")
    # Deleting a tr and its two cells costs 3.
    assert teds(pred, REF) == pytest.approx(1 - 3 / 12)
    assert teds_s(pred, REF) == pytest.approx(1 - 3 / 12)


def test_span_change_costs_a_rename() -> None:
    ref = "<table><tr><td colspan='2'>total</td></tr><tr><td>a</td><td>b</td></tr></table>"
    pred = "<table><tr><td>total</td></tr><tr><td>a</td><td>b</td></tr></table>"
    # table, tbody, tr, td, tr, td, td = 7 nodes; colspan differs -> rename costs 1.
    assert teds_s(pred, ref) == pytest.approx(1 - 1 / 7)


def test_markdown_equals_equivalent_html() -> None:
    assert teds(MARKDOWN, REF) == 1.0
    assert teds_s(MARKDOWN, REF) == 1.0


def test_table_is_found_inside_prose_and_code_fences() -> None:
    answer = f"Here is the table I read:\n\n```markdown\n{MARKDOWN}\n```\n\nHope this helps."
    assert teds(answer, REF) == 1.0
    html_answer = f"Sure!\n```html\n{REF}\n```"
    assert table_scores(html_answer, REF) == {
        "teds": 1.0, "teds_s": 1.0, "truncated": False, "truncation": ""
    }


def test_html_variants_are_canonicalised() -> None:
    # No thead/tbody and th header cells: the same table as REF.
    bare = (
        "<TABLE><tr><th>Name</th><th>Qty</th></tr><tr><td>apple</td><td>3</td></tr>"
        "<tr><td>pear</td><td>10</td></tr></TABLE>"
    )
    assert teds(bare, REF) == 1.0


def test_no_table_scores_zero() -> None:
    assert teds("I cannot read this image.", REF) == 0.0
    assert teds_s("", REF) == 0.0


def test_reference_must_be_a_table() -> None:
    with pytest.raises(ValueError):
        teds(REF, "not a table")


def test_table_text_reading_order() -> None:
    assert table_text(REF) == "Name | Qty\napple | 3\npear | 10"
    assert table_text(MARKDOWN) == table_text(REF)
    merged = "<table><tr><td rowspan='2'>x</td><td>a</td></tr><tr><td>b</td></tr></table>"
    # A merged cell's text appears once, where it starts.
    assert table_text(merged) == "x | a\nb"


def test_markdown_escaped_pipes_and_inline_markup() -> None:
    table = find_table("| **op** | meaning |\n|---|---|\n| `a \\| b` | or |")
    assert table is not None
    assert [c.text for c in table.head[0]] == ["op", "meaning"]
    assert [c.text for c in table.body[0]] == ["a | b", "or"]


def test_rowspan_is_part_of_the_structure() -> None:
    ref = "<table><tr><td rowspan='2'>x</td><td>a</td></tr><tr><td>b</td></tr></table>"
    pred = "<table><tr><td>x</td><td>a</td></tr><tr><td>b</td></tr></table>"
    # table, tbody, tr, td, td, tr, td = 7 nodes; the rowspan differs -> one rename: 1 - 1/7.
    assert teds_s(pred, ref) == pytest.approx(1 - 1 / 7)
    assert teds(pred, ref) == pytest.approx(1 - 1 / 7)
    assert teds_s(ref, ref) == 1.0


def test_teds_divides_by_the_larger_tree() -> None:
    one = "<table><tr><td>a</td></tr></table>"
    three = "<table><tr><td>a</td></tr><tr><td>b</td></tr><tr><td>c</td></tr></table>"
    # one: table, tbody, tr, td = 4 nodes; three: table, tbody, 3 x (tr, td) = 8 nodes.
    # The cheapest edit deletes the rows "b" and "c" (2 nodes each): TED = 4, and
    # TEDS = 1 - 4 / max(8, 4) = 0.5 in both directions (dividing by the reference's
    # 4 nodes would give 0 for three rows against one).
    assert teds(three, one) == pytest.approx(0.5)
    assert teds(one, three) == pytest.approx(0.5)
    assert teds_s(three, one) == teds_s(one, three) == pytest.approx(0.5)


def test_a_cell_text_edit_costs_its_normalised_levenshtein() -> None:
    ref = "<table><tr><td>abcd</td><td>x</td></tr></table>"
    pred = "<table><tr><td>abXY</td><td>x</td></tr></table>"
    # 5 nodes; rename "abcd" -> "abXY" costs 2/4.
    assert teds(pred, ref) == pytest.approx(1 - 0.5 / 5)
    # A head cell and a body cell with the same text are different nodes (thead vs tbody).
    head = "<table><thead><tr><th>x</th></tr></thead></table>"
    body = "<table><tbody><tr><td>x</td></tr></tbody></table>"
    assert teds(head, body) == pytest.approx(1 - 1 / 4)  # rename thead -> tbody


def test_an_empty_table_against_a_table() -> None:
    # "<table></table>": 1 node; REF: 12 nodes; TED = 11 insertions -> 1 - 11/12.
    assert teds("<table></table>", REF) == pytest.approx(1 / 12)
