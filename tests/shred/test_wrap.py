"""Line breaking: greedy Latin wrapping and the simple Chinese rules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shredfold.shred.wrap import CLOSING, OPENING, hard_wrap, wrap


def mono(s: str) -> float:
    """Every character one unit wide (CJK too): widths are easy to reason about."""
    return float(len(s))


def test_english_wraps_greedily_at_spaces() -> None:
    text = "the quick brown fox jumps over the lazy dog"
    assert wrap(text, mono, 15) == ["the quick brown", "fox jumps over", "the lazy dog"]


def test_word_longer_than_the_line_breaks_between_characters() -> None:
    assert wrap("a supercalifragilistic b", mono, 8) == ["a", "supercal", "ifragili", "stic b"]


def test_chinese_never_starts_a_line_with_closing_punctuation() -> None:
    text = "经过近十年的争论，市议会以七票对两票通过了计划（该计划曾多次被推迟）。“这是最重要的决定，”议员说。"
    for width in range(4, 30):
        lines = wrap(text, mono, width)
        assert "".join(lines) == text  # nothing lost, no spaces invented
        for line in lines:
            assert line[0] not in CLOSING, (width, line)
            assert line[-1] not in OPENING, (width, line)


def test_latin_runs_inside_chinese_stay_whole() -> None:
    lines = wrap("预算为4800万欧元，约合GDP的百分之一。", mono, 6)
    assert any("4800" in line for line in lines)
    assert any("GDP" in line for line in lines)


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.text("abcdefghij", min_size=1, max_size=12), min_size=1, max_size=30),
    width=st.integers(12, 60),
)
def test_wrapping_keeps_every_word_and_fits(words: list[str], width: int) -> None:
    lines = wrap(" ".join(words), mono, width)
    assert " ".join(lines).split() == words
    assert all(len(line) <= width for line in lines)


def test_code_hard_wrap_keeps_every_character() -> None:
    line = "    return some_function(argument_one, argument_two)"
    parts = hard_wrap(line, mono, 20)
    assert "".join(parts) == line
    assert [len(p) for p in parts] == [20, 20, len(line) - 40]
    assert hard_wrap("", mono, 20) == [""]
