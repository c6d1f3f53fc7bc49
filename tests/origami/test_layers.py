import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shredfold.origami.cells import build_cells
from shredfold.origami.constraints import (
    TACO_TACO,
    TACO_TORTILLA,
    TORTILLA_TORTILLA,
    TRANSITIVITY,
    build_problem,
    table,
    valid_tuples,
)
from shredfold.origami.folded import fold_geometry
from shredfold.origami.layers import face_orders, solve_layers
from shredfold.origami.local import check_local
from shredfold.origami.pattern import CreasePattern, read_pattern
from shredfold.origami.propagation import satisfies

from .bases import BASES
from .sheet_transforms import transformed

BORDER = [((0, 0), (1, 0)), ((1, 0), (1, 1)), ((1, 1), (0, 1)), ((0, 1), (0, 0))]


def square_with(*creases):
    segs = [*BORDER, *[c[:2] for c in creases]]
    return CreasePattern.from_segments(np.array(segs, float), ["B"] * 4 + [c[2] for c in creases])


def pleat(letters):
    """Vertical creases at x = 1/4, 1/2, 3/4 with the given letters."""
    return square_with(*[((x, 0), (x, 1), a) for x, a in zip((0.25, 0.5, 0.75), letters, strict=True)])


def test_constraint_tables_follow_from_the_geometry():
    # 16 of the 24 orders of two tacos keep them from interleaving
    assert len(valid_tuples(TACO_TACO)) == 16
    assert valid_tuples(TACO_TORTILLA) == {(1, 2), (2, 1)}
    assert valid_tuples(TORTILLA_TORTILLA) == {(1, 1), (2, 2)}
    assert len(valid_tuples(TRANSITIVITY)) == 6
    # a transitivity triple with two orders known forces the third when they chain
    t = table(TRANSITIVITY)
    code = 1 * 1 + 1 * 3  # A above B, B above C
    assert t.forced[code].tolist() == [0, 0, 2]  # so C is below A


def test_single_fold_has_one_state_and_a_face_order():
    res = solve_layers(square_with(((0.5, 0), (0.5, 1), "V")), limit=None)
    assert res.satisfiable and res.states == 1
    assert res.variables == 1
    (f, g, s) = res.face_orders[0].tolist()
    assert {f, g} == {0, 1} and s in (-1, 1)


def test_pleat_folds_one_way():
    res = solve_layers(pleat("VMV"), limit=None)
    assert res.satisfiable and res.states == 1


@pytest.mark.parametrize(("stamps", "foldings"), [(2, 2), (3, 6), (4, 16), (5, 50)])
def test_unassigned_strip_counts_match_stamp_folding(stamps, foldings):
    # folding a strip of n equal stamps along every crease: OEIS A000136 (1, 2, 6, 16, 50)
    xs = [i / stamps for i in range(1, stamps)]
    cp = square_with(*[((x, 0), (x, 1), "U") for x in xs])
    res = solve_layers(cp, limit=None)
    assert res.states == foldings


def test_limit_caps_the_count_and_says_so():
    res = solve_layers(pleat("UUU"), limit=3)  # 16 states in one component
    assert res.states == 3 and res.limited


def test_crossing_folds_need_the_layers_to_agree():
    # folding both midlines as valleys: Maekawa fails at the centre
    res = solve_layers(square_with(((0.5, 0), (0.5, 1), "V"), ((0, 0.5), (1, 0.5), "V")))
    assert not res.satisfiable
    assert res.reason == "maekawa"
    assert (res.states, res.variables, res.face_orders, res.bad_faces) == (0, 0, None, ())


def test_interlocking_flaps_are_rejected_with_faces():
    # strips 0.4 / 0.2 / 0.4, both creases mountains: each outer flap folds behind the
    # middle and reaches past the other's fold, so each must lie below the other
    cp = square_with(((0.4, 0), (0.4, 1), "M"), ((0.6, 0), (0.6, 1), "M"))
    res = solve_layers(cp, limit=None)
    assert not res.satisfiable
    assert res.reason == "layer-order"
    assert set(res.bad_faces) <= {0, 1, 2} and res.bad_faces
    assert "cannot hold" in res.detail
    assert (res.states, res.components, res.face_orders, res.bad_vertices) == (0, (), None, ())


def test_strip_that_must_pierce_a_fold_is_rejected():
    # widths 0.2, 0.1, 0.7: with M then M the last (long) strip folds back over the short
    # middle one and past the first fold, which it would have to pierce
    cp = square_with(((0.2, 0), (0.2, 1), "M"), ((0.3, 0), (0.3, 1), "M"))
    res = solve_layers(cp)
    assert not res.satisfiable
    assert res.reason == "layer-order"
    assert res.bad_faces


@pytest.mark.parametrize("limit", [1, None])
def test_timeout_is_reported_not_raised(limit):
    res = solve_layers(pleat("UUU"), limit=limit, timeout=0.0)
    assert res.status == "timeout" and not res.satisfiable
    assert (res.states, res.limited, res.components, res.face_orders) == (0, False, (), None)


def test_face_orders_travel_in_a_fold_file():
    from shredfold.origami.fold_format import read_fold, write_fold

    cp = pleat("VMV")
    res = solve_layers(cp)
    text = write_fold(cp.to_fold_frame(face_orders=res.face_orders))
    frame = read_fold(text).key_frame
    assert len(frame.face_orders) == res.variables
    assert CreasePattern.from_fold(frame).n_faces == cp.n_faces


def test_cp_file_reads_into_a_foldable_pattern():
    from shredfold.origami.fold_format import read_cp

    text = "1 -200 -200 200 -200\n1 200 -200 200 200\n1 200 200 -200 200\n1 -200 200 -200 -200\n3 0 -200 0 200\n"
    segs = read_cp(text)
    cp = CreasePattern.from_segments([s[:2] for s in segs], [s[2] for s in segs])
    assert cp.n_faces == 2
    assert solve_layers(cp).satisfiable


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["fish", "kite", "waterbomb", "preliminary", "strip"]),
    st.floats(0, 2 * math.pi),
    st.booleans(),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.0, 1e-9, 1e-6, 1e-4]),
)
def test_state_counts_ignore_rotation_mirror_renumbering_and_noise(name, angle, mirror, seed, noise):
    if name == "strip":
        # four unassigned stamps: 16 foldings (see the stamp-folding test above)
        cp = square_with(*[((x, 0), (x, 1), "U") for x in (0.25, 0.5, 0.75)])
    else:
        cp = read_pattern(BASES[name][0])
    expected = solve_layers(cp, limit=None)
    moved = CreasePattern.from_fold(
        transformed(cp.to_fold_frame(), angle=angle, mirror=mirror, seed=seed, noise=noise)
    )
    res = solve_layers(moved, limit=None)
    assert res.satisfiable and expected.satisfiable
    assert (res.states, res.variables) == (expected.states, expected.variables)
    assert sorted(res.components) == sorted(expected.components)


@pytest.mark.parametrize(("letter", "sign"), [("V", -1), ("M", 1)])
def test_face_orders_say_which_face_lies_on_top(letter, sign):
    # FOLD faceOrders [f, g, s]: s = +1 when f lies above g on the side f's normal points
    # to. A valley brings the far half onto the near half's normal side, whichever half is
    # taken to stay: face 0 is below face 1 (-1); a mountain the other way round (+1).
    res = solve_layers(square_with(((0.5, 0), (0.5, 1), letter)))
    assert res.face_orders.tolist() == [[0, 1, sign]]


@pytest.mark.parametrize("want", [1, -1])
def test_an_unassigned_fold_follows_the_preferred_order(want):
    res = solve_layers(square_with(((0.5, 0), (0.5, 1), "U")), limit=None,
                       prefer=lambda pairs: np.full(len(pairs), want))
    assert res.face_orders.tolist() == [[0, 1, want]]
    assert res.states == 2  # a preference never changes the count


@pytest.mark.parametrize(("limit", "limited"), [(15, True), (16, True), (17, False), (None, False)])
def test_a_count_that_reaches_the_limit_is_limited(limit, limited):
    res = solve_layers(pleat("UUU"), limit=limit)  # 16 states in one component
    assert (res.states, res.components, res.limited) == (min(16, limit or 16), (min(16, limit or 16),), limited)


def test_layer_results_are_immutable():
    from dataclasses import FrozenInstanceError

    res = solve_layers(pleat("VMV"))
    with pytest.raises(FrozenInstanceError):
        res.states = 2  # type: ignore[misc]


def strip(letters):
    """A strip of len(letters) + 1 equal stamps with the given creases between them."""
    n = len(letters) + 1
    return square_with(*[((i / n, 0), (i / n, 1), a) for i, a in enumerate(letters, 1)])


@pytest.mark.parametrize(("stamps", "foldings"), [(4, 16), (5, 50)])
def test_the_mountain_valley_assignments_share_out_the_stamp_foldings(stamps, foldings):
    # Every folding of the strip gives each crease one letter, so counting the foldings of
    # each full assignment and summing gives all of them (A000136). Fixed letters leave most
    # layer pairs to constraints that mix known and free orders.
    counts = [solve_layers(strip(x), limit=None).states for x in itertools.product("MV", repeat=stamps - 1)]
    assert sum(counts) == foldings
    assert min(counts) >= 1  # every assignment of a strip of equal stamps folds


@pytest.mark.parametrize("letters", ["MUUV", "UMUU", "VUVU"])
def test_an_unassigned_crease_counts_the_foldings_of_both_letters(letters):
    choices = [("M", "V") if x == "U" else (x,) for x in letters]
    completions = sum(solve_layers(strip(c), limit=None).states for c in itertools.product(*choices))
    assert solve_layers(strip(letters), limit=None).states == completions


def test_flaps_that_never_overlap_count_independently():
    # a 3 x 1 sheet with two unassigned creases near each end: the left flaps fold within
    # x < 0.6 and the right ones within x > 2.4, so their orders multiply
    def sheet(xs):
        segs = [((0, 0), (3, 0)), ((3, 0), (3, 1)), ((3, 1), (0, 1)), ((0, 1), (0, 0))]
        segs += [((x, 0), (x, 1)) for x in xs]
        return CreasePattern.from_segments(np.array(segs, float), ["B"] * 4 + ["U"] * len(xs))

    left, right = solve_layers(sheet([0.2, 0.4]), limit=None), solve_layers(sheet([2.6, 2.8]), limit=None)
    both = solve_layers(sheet([0.2, 0.4, 2.6, 2.8]), limit=None)
    assert both.states == left.states * right.states == 16
    assert sorted(both.components) == sorted(left.components + right.components)


def test_by_default_one_order_is_decided_and_the_count_stops_there():
    res = solve_layers(pleat("UUU"))  # 16 states, but limit=1 is the default
    assert (res.states, res.components, res.limited) == (1, (1,), True)


def test_a_generous_timeout_changes_nothing():
    res = solve_layers(pleat("UUU"), limit=None, timeout=600.0)
    assert res.status == "ok" and res.states == 16


def test_the_reason_is_the_first_rule_the_local_check_finds_broken():
    # one vertex breaking two rules: 2 M and 2 V (Maekawa), and sectors 90, 90, 68, 112
    # (Kawasaki); the local check lists Maekawa first, and so does the solver
    c = (0.5, 0.5)
    cp = square_with((c, (1, 0.5), "V"), (c, (0.5, 1), "V"), (c, (0, 0.5), "M"), (c, (0.7, 0), "M"))
    report = check_local(cp)
    assert [v.rule for v in report.violations] == ["maekawa", "kawasaki"]
    res = solve_layers(cp)
    assert res.reason == "maekawa"
    assert res.detail.startswith(f"vertex {report.violations[0].vertex}: 2 M, 2 V")
    assert res.bad_vertices == tuple(report.vertices())


def test_without_the_checks_a_pattern_off_kawasaki_goes_straight_to_the_layer_order():
    # a vertex near the bottom edge whose upper crease leans 8 degrees off the vertical:
    # Kawasaki fails, and folded, the faces disagree about the far end of the short crease
    # by more than the length check allows. check=False skips both checks: the layers of
    # whatever the folding gives are ordered (here they cannot be)
    c = (0.5, 0.1)
    top = (0.5 + 0.9 * math.tan(math.radians(8)), 1)
    cp = square_with((c, (1, 0.1), "M"), (c, top, "V"), (c, (0, 0.1), "M"), (c, (0.5, 0), "M"))
    assert solve_layers(cp).reason == "kawasaki"
    res = solve_layers(cp, check=False)
    assert res.reason == "layer-order" and "cannot hold" in res.detail


def test_a_preference_of_zero_leaves_the_choice_to_the_solver():
    free = solve_layers(pleat("UUU"))
    res = solve_layers(pleat("UUU"), prefer=lambda pairs: np.zeros(len(pairs), np.int64))
    assert res.face_orders.tolist() == free.face_orders.tolist()


@pytest.mark.parametrize("letters", ["".join(x) for x in itertools.product("MV", repeat=3)])
def test_the_unassigned_pleat_steered_by_an_assigned_ones_order_folds_that_way(letters):
    # every order of an assigned pleat is one of the 16 of the unassigned pleat (same
    # faces, same overlaps); asked for it, the solver hands back exactly that order
    order = solve_layers(pleat(letters)).face_orders
    wanted = {(f, g): s for f, g, s in order.tolist()}
    res = solve_layers(
        pleat("UUU"), limit=None, prefer=lambda pairs: np.array([wanted[f, g] for f, g in pairs.tolist()])
    )
    assert res.face_orders.tolist() == order.tolist()
    assert res.states == 16


def two_vertex_sheet(lean):
    """Vertices A (0.45, 0.5) and B (0.55, 0.5) joined by the shortest crease (0.1), each
    with creases to the three nearest sides; A's upper crease leans ``lean`` degrees left,
    which puts A off Kawasaki by twice that, within the local check's tolerance (an eighth
    of the shortest edge over A's shortest crease: 0.125 rad)."""
    a, b = (0.45, 0.5), (0.55, 0.5)
    top = (0.45 - 0.5 * math.tan(math.radians(lean)), 1)
    return square_with(
        (a, b, "M"), (a, (0, 0.5), "M"), (a, top, "V"), (a, (0.45, 0), "M"),
        (b, (1, 0.5), "M"), (b, (0.55, 1), "M"), (b, (0.55, 0), "V"),
    )


@pytest.mark.parametrize(("lean", "low", "high", "folds"), [(0.0, 0, 0, True), (0.95, 8 / 9, 1, True), (1.1, 1, 8 / 7, False)])
def test_folded_faces_may_disagree_by_up_to_an_eighth_of_the_shortest_edge(lean, low, high, folds):
    # A's misfit turns everything folded past it, so the faces around B disagree by far
    # more than at A itself: every vertex passes the local check, and the length check
    # is what rejects the pattern once the disagreement passes 1/8 of the shortest edge
    cp = two_vertex_sheet(lean)
    assert check_local(cp).ok
    geometry = fold_geometry(cp)
    assert low <= max(geometry.closure_error, geometry.length_error) / (0.1 / 8) <= high
    res = solve_layers(cp)
    if folds:
        assert res.satisfiable and res.states == 1
    else:
        assert (res.status, res.reason) == ("unsatisfiable", "length")
        assert res.detail.startswith("folded faces disagree by 0.0134")




def test_a_valid_whole_preferred_order_is_checked_and_taken_as_it_is():
    # asked for one order, with a preference for every pair that is itself valid, the solver
    # returns it without a search: nothing counted (one state, a bound), no components
    order = solve_layers(pleat("MVM")).face_orders
    wanted = {(f, g): s for f, g, s in order.tolist()}
    res = solve_layers(pleat("UUU"), prefer=lambda pairs: np.array([wanted[f, g] for f, g in pairs.tolist()]))
    assert res.face_orders.tolist() == order.tolist()
    assert (res.states, res.limited, res.components) == (1, True, ())


def test_an_invalid_whole_preferred_order_goes_to_the_search():
    # one pair of a valid order reversed so that no layer order has it: the search decides,
    # and what it returns is one of the pleat's 16 orders
    valid = {tuple(map(tuple, o.tolist())) for o in _all_orders(pleat("UUU"))}
    assert len(valid) == 16
    order = solve_layers(pleat("MVM")).face_orders.tolist()
    for i in range(len(order)):
        broken = [row if j != i else [row[0], row[1], -row[2]] for j, row in enumerate(order)]
        if tuple(map(tuple, broken)) not in valid:
            break
    assert tuple(map(tuple, broken)) not in valid
    wanted = {(f, g): s for f, g, s in broken}
    res = solve_layers(pleat("UUU"), prefer=lambda pairs: np.array([wanted[f, g] for f, g in pairs.tolist()]))
    assert res.satisfiable and res.components  # searched, not taken
    assert tuple(map(tuple, res.face_orders.tolist())) in valid


def _all_orders(cp):
    """Every layer order of ``cp``, by checking each assignment (small patterns only)."""
    geometry = fold_geometry(cp)
    problem = build_problem(geometry, build_cells(geometry))
    for values in itertools.product((1, 2), repeat=problem.n_vars):
        assign = np.array(values, np.int8)
        if satisfies(problem, assign):
            yield face_orders(problem, assign, geometry)
