"""A table's column rules, met across a slanting cut, fix the slide its rows cannot."""

from __future__ import annotations

import numpy as np

from shredfold.shred.solvers.jigsaw.crossings import crossings
from shredfold.shred.solvers.jigsaw.level import Levelled
from shredfold.shred.solvers.jigsaw.seam import RULE_WEIGHT, match
from shredfold.shred.solvers.jigsaw.straight import Edge

PITCH = 20.0
H, W = 420, 400
TILT = np.tan(np.deg2rad(30.0))
CUT_Y = 150.0


def cut_at(x: float) -> float:
    return CUT_Y + TILT * x


def bare_cells(drop: int, rules_above: list[tuple[float, float, float, float]],
               rules_below: list[tuple[float, float, float, float]]) -> tuple[Levelled, Levelled]:
    """A table's bare cells cut 30 degrees off its rows; the part below the cut lies in a
    frame ``drop`` px lower. No text lies along the cut and its ends are curled (no
    corners): only the rules can tell where the parts meet."""
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    above = ((yy + 0.5) < CUT_Y + TILT * (xx + 0.5)).astype(np.float32)
    top = Levelled(0, 0, np.eye(3), above, np.zeros_like(above),
                   [Edge(np.array([W, cut_at(W)]), np.array([0.0, CUT_Y]), 0.0, False, False)],
                   1.0, False, rules=np.array(rules_above, float).reshape(-1, 4))
    paper = np.zeros_like(above)
    paper[drop:] = (1.0 - above)[: H - drop]
    edge = Edge(np.array([0.0, CUT_Y + drop]), np.array([W, cut_at(W) + drop]), 0.0, False, False)
    below = np.array(rules_below, float).reshape(-1, 4) + [0.0, drop, 0.0, drop]
    return top, Levelled(1, 0, np.eye(3), paper, np.zeros_like(paper), [edge], 1.0, False,
                         rules=below)


def column(x: float, above: bool, gap: float = 2.0) -> tuple[float, float, float, float]:
    """A column rule at ``x`` running up to the cut from above (or down from it), ending
    ``gap`` px short of it (a rule is found a few px inside the paper)."""
    if above:
        return (x, 10.0, x, cut_at(x) - gap)
    return (x, cut_at(x) + gap, x, H - 10.0)


def test_two_column_rules_met_across_the_cut_put_the_parts_together() -> None:
    drop = 37
    top, bottom = bare_cells(drop, [column(100, True), column(260, True)],
                             [column(100, False), column(260, False)])
    seam = match(top, bottom, 0, 0, PITCH)
    assert seam is not None
    assert np.allclose(seam.pose[:2, 2], [0.0, -drop], atol=1.0), seam.pose
    # Nothing else speaks for the seam: its score is the two rules met.
    assert abs(seam.score - 2 * RULE_WEIGHT) < 0.1 * RULE_WEIGHT


def test_a_rule_that_stops_short_of_the_cut_counts_for_nothing() -> None:
    # Below the cut the second column's rule starts 40 px down (a cell spanning two
    # columns): one rule met, and it alone still fixes the slide.
    drop = 23
    top, bottom = bare_cells(drop, [column(100, True), column(260, True)],
                             [column(100, False), column(260, False, gap=40.0)])
    seam = match(top, bottom, 0, 0, PITCH)
    assert seam is not None
    assert np.allclose(seam.pose[:2, 2], [0.0, -drop], atol=1.0), seam.pose
    assert abs(seam.score - RULE_WEIGHT) < 0.1 * RULE_WEIGHT


def test_without_rules_the_bare_cut_has_no_say() -> None:
    top, bottom = bare_cells(37, [], [])
    seam = match(top, bottom, 0, 0, PITCH)
    assert seam is not None and seam.score <= 0.0


def test_a_rule_along_the_cut_crosses_it_nowhere() -> None:
    u = np.array([1.0, TILT]) / np.hypot(1.0, TILT)
    origin = np.array([0.0, CUT_Y])
    along = origin + 5.0 * np.array([-u[1], u[0]])  # 5 px off the cut, running with it
    lv = Levelled(0, 0, np.eye(3), np.ones((H, W), np.float32), np.zeros((H, W), np.float32),
                  [], 1.0, False,
                  rules=np.array([[*along, *(along + 200.0 * u)], column(100, True)]))
    found = crossings(lv, origin, u, np.eye(3))
    assert len(found) == 1
    # The column rule meets the cut where x = 100: 100 / cos(30 degrees) along it.
    assert abs(found[0].at - 100.0 / np.cos(np.deg2rad(30.0))) < 1e-6
