"""Rows of recognised boxes and code indentation: the one rule the OCR reader and jigsaw's
page reader share (shredfold.shred.ocr.rows)."""

from __future__ import annotations

from shredfold.shred.ocr.reader import OcrLine
from shredfold.shred.ocr.rows import group_rows, indents
from shredfold.shred.solvers.jigsaw.words import Word, format_text


def box(text: str, x0: float, y0: float, x1: float, y1: float) -> OcrLine:
    return OcrLine(text, (x0, y0, x1, y1), 1.0)


def texts(rows: list[list[OcrLine]] | list[list[Word]]) -> list[list[str]]:
    return [[b.text for b in row] for row in rows]


def test_boxes_come_back_row_by_row_each_left_to_right() -> None:
    given = [
        box("world", 60, 41, 110, 61),
        box("hello", 0, 40, 50, 60),
        box("first", 0, 0, 45, 20),
        box("line", 50, 1, 85, 21),
    ]
    assert texts(group_rows(given)) == [["first", "line"], ["hello", "world"]]


def test_a_box_set_a_little_high_stays_on_its_row() -> None:
    # A detector box often sits a few px off its neighbours (a word without descenders).
    given = [box("x = f(a,", 0, 100, 80, 124), box("b)", 90, 106, 110, 124)]
    assert texts(group_rows(given)) == [["x = f(a,", "b)"]]


def test_a_tall_stray_box_does_not_chain_two_lines() -> None:
    # A bracket drawn across two 20 px lines, boxed on its own. Growing a row's extent
    # would take it into the first line and then the second line into that row; by
    # centres it is a row of its own, and the two lines stay apart.
    given = [
        box("alpha", 20, 0, 80, 20),
        box("beta", 20, 26, 70, 46),
        box("(", 0, 5, 10, 45),
    ]
    assert texts(group_rows(given)) == [["alpha"], ["("], ["beta"]]


def test_a_row_is_judged_by_its_median_height_not_its_tallest_box() -> None:
    # A tall box joined to a row of short ones does not widen the row's reach downwards.
    given = [
        box("a", 0, 0, 10, 20),
        box("b", 20, 0, 30, 20),
        box("{", 40, -10, 50, 30),
        box("next", 0, 14, 40, 34),
    ]
    assert texts(group_rows(given)) == [["a", "b", "{"], ["next"]]


def test_jigsaw_words_are_grouped_by_the_same_rule() -> None:
    words = [
        Word("alpha", 20, 0, 80, 20, 1.0),
        Word("beta", 20, 26, 70, 46, 1.0),
        Word("(", 0, 5, 10, 45, 1.0),
    ]
    assert texts(group_rows(words)) == [["alpha"], ["("], ["beta"]]
    assert format_text(words, "prose") == "alpha\n(\nbeta"


def test_indents_count_columns_from_the_least_indented_row() -> None:
    # 10 px columns; the least indented row is column 0 whatever its x.
    assert indents([30.0, 70.0, 110.0, 71.0, 30.0], 10.0) == [0, 4, 8, 4, 0]


def test_indents_round_to_the_nearest_column() -> None:
    assert indents([5.0, 19.0, 26.0], 10.0) == [0, 1, 2]


def test_without_a_column_width_nothing_is_indented() -> None:
    assert indents([0.0, 40.0], None) == [0, 0]
    assert indents([], 10.0) == []


def test_jigsaw_code_is_indented_from_word_left_edges() -> None:
    words = [
        Word("def f():", 100, 0, 180, 20, 1.0),
        Word("return 1", 140, 30, 220, 50, 1.0),
    ]
    assert format_text(words, "code", cw=10.0) == "def f():\n    return 1"


def test_a_seam_read_as_a_lone_stroke_neither_indents_the_code_nor_stays_in_it() -> None:
    words = [
        Word("1", 20, 2, 28, 22, 0.6),  # a seam's dark rim, left of the page's text
        Word("def f():", 100, 0, 180, 20, 1.0),
        Word("return 1", 140, 30, 220, 50, 1.0),
        Word("|", 400, 60, 404, 80, 0.7),  # a curled rim, right of it
        Word("}", 100, 60, 110, 80, 0.9),  # a brace on its own line is code
    ]
    assert format_text(words, "code", cw=10.0) == "def f():\n    return 1\n}"
    # A seam beside a rim reads as two strokes at once: as lone, as much a seam.
    words = [Word("11", 17, 30, 29, 96, 0.5), Word("def f():", 100, 0, 180, 20, 1.0),
             Word("return 1", 140, 30, 220, 50, 1.0)]
    assert format_text(words, "code", cw=10.0) == "def f():\n    return 1"
    # A seam down the right of the page, read as a chain of strokes that touch each other.
    chain = [Word("1", 900, 0, 908, 40, 0.5), Word("—", 900, 38, 911, 60, 0.4),
             Word("1.", 899, 58, 910, 96, 0.5)]
    assert format_text(words[1:] + chain, "code", cw=10.0) == "def f():\n    return 1"
    # A stroke next to other words is text: "x = a - b" keeps its minus.
    words = [Word("x = a", 100, 0, 150, 20, 1.0), Word("-", 160, 0, 170, 20, 1.0),
             Word("b", 180, 0, 190, 20, 1.0)]
    assert format_text(words, "code", cw=10.0) == "x = a - b"
