"""Where a line may break and where justification may add space, as Blink decides."""

from __future__ import annotations

from shredfold.shred.paper.breaks import break_before, expansions
from shredfold.shred.paper.shaping import collapsed_marks, punctuation_classes


def _pieces(text: str) -> list[str]:
    ok = break_before(text)
    cuts = [0, *(i for i in range(1, len(text)) if ok[i]), len(text)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]


def test_latin_breaks_after_spaces_and_hyphens_but_not_slashes_or_minus_signs() -> None:
    assert _pieces("a well-known and/or x -3 ABC-123 1990-2000 why?yes") == [
        "a ", "well-", "known ", "and/or ", "x ", "-3 ", "ABC-", "123 ", "1990-", "2000 ", "why?", "yes",
    ]  # fmt: skip
    assert _pieces("end.(aside) f(x)") == ["end.", "(aside) ", "f(x)"]
    assert _pieces("no\u00a0break here") == ["no\u00a0break ", "here"]


def test_dashes_and_quotes_follow_icu() -> None:
    assert _pieces("one\u2014two \u201cquoted\u201d") == ["one", "\u2014", "two ", "\u201cquoted\u201d"]


def test_chinese_breaks_between_characters_but_not_before_closing_or_after_opening_marks() -> None:
    assert _pieces("中文，测试。（括号）") == ["中", "文，", "测", "试。", "（括", "号）"]


def test_justification_spreads_at_spaces_and_around_ideographs_but_not_at_the_ends() -> None:
    assert expansions("ab cd") == [(0, 0), (0, 0), (0, 1), (0, 0), (0, 0)]
    # the first ideograph takes no space before it, one after a digit does, the last none after
    assert expansions("经过12号") == [(0, 1), (0, 1), (0, 0), (0, 0), (1, 0)]
    assert expansions("end ") == [(0, 0), (0, 0), (0, 0), (0, 0)]


def test_adjacent_full_width_marks_collapse_in_noto_sans_cjk() -> None:
    classes = punctuation_classes("cjk_fallback")
    assert classes.has_halt and classes.dot == "close" and not classes.quotes_fullwidth
    assert punctuation_classes("serif").has_halt is False
    # a full stop before a closing quote, a closing bracket before a full stop: the first is
    # set half-width; an opening bracket after a closing mark: the second
    assert collapsed_marks("子。\u201d", 0, 2, "cjk_fallback") == {1: (False, True)}
    assert collapsed_marks("）。（", 0, 3, "cjk_fallback") == {0: (False, True), 2: (True, False)}
    assert collapsed_marks("中文", 0, 2, "cjk_fallback") == {}
