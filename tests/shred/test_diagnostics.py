"""Failure diagnostics on a synthetic page whose omissions, insertions and swaps are known."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shredfold.shred.diagnostics import align, diagnose, kendall_tau

LINES = [
    "Harbor cranes lifted record cargo",
    "while gulls circled above quietly",
    "Engineers measured every tide gauge",
    "before dawn reached western piers",
]
CHAR_W, LINE_H = 10.0, 20.0
WIDTH = max(len(line) for line in LINES) * CHAR_W


def page(lines: list[str] = LINES) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """The skeleton of ``lines`` with a box per character (monospaced, one line per row)."""
    chars, boxes, line_of, words = [], [], [], []
    word = -1
    for i, line in enumerate(lines):
        prev_space = True
        for j, ch in enumerate(line):
            if ch == " ":
                prev_space = True
                continue
            if prev_space:
                word += 1
            prev_space = False
            chars.append(ch)
            boxes.append((j * CHAR_W, i * LINE_H, (j + 1) * CHAR_W, (i + 1) * LINE_H))
            line_of.append(i)
            words.append(word)
    return "".join(chars), np.asarray(boxes), np.asarray(line_of), np.asarray(words)


HEIGHT = len(LINES) * LINE_H
MID = WIDTH / 2 - 3  # between two characters' centres
AREA = WIDTH * HEIGHT


def split_at(x: float) -> list[list[list[float]]]:
    """Two pieces: left of x and right of x."""
    return [[[0, 0], [x, 0], [x, HEIGHT], [0, HEIGHT]], [[x, 0], [WIDTH, 0], [WIDTH, HEIGHT], [x, HEIGHT]]]


def answer_without(piece: int, x: float) -> str:
    truth, boxes, _, _ = page()
    centre = (boxes[:, 0] + boxes[:, 2]) / 2
    keep = centre >= x if piece == 0 else centre < x
    return "".join(c for c, k in zip(truth, keep, strict=True) if k)


def test_a_perfect_answer_has_no_failures() -> None:
    truth, boxes, lines, words = page()
    d = diagnose(truth, boxes, lines, words, split_at(MID), AREA, truth)
    assert d.omission == 0.0 and d.hallucination == 0.0 and d.order_tau == 1.0
    assert d.cut_words > 0 and d.cut_word_recovery == 1.0
    left = int(((boxes[:, 0] + boxes[:, 2]) / 2 < MID).sum())
    assert [p["chars"] for p in d.pieces] == [left, len(truth) - left]


def test_a_dropped_scrap_is_its_own_text_missing() -> None:
    truth, boxes, lines, words = page()
    d = diagnose(truth, boxes, lines, words, split_at(MID), AREA, answer_without(1, MID))
    assert [p["omission"] for p in d.pieces] == [0.0, 1.0]
    assert d.omission == 0.5
    assert d.hallucination == 0.0
    assert d.cut_word_recovery == 0.0  # every cut word lost its right-hand part
    assert d.order_tau == 1.0


def test_narrow_strips_dropped_show_in_the_small_half() -> None:
    truth, boxes, lines, words = page()
    strip = 6 * CHAR_W  # the left strip is 6 characters wide, the rest ~29
    d = diagnose(truth, boxes, lines, words, split_at(strip), AREA, answer_without(0, strip))
    assert d.omission_small == 1.0 and d.omission_large == 0.0
    assert d.pieces[0]["area"] == pytest.approx(strip / WIDTH, abs=1e-6)
    assert json.loads(d.columns()["piece_omission"])[0]["omission"] == 1.0  # type: ignore[arg-type]


def test_inserted_text_is_hallucination_and_a_misread_letter_is_not() -> None:
    truth, boxes, lines, words = page()
    line0 = len(LINES[0].replace(" ", ""))
    padded = truth[:line0] + "QXZVQXZV" + truth[line0:]
    d = diagnose(truth, boxes, lines, words, split_at(MID), AREA, padded)
    assert d.hallucination == pytest.approx(8 / len(padded))
    assert d.omission == 0.0
    misread = truth[:40] + "#" + truth[41:]
    m = diagnose(truth, boxes, lines, words, split_at(MID), AREA, misread)
    assert m.hallucination == 0.0
    assert 0 < sum(p["omission"] * p["chars"] for p in m.pieces) <= 3  # type: ignore[operator]


def test_swapped_lines_lower_kendall_tau_but_lose_no_text() -> None:
    truth, boxes, lines, words = page()
    swapped = "".join(line.replace(" ", "") for line in (LINES[0], LINES[2], LINES[1], LINES[3]))
    d = diagnose(truth, boxes, lines, words, split_at(MID), AREA, swapped)
    assert d.omission == 0.0 and d.hallucination == 0.0
    assert d.order_tau == pytest.approx(1 - 2 * 1 / 6)  # one discordant pair of six
    reversed_ = "".join(line.replace(" ", "") for line in reversed(LINES))
    assert diagnose(truth, boxes, lines, words, split_at(MID), AREA, reversed_).order_tau == pytest.approx(-1.0)


@pytest.mark.parametrize("seed", range(8))
def test_kendall_tau_is_scipys_tau_b_ties_included(seed: int) -> None:
    from scipy.stats import kendalltau

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    # Few distinct values, so both sides have ties (tau-b's correction matters).
    x, y = rng.integers(0, 6, n).tolist(), rng.integers(0, 6, n).astype(float).tolist()
    expected = kendalltau(x, y).statistic
    if np.isfinite(expected):
        assert kendall_tau(x, y) == pytest.approx(float(expected), abs=1e-12)
    else:
        assert kendall_tau(x, y) is None


def test_kendall_tau_is_none_for_constant_or_single_points() -> None:
    assert kendall_tau([1.0], [2.0]) is None
    assert kendall_tau([1, 2, 3], [5.0, 5.0, 5.0]) is None
    assert kendall_tau([1, 2, 3], [1.0, 2.0, 3.0]) == 1.0


def test_an_empty_answer_omits_everything_and_invents_nothing() -> None:
    truth, boxes, lines, words = page()
    d = diagnose(truth, boxes, lines, words, split_at(MID), AREA, "")
    assert d.omission == 1.0 and d.hallucination is None and d.order_tau is None
    assert d.cut_word_recovery == 0.0


def test_an_unrelated_answer_is_all_invented() -> None:
    truth, boxes, lines, words = page()
    d = diagnose(truth, boxes, lines, words, split_at(MID), AREA, "0123456789" * 5)
    assert d.hallucination == 1.0 and d.omission == 1.0


def test_alignment_keeps_only_runs_long_enough_to_trust() -> None:
    al = align("abcdefgh", "xaxcxexgx", tile=4, min_run=3)  # single shared letters: chance
    assert (al.t2a == -1).all() and al.inserted.all()
    al = align("abcdefgh", "efghabcd", tile=3, min_run=3)  # two moved blocks: both found
    assert list(al.t2a) == [4, 5, 6, 7, 0, 1, 2, 3] and not al.inserted.any()


def test_scraps_read_in_another_order_are_moved_text_not_lost_text() -> None:
    truth, boxes, lines, words = page()
    right_first = answer_without(0, MID) + answer_without(1, MID)
    d = diagnose(truth, boxes, lines, words, split_at(MID), AREA, right_first)
    assert d.omission == 0.0 and d.hallucination == 0.0
    assert d.cut_word_recovery == 0.0  # the halves of each cut word now stand apart


def test_scattered_misreadings_cost_little_and_invent_nothing() -> None:
    truth, boxes, lines, words = page()
    noisy = "".join("#" if i % 11 == 5 else c for i, c in enumerate(truth))
    d = diagnose(truth, boxes, lines, words, split_at(MID), AREA, noisy)
    assert d.hallucination == 0.0
    assert 0.05 < d.omission < 0.15  # one character in 11 misread  # type: ignore[operator]
    assert d.order_tau == 1.0
