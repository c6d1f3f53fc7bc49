"""Finding a table in an answer and reading it into the canonical form."""

from __future__ import annotations

import dataclasses

import pytest

from shredfold.tables import Cell, Table, find_table, parse_html, parse_markdown


def cells(table: Table) -> list[list[tuple[str, int, int]]]:
    return [[(c.text, c.colspan, c.rowspan) for c in row] for row in table.rows]


@pytest.mark.parametrize(
    "value,span", [("2", 2), ("10", 10), ("0", 1), ("-3", 1), ("", 1), ("two", 1), ("9" * 5000, 1)]
)
def test_spans_that_are_not_positive_integers_read_as_one(value: str, span: int) -> None:
    table = parse_html(f'<table><tr><td colspan="{value}" rowspan="{value}">x</td></tr></table>')
    assert cells(table) == [[("x", span, span)]]


def test_a_cell_without_spans_spans_one() -> None:
    assert cells(parse_html("<table><tr><td>x</td></tr></table>")) == [[("x", 1, 1)]]


def test_leading_all_th_rows_become_the_head_only_without_a_thead() -> None:
    t = parse_html("<table><tr><th>a</th><th>b</th></tr><tr><th>c</th><td>1</td></tr></table>")
    # The second row mixes th and td: a body row.
    assert [[c.text for c in r] for r in t.head] == [["a", "b"]]
    assert [[c.text for c in r] for r in t.body] == [["c", "1"]]
    # An empty first row stops the search for head rows.
    t = parse_html("<table><tr></tr><tr><th>a</th></tr></table>")
    assert t.head == () and len(t.body) == 2
    # With a thead, th rows in the body stay body rows.
    t = parse_html("<table><thead><tr><td>h</td></tr></thead><tr><th>b</th></tr></table>")
    assert [[c.text for c in r] for r in t.head] == [["h"]]
    assert [[c.text for c in r] for r in t.body] == [["b"]]


def test_tbody_and_tfoot_rows_are_body_rows_in_order() -> None:
    t = parse_html(
        "<table><tfoot><tr><td>f</td></tr></tfoot><tbody><tr><td>b</td></tr></tbody>"
        "<tr><td>loose</td></tr><caption>no</caption></table>"
    )
    assert [[c.text for c in r] for r in t.body] == [["f"], ["b"], ["loose"]]


def test_cell_text_is_nfkc_and_whitespace_collapsed_and_nested_tables_flatten() -> None:
    t = parse_html("<table><tr><td>  ﬁ\n  x  </td><td><table><tr><td>in</td></tr></table> y</td></tr></table>")
    assert [c.text for c in t.body[0]] == ["fi x", "in y"]


def test_no_table_in_a_fragment_is_an_error() -> None:
    with pytest.raises(ValueError, match="no <table>"):
        parse_html("<div>nothing</div>")


def test_markdown_needs_its_delimiter_row_and_stops_at_the_first_non_row() -> None:
    with pytest.raises(ValueError, match="delimiter"):
        parse_markdown(["| a | b |", "| 1 | 2 |"])
    with pytest.raises(ValueError):
        parse_markdown(["| a |"])
    t = parse_markdown(["| a | b |", "|---|---|", "| 1 | 2 |", "", "| 3 | 4 |"])
    assert [[c.text for c in r] for r in t.rows] == [["a", "b"], ["1", "2"]]
    t = parse_markdown(["a | b", "--- | ---", "1 | 2", "prose after"])
    assert [[c.text for c in r] for r in t.rows] == [["a", "b"], ["1", "2"]]


def test_the_first_table_wins_whichever_its_syntax() -> None:
    md = "| m |\n|---|\n| 1 |"
    html = "<table><tr><td>h</td></tr></table>"
    assert cells(find_table(f"{md}\n\n{html}")) == [[("m", 1, 1)], [("1", 1, 1)]]
    assert cells(find_table(f"{html}\n\n{md}")) == [[("h", 1, 1)]]
    assert find_table("a heading\n---\ntext") is None  # a rule under a line is no table
    assert find_table("no table here") is None


def test_tables_are_values() -> None:
    t = Table(head=((Cell("a"),),), body=())
    assert t == Table(head=((Cell("a"),),), body=()) and hash(t) == hash(Table(head=((Cell("a"),),), body=()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.head = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Cell("a").text = "b"  # type: ignore[misc]


def test_markdown_rows_split_on_unescaped_pipes_only() -> None:
    t = parse_markdown(["| a | b \\|", "|---|---|", "x | y"])
    assert [[c.text for c in r] for r in t.rows] == [["a", "b |"], ["x", "y"]]
    t = parse_markdown(["a|b|", "-|-", "**1**|`2`<br>3"])
    assert [[c.text for c in r] for r in t.rows] == [["a", "b"], ["1", "2 3"]]


def test_html_wins_a_tie_and_a_tag_that_only_looks_like_a_table_falls_back() -> None:
    # Both "tables" start at offset 0: the HTML one is taken.
    t = find_table("<table><tr><td>a|b</td></tr></table>\n|---|---|")
    assert cells(t) == [[("a|b", 1, 1)]]
    # "<table-of-contents>" matches <table\b but holds no <table> element: Markdown wins.
    t = find_table("<table-of-contents>\n| a |\n|---|\n| 1 |")
    assert cells(t) == [[("a", 1, 1)], [("1", 1, 1)]]


def test_a_markdown_table_may_have_a_head_and_no_body() -> None:
    t = parse_markdown(["| a | b |", "|---|---|"])
    assert [[c.text for c in r] for r in t.head] == [["a", "b"]] and t.body == ()
    assert cells(find_table("| a |\n|---|")) == [[("a", 1, 1)]]
