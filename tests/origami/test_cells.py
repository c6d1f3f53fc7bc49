import math
from types import SimpleNamespace

import numpy as np
import pytest

from shredfold.origami import cells
from shredfold.origami.folded import fold_geometry
from shredfold.origami.pattern import CreasePattern

BORDER = [((0, 0), (1, 0)), ((1, 0), (1, 1)), ((1, 1), (0, 1)), ((0, 1), (0, 0))]


def folded_square():
    segs = [*BORDER, ((0.5, 0), (0.5, 1))]
    return fold_geometry(CreasePattern.from_segments(np.array(segs, float), ["B"] * 4 + ["V"]))


def scan_with_counts(monkeypatch, points_at):
    """Run the stability scan on arrangements whose point counts are ``points_at[k]`` at
    the distance d / 2^k (d: the shortest edge); returns the k chosen (None: no stable run)
    and the k's arranged, in order."""
    geometry = folded_square()
    segs = np.take(geometry.vertices, geometry.pattern.edges, axis=0)
    d = float(np.hypot(*(segs[:, 1] - segs[:, 0]).T).min())
    arranged = []

    def fake_arrange(_segments, eps):
        k = round(math.log2(d / eps))
        arranged.append(k)
        n = points_at.get(k, points_at[max(points_at)])
        return SimpleNamespace(points=np.zeros((n, 2)), edges=np.zeros((n, 2), np.int64))

    monkeypatch.setattr(cells, "arrange", fake_arrange)
    found = cells.stable_arrangement(geometry)
    return (None if found is None else round(math.log2(d / found[0]))), arranged


def test_counts_equal_from_the_start_take_two_arrangements(monkeypatch):
    chosen, arranged = scan_with_counts(monkeypatch, {k: 40 for k in range(3, 40)})
    assert (chosen, arranged) == (6, [3, 6])


@pytest.mark.parametrize(
    ("counts", "chosen", "arranged"),
    [
        # 187_fung_Heart_in_a_House's points from d/8 down: the change from d/32 to d/64
        # rules out every start before d/64, so d/16 and d/32 are never tried as starts
        ([142, 142, 144, 145, 145, 145, 145], 9, [3, 6, 5, 9]),
        # a change just past the start: the run starts one step on
        ([10, 12, 12, 12, 12], 7, [3, 6, 5, 4, 7]),
        # counts growing for a while (220_fung_Portrait_of_an_Origamist)
        ([221, 242, 248, 254, 257, 259, 259, 259, 259], 11, [3, 6, 5, 9, 8, 7, 11]),
    ],
)
def test_the_scan_chooses_the_end_of_the_first_run_of_four_equal_counts(monkeypatch, counts, chosen, arranged):
    points_at = {3 + i: c for i, c in enumerate(counts)}
    assert scan_with_counts(monkeypatch, points_at) == (chosen, arranged)


def test_counts_that_quadruple_give_no_stable_run(monkeypatch):
    chosen, _ = scan_with_counts(monkeypatch, {k: 10 * 2**k for k in range(3, 60)})
    assert chosen is None
