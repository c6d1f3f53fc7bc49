"""A scrap's faint printed rules level it where its few words cannot, and its column rules
are found for the seams to follow."""

from __future__ import annotations

import numpy as np
from paper_photos import PAPER, serif
from PIL import Image, ImageDraw
from test_level import scrap

from shredfold.shred.solvers.jigsaw.contour import PAPER_LEVEL
from shredfold.shred.solvers.jigsaw.ink import line_angle
from shredfold.shred.solvers.jigsaw.level import level
from shredfold.shred.solvers.jigsaw.rules import column_rules, rule_angle

RULE = (236, 234, 230)  # a 1 px #999 border, as faint as it comes out on the authors' photographs


def corner_of_a_table(words: bool = True, rules: bool = True) -> np.ndarray:
    """The top corner of a ruled table: two header cells and a figure, its borders faint."""
    im = Image.new("RGB", (420, 300), PAPER)
    draw = ImageDraw.Draw(im)
    if rules:
        for y in (40, 120, 200):
            draw.line([(10, y), (410, y)], fill=RULE, width=1)
        for x in (30, 220, 400):
            draw.line([(x, 10), (x, 290)], fill=RULE, width=1)
    if words:
        # One header cell's words, stacked: too little text to level the scrap by.
        font = serif(26, bold=True)
        draw.text((250, 65), "Avg", font=font, fill=(17, 17, 17))
        draw.text((250, 145), "F1", font=font, fill=(17, 17, 17))
    return np.asarray(im)


def direction(rgba: np.ndarray, hint: float) -> float | None:
    return rule_angle(rgba[..., :3], rgba[..., 3] >= PAPER_LEVEL * 255, hint)


def test_the_rules_give_the_page_direction_to_a_fraction_of_a_degree() -> None:
    rgba = scrap(corner_of_a_table(), 9.0)  # turned 9 degrees counter-clockwise
    # Lines of the page run at -9 degrees in image coordinates (y down), however roughly
    # the text guessed it (here 3 degrees out either way), and along or across.
    for hint in (-6.0, -12.0, 81.0):
        got = direction(rgba, hint % 180.0)
        assert got is not None
        assert abs((got - (-9.0) + 45.0) % 90.0 - 45.0) < 0.3, (hint, got)


def test_no_rules_no_answer_and_the_scraps_own_outline_is_no_rule() -> None:
    # The scrap's straight outline against the transparent table is left out.
    assert direction(scrap(corner_of_a_table(rules=False), 9.0), 171.0) is None
    # Rules far from the hint (more than 15 degrees) are not what the hint means.
    assert direction(scrap(corner_of_a_table(), 9.0), 150.0) is None


def test_a_scrap_of_few_words_is_levelled_by_its_rules() -> None:
    rgba = scrap(corner_of_a_table(), 9.0)
    by_text = line_angle(rgba, rgba[..., 3] >= PAPER_LEVEL * 255).degrees
    assert abs((by_text + 9.0 + 90.0) % 180.0 - 90.0) > 2.0  # the words alone: degrees out
    lv = level(rgba, 0)
    # The levelling turns the scrap back by the 9 degrees it was turned (or a quarter
    # turn more: which way the lines run is settled later, by reading).
    turn = float(np.degrees(np.arctan2(lv.pose[1, 0], lv.pose[0, 0])))
    assert abs((turn - 9.0 + 45.0) % 90.0 - 45.0) < 0.3, turn


def test_column_rules_are_the_long_faint_rules_square_to_the_lines() -> None:
    rgb = corner_of_a_table()
    paper = np.ones(rgb.shape[:2], np.float32)
    found = column_rules(rgb, paper)
    assert sorted(round((x0 + x1) / 2) for x0, _, x1, _ in found) == [30, 220, 400]
    for x0, y0, x1, y1 in found:
        assert abs(x1 - x0) < 0.5  # fitted straight
        assert y0 < 20 and y1 > 280  # the rule's whole run, a few px inside the paper
    # Words are no rules, nor is the paper's own edge.
    assert len(column_rules(corner_of_a_table(rules=False), paper)) == 0
    # Where the paper stops, so do the rules: only what lies well inside it is found.
    half = paper.copy()
    half[:, 200:] = 0.0
    xs = [round((x0 + x1) / 2) for x0, _, x1, _ in column_rules(rgb, half)]
    assert xs == [30]


def test_a_levelled_scrap_carries_its_rules_round_with_it() -> None:
    lv = level(scrap(corner_of_a_table(), 9.0), 0)
    assert len(lv.rules) == 3
    turned = lv.turned(1)
    for (x0, y0, x1, y1), (u0, v0, u1, v1) in zip(lv.rules, turned.rules, strict=True):
        # A quarter turn (np.rot90, counter-clockwise) lays a rule square to the lines
        # along them: x becomes y.
        assert abs((x1 - x0) - (v0 - v1)) < 1e-6 and abs((y1 - y0) - (u1 - u0)) < 1e-6
        h, w = lv.shape
        assert min(u0, u1) >= 0 and max(u0, u1) <= h and min(v0, v1) >= 0 and max(v0, v1) <= w
