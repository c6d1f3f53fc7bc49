import math
from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shredfold.origami.fold_format import frame_from_arrays
from shredfold.origami.layers import solve_layers
from shredfold.origami.local import check_local
from shredfold.origami.pattern import CreasePattern

from .sheet_transforms import transformed

BORDER = [((-1, -1), (1, -1)), ((1, -1), (1, 1)), ((1, 1), (-1, 1)), ((-1, 1), (-1, -1))]


def sheet_with_rays(rays):
    """The square's border and creases from (0, 0) to it (angle in degrees, letter)."""
    segs, letters = list(BORDER), ["B"] * 4
    for deg, letter in rays:
        a = math.radians(deg)
        # reach the square's border along the ray
        r = 1 / max(abs(math.cos(a)), abs(math.sin(a)))
        segs.append(((0, 0), (r * math.cos(a), r * math.sin(a))))
        letters.append(letter)
    return segs, letters


def vertex_at_origin(rays):
    """A single interior vertex at (0, 0) with creases (angle in degrees, letter)."""
    segs, letters = sheet_with_rays(rays)
    cp = CreasePattern.from_segments(np.array(segs, float), letters)
    centre = int(np.argmin(np.hypot(*cp.vertices.T)))
    return cp, centre


def test_waterbomb_vertex_is_locally_flat_foldable():
    cp, _ = vertex_at_origin([(0, "V"), (45, "M"), (135, "M"), (180, "V"), (225, "M"), (315, "M")])
    assert check_local(cp).ok is True


def test_maekawa_violation_names_the_vertex():
    cp, centre = vertex_at_origin([(0, "V"), (90, "V"), (180, "M"), (270, "M")])
    report = check_local(cp)
    assert report.vertices("maekawa") == [centre]
    assert report.ok is False and report.vertices() == [centre]


@pytest.mark.parametrize(
    "rays",
    [
        [(0, "M"), (80, "M"), (180, "M"), (270, "V")],  # sectors 80, 100, 90, 90: sum -20
        [(0, "M"), (100, "M"), (180, "M"), (270, "V")],  # its mirror image: sum +20
    ],
    ids=["negative-sum", "positive-sum"],
)
def test_kawasaki_violation_names_the_vertex(rays):
    cp, centre = vertex_at_origin(rays)
    report = check_local(cp)
    assert report.vertices("kawasaki") == [centre]
    assert "alternating angle sum" in report.violations[0].detail


def test_big_little_big_violation_is_caught_by_the_crimp_test():
    # sectors 80, 20, 100, 160 satisfy Kawasaki, but the little 20-degree sector lies
    # between two mountains: Maekawa holds (3 M, 1 V) and still it cannot fold flat
    cp, centre = vertex_at_origin([(0, "V"), (80, "M"), (100, "M"), (200, "M")])
    report = check_local(cp)
    assert report.vertices("crimp") == [centre]


def test_same_angles_with_alternating_crimp_pass():
    cp, _ = vertex_at_origin([(0, "M"), (80, "M"), (100, "V"), (200, "M")])
    assert check_local(cp).ok is True


def test_unassigned_creases_count_as_either_letter():
    cp, _ = vertex_at_origin([(0, "U"), (90, "U"), (180, "U"), (270, "M")])
    assert check_local(cp).ok is True


@pytest.mark.parametrize(
    "rays",
    [
        # six equal sectors (Kawasaki holds): 5 M and a U is 6-0 or 5-1, never 4-2
        [(0, "M"), (60, "M"), (120, "M"), (180, "M"), (240, "M"), (300, "U")],
        # three creases: no letters make an odd degree fold flat
        [(0, "U"), (120, "U"), (240, "M")],
    ],
    ids=["five-mountains-and-a-U", "odd-degree"],
)
def test_unassigned_creases_do_not_excuse_maekawa(rays):
    cp, centre = vertex_at_origin(rays)
    report = check_local(cp)
    assert report.vertices("maekawa") == [centre]
    assert report.vertices("kawasaki") == []


def test_crease_ending_inside_the_sheet_is_dangling():
    segs = [*BORDER, ((0, 0), (1, 0))]
    cp = CreasePattern.from_segments(np.array(segs, float), ["B"] * 4 + ["V"])
    assert [v.rule for v in check_local(cp).violations] == ["dangling"]


# ---- invariance -----------------------------------------------------------------------

_letters = st.sampled_from("MVU")


@st.composite
def single_vertex_patterns(draw):
    """A vertex at the centre of the unit square with 4, 6 or 8 creases: often Kawasaki-flat
    (sectors drawn in pairs whose alternating sum is zero), sometimes not."""
    degree = draw(st.sampled_from([4, 6, 8]))
    weights = draw(st.lists(st.integers(1, 9), min_size=degree, max_size=degree))
    sectors = np.array(weights, float)
    if draw(st.booleans()):
        # make the even and the odd sectors each sum to pi
        sectors[0::2] *= math.pi / sectors[0::2].sum()
        sectors[1::2] *= math.pi / sectors[1::2].sum()
    else:
        sectors *= 2 * math.pi / sectors.sum()
    start = draw(st.floats(0, 2 * math.pi))
    angles = start + np.concatenate([[0.0], np.cumsum(sectors)[:-1]])
    letters = draw(st.lists(_letters, min_size=degree, max_size=degree))
    return [(math.degrees(a), letter) for a, letter in zip(angles, letters, strict=True)]


def _verdict(cp: CreasePattern) -> list[str]:
    return sorted(v.rule for v in check_local(cp).violations)


@settings(max_examples=60, deadline=None)
@given(
    single_vertex_patterns(),
    st.floats(0, 2 * math.pi),
    st.booleans(),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.0, 1e-9, 1e-7, 1e-5]),
)
def test_local_verdict_ignores_rotation_mirror_renumbering_and_noise(rays, angle, mirror, seed, noise):
    cp, _ = vertex_at_origin(rays)
    moved = CreasePattern.from_fold(transformed(cp.to_fold_frame(), angle=angle, mirror=mirror, seed=seed, noise=noise))
    assert _verdict(moved) == _verdict(cp)


@st.composite
def kawasaki_vertex(draw):
    """A single vertex of degree 4, 6 or 8 whose sectors satisfy Kawasaki (alternate sums of
    180 degrees, often with equal sectors, the crimp test's hard case; no near-ties) and whose letters
    satisfy Maekawa (one more or one fewer M than half)."""
    k = draw(st.integers(2, 4))
    weights = st.lists(st.floats(0.3, 1.0), min_size=k, max_size=k)
    odd = np.array(draw(weights))
    even = odd.copy() if draw(st.booleans()) else np.array(draw(weights))
    sectors = np.empty(2 * k)
    sectors[0::2], sectors[1::2] = odd / odd.sum() * 180, even / even.sum() * 180
    assume(sectors.min() >= 6)
    # Sectors are equal or clearly apart: the local check calls sectors within its noise
    # tolerance equal (real designs are stored to ~5 digits), the layer solver is exact.
    gaps = np.abs(sectors[:, None] - sectors[None, :])
    assume(bool(np.all((gaps == 0) | (gaps > 0.5))))
    turn = draw(st.floats(0, 360))
    mountains = set(draw(st.permutations(range(2 * k)))[: k + draw(st.sampled_from([1, -1]))])
    starts = np.concatenate([[0.0], np.cumsum(sectors)[:-1]]) + turn
    return sorted((float(a % 360), "M" if i in mountains else "V") for i, a in enumerate(starts))


@settings(max_examples=60, deadline=None)
@given(kawasaki_vertex())
def test_the_local_verdict_of_one_vertex_is_the_layer_solvers(rays):
    # For a single vertex the local checks are exact: it folds flat if and only if crimps
    # reduce it to two creases. The layer solver decides the same question globally.
    cp, _ = vertex_at_origin(rays)
    assert check_local(cp).ok == solve_layers(cp, limit=1).satisfiable


# ---- tolerances, at their boundaries ---------------------------------------------------
# Stored designs have angle noise, so each check has a tolerance relative to the pattern's
# smallest feature seen from the vertex's shortest crease. A flat stub of length 0.1 on the
# left border makes that feature known by hand; every crease at the vertex is at least 1
# long (the ray along an axis is exactly 1), so the Kawasaki tolerance is 0.1 / 8 rad and
# the crimp test's 0.1 / 128 rad, at any scale of the sheet.

STUB = 0.1


def vertex_with_stub(rays, scale, stub=STUB):
    segs, letters = sheet_with_rays(rays)
    segs.append(((-1, -0.5), (-1 + stub, -0.5)))
    letters.append("F")
    return CreasePattern.from_segments(np.array(segs, float) * scale, letters)


@pytest.mark.parametrize("scale", [0.25, 4.0])
@pytest.mark.parametrize(("factor", "fails"), [(0.97, False), (1.03, True)])
def test_kawasaki_fails_just_beyond_an_eighth_of_the_smallest_feature(scale, factor, fails):
    # rays at 0, 90, 180 and 270 + d degrees: sectors 90, 90, 90 + d, 90 - d, sum off by 2d
    d = math.degrees(factor * STUB / 8 / 2)
    cp = vertex_with_stub([(0, "M"), (90, "M"), (180, "M"), (270 + d, "V")], scale)
    report = check_local(cp)
    assert (report.vertices("kawasaki") != []) is fails
    assert report.vertices("maekawa") == []


@pytest.mark.parametrize(("scale", "mirror"), [(0.25, False), (4.0, False), (1.0, True)])
@pytest.mark.parametrize(("factor", "fails"), [(0.996, False), (1.004, True)])
def test_sectors_within_the_crimp_tolerance_count_as_equal(scale, mirror, factor, fails):
    # sectors 120 - d, 60, 60 + d, 120 (Kawasaki exact), creases M M M V: the 60-degree
    # sector lies between two mountains, so the vertex folds only if the (M, V) sector of
    # 60 + d counts as equal to it, i.e. d is within 1/128 of the smallest feature. In the
    # mirror image the 60-degree sector follows the (V, M) one instead of preceding it.
    d = math.degrees(factor * STUB / 128)
    rays = [(0, "M"), (120 - d, "M"), (180 - d, "M"), (240, "V")]
    cp = vertex_with_stub([(180 - a if mirror else a, x) for a, x in rays], scale)
    report = check_local(cp)
    assert (report.vertices("crimp") != []) is fails
    assert report.vertices("kawasaki") == [] and report.vertices("maekawa") == []


@pytest.mark.parametrize(("factor", "fails"), [(0.9, False), (1.1, True)])
def test_crimp_tolerance_grows_to_twice_the_kawasaki_residual(factor, fails):
    # as above, with the alternating sum off by r = 0.01 rad (within Kawasaki's 0.0125): the
    # vertex's own angle noise, so sectors within 2r of each other are equal
    r = 0.01
    d, h = math.degrees(factor * 2 * r), math.degrees(r / 2)
    # sectors 120 - d + h, 60, 60 + d, 120 - h
    cp = vertex_with_stub([(0, "M"), (120 - d + h, "M"), (180 - d + h, "M"), (240 + h, "V")], 1.0)
    report = check_local(cp)
    assert report.vertices("kawasaki") == []
    assert (report.vertices("crimp") != []) is fails


@pytest.mark.parametrize(("off", "fails"), [(0.5e-9, False), (2e-9, True)])
def test_angles_are_never_held_tighter_than_a_nanoradian(off, fails):
    # Beside a feature of 2e-9 (just long enough not to be snapped away) the relative
    # tolerances shrink below float noise; both checks keep a floor of 1e-9 rad.
    d = math.degrees(off)
    kawasaki = vertex_with_stub([(0, "M"), (90, "M"), (180, "M"), (270 + d / 2, "V")], 1.0, stub=2e-9)
    assert (check_local(kawasaki).vertices("kawasaki") != []) is fails
    crimp = vertex_with_stub([(0, "M"), (120 - d, "M"), (180 - d, "M"), (240, "V")], 1.0, stub=2e-9)
    assert (check_local(crimp).vertices("crimp") != []) is fails


def test_reports_and_violations_are_immutable():
    cp, _ = vertex_at_origin([(0, "V"), (90, "V"), (180, "M"), (270, "M")])
    report = check_local(cp)
    with pytest.raises(FrozenInstanceError):
        report.violations = ()  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        report.violations[0].rule = "kawasaki"  # type: ignore[misc]


# ---- several vertices, each judged on its own creases ----------------------------------


@pytest.mark.parametrize(
    ("rays", "rules"),
    [
        ([(0, "V"), (80, "M"), (100, "M"), (200, "M")], ["crimp"]),  # big-little-big
        # sectors 20 (V, M), 80, 160, 100 from the first crease counter-clockwise from -180
        # degrees: the first sector is the one to crimp
        ([(190, "V"), (210, "M"), (290, "M"), (90, "M")], []),
    ],
    ids=["violation", "first-sector-crimps"],
)
def test_a_vertex_is_judged_alike_whatever_its_id(rays, rules):
    # the vertex renumbered to take every id in turn, the first and last too
    cp, centre = vertex_at_origin(rays)
    n = len(cp.vertices)
    for k in range(n):
        order = [i for i in range(n) if i != centre]
        order.insert(k, centre)
        new_id = np.empty(n, np.int64)
        new_id[order] = np.arange(n)
        moved = CreasePattern.from_fold(frame_from_arrays(cp.vertices[order], new_id[cp.edges], cp.assignments))
        assert [(v.vertex, v.rule) for v in check_local(moved).violations] == [(k, r) for r in rules]


def test_every_vertex_of_a_pattern_is_checked():
    # a mountain line across the sheet, crossed by two vertical lines at x = -0.5 (A) and
    # x = 0.5 (B), and a valley stub from the left border ending inside the sheet (D). A has
    # four right angles and 3 M + 1 V: flat-foldable. B's upper crease leans to (0.7, 1):
    # Kawasaki's sum is off by 2 * atan(0.2). Vertex ids as listed: D 0, A 1, B 2.
    vertices = [(-0.8, 0.5), (-0.5, 0), (0.5, 0), (-1, -1), (1, -1), (1, 1), (-1, 1),
                (-1, 0), (1, 0), (-0.5, 1), (-0.5, -1), (0.7, 1), (0.5, -1), (-1, 0.5)]
    border = [(3, 10), (10, 12), (12, 4), (4, 8), (8, 5), (5, 11), (11, 9), (9, 6), (6, 13), (13, 7), (7, 3)]
    creases = [(7, 1, "M"), (1, 2, "M"), (2, 8, "M"), (1, 9, "V"), (1, 10, "M"), (2, 11, "V"), (2, 12, "M"),
               (13, 0, "V")]
    edges = border + [(a, b) for a, b, _ in creases]
    letters = ["B"] * len(border) + [x for _, _, x in creases]
    cp = CreasePattern.from_fold(frame_from_arrays(np.array(vertices, float), np.array(edges), np.array(letters)))
    report = check_local(cp)
    assert [(v.vertex, v.rule) for v in report.violations] == [(0, "dangling"), (2, "kawasaki")]
    # (its sign depends on which crease is counted first)
    off = report.violations[1].detail.removeprefix("alternating angle sum off by ")
    assert abs(float(off)) == float(f"{2 * math.atan(0.2):.3g}")


def test_a_failed_vertex_is_not_also_crimp_tested():
    # the big-little-big sectors with four mountains: Maekawa fails, and that is the verdict
    cp, centre = vertex_at_origin([(0, "M"), (80, "M"), (100, "M"), (200, "M")])
    assert [(v.vertex, v.rule) for v in check_local(cp).violations] == [(centre, "maekawa")]


def test_a_mountain_crossing_a_flat_crease_folds():
    # where they cross, the mountain has a vertex of degree 2 (the flat crease does not count)
    segs = [*BORDER, ((-1, 0), (1, 0)), ((0, -1), (0, 1))]
    cp = CreasePattern.from_segments(np.array(segs, float), ["B"] * 4 + ["M", "F"])
    assert check_local(cp).ok is True


def test_five_creases_never_fold_whatever_the_unassigned_one_is():
    cp, centre = vertex_at_origin([(0, "M"), (72, "M"), (144, "M"), (216, "V"), (288, "U")])
    assert check_local(cp).vertices("maekawa") == [centre]


@pytest.mark.parametrize(
    ("odd", "even", "letters"),
    [
        ((2, 2, 3), (1, 5, 7), "MVMVVV"),  # sectors 180 * (2/7, 1/13, 2/7, 5/13, 3/7, 7/13)
        ((4, 7, 5), (3, 3, 1), "MMMVMV"),  # 180 * (4/16, 3/7, 7/16, 3/7, 5/16, 1/7)
    ],
)
def test_degree_six_vertices_whose_second_crimp_needs_the_first(odd, even, letters):
    # The first crimp merges three sectors into one (the outer two minus the crimped one)
    # and keeps the letter of the crease before them; whether the vertex then folds depends
    # on that merged sector and letter. Both are big-little-big violations after one crimp,
    # as the layer solver confirms.
    sectors = np.empty(6)
    sectors[0::2] = np.array(odd) / sum(odd) * 180
    sectors[1::2] = np.array(even) / sum(even) * 180
    starts = np.concatenate([[0.0], np.cumsum(sectors)[:-1]])
    cp, centre = vertex_at_origin(list(zip(starts.tolist(), letters, strict=True)))
    assert check_local(cp).vertices() == [centre]
    assert check_local(cp).vertices("crimp") == [centre]
    assert solve_layers(cp, limit=1).satisfiable is False
