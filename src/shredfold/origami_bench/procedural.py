"""Seeded random simple-fold sequences: procedural designs with a ground-truth fold sequence.

A simple fold folds every layer along one line. Candidate lines are the ones a person would
choose: through two corners of the folded outline, or the crease that lays one corner onto
another (their perpendicular bisector). Pure: a generator and a count in, actions out.
"""

from __future__ import annotations

import numpy as np
import shapely

from shredfold.origami import FoldState, fold, folded_silhouette, square_sheet
from shredfold.origami_bench.design import SimpleFold

# A fold must change the outline by at least this share of the sheet and leave at least
# the second share, so that every step is visible in a 256-pixel picture.
MIN_CHANGE = 0.03
MIN_AREA = 0.08


def outline_corners(state: FoldState) -> np.ndarray:
    """Corners of the folded outline (exterior rings of the silhouette)."""
    sil = folded_silhouette(state.geometry).simplify(1e-9)
    rings = [np.asarray(p.exterior.coords)[:-1] for p in getattr(sil, "geoms", [sil])]
    return np.concatenate(rings) if rings else np.zeros((0, 2))


def candidate_lines(state: FoldState) -> list[tuple[np.ndarray, np.ndarray]]:
    """Lines through two outline corners, and perpendicular bisectors of two corners."""
    return corner_pair_lines(outline_corners(state))


def corner_pair_lines(pts: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each pair of distinct corners: the line through both, and their perpendicular
    bisector."""
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for i in range(len(pts)):
        for j in range(i + 1, len(pts)):
            a, b = pts[i], pts[j]
            d = b - a
            if np.hypot(*d) < 1e-6:
                continue
            out.append((a, b))
            mid = (a + b) / 2
            out.append((mid, mid + np.array([-d[1], d[0]])))
    return out


def fold_area_change(state: FoldState, new: FoldState) -> tuple[float, float]:
    a = folded_silhouette(state.geometry)
    b = folded_silhouette(new.geometry)
    return float(shapely.symmetric_difference(a, b).area), float(b.area)


def random_sequence(rng: np.random.Generator, n_folds: int, tries: int = 60) -> list[SimpleFold]:
    """``n_folds`` simple folds from the unit square, each visibly changing the outline.

    Stops early (fewer folds) if no candidate line works after ``tries`` attempts.
    """
    state = square_sheet()
    seq: list[SimpleFold] = []
    for _ in range(n_folds):
        lines = candidate_lines(state)
        for _ in range(tries):
            p, q = lines[int(rng.integers(len(lines)))]
            if rng.random() < 0.5:
                p, q = q, p
            step = SimpleFold(
                (round(float(p[0]), 9), round(float(p[1]), 9)),
                (round(float(q[0]), 9), round(float(q[1]), 9)),
                "V" if rng.random() < 0.6 else "M",
            )
            new = fold(state, step.start, step.end, step.assignment)
            if not isinstance(new, FoldState):
                continue
            change, area = fold_area_change(state, new)
            if change >= MIN_CHANGE and area >= MIN_AREA:
                seq.append(step)
                state = new
                break
        else:
            break
    return seq
