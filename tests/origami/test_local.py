import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shredfold.origami.layers import solve_layers
from shredfold.origami.local import check_local
from shredfold.origami.pattern import CreasePattern

from .sheet_transforms import transformed

BORDER = [((-1, -1), (1, -1)), ((1, -1), (1, 1)), ((1, 1), (-1, 1)), ((-1, 1), (-1, -1))]


def vertex_at_origin(rays):
    """A single interior vertex at (0, 0) with creases (angle in degrees, letter)."""
    segs, letters = list(BORDER), ["B"] * 4
    for deg, letter in rays:
        a = math.radians(deg)
        # reach the square's border along the ray
        r = 1 / max(abs(math.cos(a)), abs(math.sin(a)))
        segs.append(((0, 0), (r * math.cos(a), r * math.sin(a))))
        letters.append(letter)
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
