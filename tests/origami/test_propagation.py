import time

import numpy as np
import pytest

from shredfold.origami import propagation
from shredfold.origami.cells import build_cells
from shredfold.origami.constraints import (
    CONFLICT,
    N_FACES,
    PAIRS,
    TACO_TORTILLA,
    TRANSITIVITY,
    Problem,
    build_problem,
    table,
)
from shredfold.origami.folded import fold_geometry
from shredfold.origami.pattern import read_pattern
from shredfold.origami.propagation import propagate
from shredfold.origami.states import Timeout


def no_rows(kind: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empty variable, flip and face arrays of one constraint type."""
    k = len(PAIRS[kind])
    return np.zeros((0, k), np.int64), np.zeros((0, k), bool), np.zeros((0, N_FACES[kind]), np.int64)


def test_a_clash_on_a_pair_only_transitivity_reads_is_blamed_on_a_transitivity_constraint():
    # Four faces stacked in one cell, the creases saying 0 above 1 above 2 and 2 above 3
    # above 0: the triples (0, 1, 2) and (0, 3, 2) force the pair (0, 2) both ways in the
    # same wave, and no constraint of another type reads that pair. Values: 1 when the
    # lower face id lies above, 2 below; a flip marks a pair read from the higher face.
    pairs = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)])
    none = [np.zeros((0, len(PAIRS[k])), np.int64) for k in range(3)]  # no taco or tortilla constraint
    problem = Problem(
        n_faces=4,
        pairs=pairs,
        cons_vars=(*none, np.array([[0, 3, 1], [2, 4, 1]])),
        cons_flip=(*[n.astype(bool) for n in none], np.array([[False, False, True], [False, True, True]])),
        cons_faces=(*[np.zeros((0, N_FACES[k]), np.int64) for k in range(3)], np.array([[0, 1, 2], [0, 3, 2]])),
        initial=np.array([1, 0, 2, 1, 1], np.int8),
    )
    assign = problem.initial.copy()
    conflict = propagate(problem, assign, np.flatnonzero(assign), None)
    assert conflict == (TRANSITIVITY, 0)
    assert problem.cons_faces[TRANSITIVITY][0].tolist() == [0, 1, 2]


def test_a_lone_crease_reaches_the_one_constraint_that_reads_it():
    # Two tortillas: faces 0 and 2 on one side of a crease stack as 1 and 3 do on the other,
    # so the two pairs take one value. Only the pair (0, 2) is known, and only that one
    # constraint reads it: the first wave has a single incidence, and must still force (1, 3).
    none = [np.zeros((0, len(PAIRS[k])), np.int64) for k in (0, 1, 3)]
    problem = Problem(
        n_faces=4,
        pairs=np.array([(0, 2), (1, 3)]),
        cons_vars=(none[0], none[1], np.array([[0, 1]]), none[2]),
        cons_flip=(none[0].astype(bool), none[1].astype(bool), np.array([[False, False]]), none[2].astype(bool)),
        cons_faces=(
            np.zeros((0, N_FACES[0]), np.int64),
            np.zeros((0, N_FACES[1]), np.int64),
            np.array([[0, 1, 2, 3]]),
            np.zeros((0, N_FACES[3]), np.int64),
        ),
        initial=np.array([1, 0], np.int8),
    )
    assign = problem.initial.copy()
    assert propagate(problem, assign, np.flatnonzero(assign), None) is None
    assert assign.tolist() == [1, 1]


def test_the_first_conflicting_row_is_reported_whatever_order_the_rows_are_reached_in():
    # Two taco-tortilla rows, both broken by the values given; variable 0 (first in the
    # frontier) is read by row 1 only, so row 1 is reached first, and row 0 is reported
    conflict = np.flatnonzero(table(TACO_TORTILLA).status == CONFLICT)[0]
    x, y = int(conflict % 3), int(conflict // 3)
    tt, tt_flip, tt_faces = no_rows(0)
    trt, trt_flip, trt_faces = no_rows(2)
    tr, tr_flip, tr_faces = no_rows(3)
    problem = Problem(
        n_faces=6,
        pairs=np.array([(0, 1), (0, 2), (0, 3), (0, 4)]),
        cons_vars=(tt, np.array([[2, 1], [0, 3]]), trt, tr),
        cons_flip=(tt_flip, np.zeros((2, 2), bool), trt_flip, tr_flip),
        cons_faces=(tt_faces, np.array([[0, 1, 2], [3, 4, 5]]), trt_faces, tr_faces),
        initial=np.array([x, y, x, y], np.int8),
    )
    assign = problem.initial.copy()
    assert propagate(problem, assign, np.arange(4), None) == (TACO_TORTILLA, 0)


def test_a_propagation_cut_into_pieces_ends_where_one_run_does(monkeypatch, shared_dir):
    # the compiled loop hands back to Python (to check the deadline) every _BUDGET lookups;
    # with a budget of one lookup every wave is a piece of its own
    path = shared_dir / "flat-folder" / "instagram" / "073_komatsu_Squirrel.fold"
    if not path.is_file():
        pytest.skip(f"shared design not found: {path}")
    geometry = fold_geometry(read_pattern(path.read_text()))
    problem = build_problem(geometry, build_cells(geometry))
    whole = problem.initial.copy()
    assert propagate(problem, whole, np.flatnonzero(whole), None) is None
    monkeypatch.setattr(propagation, "_BUDGET", 0)
    pieces = problem.initial.copy()
    assert propagate(problem, pieces, np.flatnonzero(pieces), None) is None
    assert np.array_equal(whole, pieces)
    assert (whole > 0).sum() > (problem.initial > 0).sum()  # propagation did fix values


def test_a_deadline_already_past_stops_the_propagation():
    tt, tt_flip, tt_faces = no_rows(0)
    tto, tto_flip, tto_faces = no_rows(1)
    trt, trt_flip, trt_faces = no_rows(2)
    problem = Problem(
        n_faces=3,
        pairs=np.array([(0, 1), (0, 2), (1, 2)]),
        cons_vars=(tt, tto, trt, np.array([[0, 2, 1]])),
        cons_flip=(tt_flip, tto_flip, trt_flip, np.array([[False, False, True]])),
        cons_faces=(tt_faces, tto_faces, trt_faces, np.array([[0, 1, 2]])),
        initial=np.array([1, 0, 1], np.int8),
    )
    with pytest.raises(Timeout):
        propagate(problem, problem.initial.copy(), np.array([0, 2]), time.monotonic() - 1)



def test_a_whole_assignment_is_checked_against_the_creases_and_every_constraint():
    from shredfold.origami.layers import solve_layers

    from .bases import BASES

    pattern = read_pattern(BASES["fish"][0])  # one layer order, 12 pairs
    geometry = fold_geometry(pattern)
    problem = build_problem(geometry, build_cells(geometry))
    order = solve_layers(pattern).face_orders  # as FOLD faceOrders: back to values
    up = (order[:, 2] == 1) ^ geometry.flipped[order[:, 0]]
    assign = np.where(up, 1, 2).astype(np.int8)
    assert propagation.satisfies(problem, assign)
    assert not propagation.satisfies(problem, np.zeros_like(assign))  # not whole
    assert not propagation.satisfies(problem, assign[:-1])
    # the order is the only one: any pair reversed breaks a crease's value or a constraint
    for v in range(problem.n_vars):
        flipped = assign.copy()
        flipped[v] = 3 - flipped[v]
        assert not propagation.satisfies(problem, flipped)
