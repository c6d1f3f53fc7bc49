"""Affine maps written out element by element: the products they replace, and the same last
bits whatever BLAS kernel the machine would pick."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shredfold.numerics import settings
from shredfold.origami import affine

ROOT = Path(__file__).resolve().parents[2]


def _maps(rng: np.random.Generator, n: int) -> np.ndarray:
    t = np.zeros((n, 3, 3))
    t[:, :2, :] = rng.uniform(-2, 2, (n, 2, 3))
    t[:, 2, 2] = 1.0
    return t


def test_they_compute_what_the_matrix_products_do() -> None:
    rng = np.random.default_rng(7)
    t, u = _maps(rng, 50), _maps(rng, 50)
    pts = rng.uniform(-1, 1, (50, 2))
    homogeneous = np.concatenate([pts, np.ones((50, 1))], axis=1)
    assert np.allclose(affine.apply(t, pts), np.einsum("nij,nj->ni", t, homogeneous)[:, :2], atol=1e-12)
    assert np.allclose(affine.apply(t[3], pts), pts @ t[3, :2, :2].T + t[3, :2, 2], atol=1e-12)
    assert np.allclose(affine.compose(t, u), t @ u, atol=1e-12)
    assert np.allclose(affine.invert(t[5]), np.linalg.inv(t[5]), atol=1e-9)
    assert np.allclose(affine.compose(t[5], affine.invert(t[5])), np.eye(3), atol=1e-9)
    assert np.allclose(affine.linear(t[1, :2, :2], pts), pts @ t[1, :2, :2].T, atol=1e-12)
    assert np.allclose(affine.dot2(pts, pts[::-1]), (pts * pts[::-1]).sum(axis=1), atol=1e-12)


def _python_product(a: np.ndarray, b: np.ndarray) -> list[list[float]]:
    # Python floats: every multiply and add rounded on its own
    x, y = a.tolist(), b.tolist()
    return [[x[i][0] * y[0][k] + x[i][1] * y[1][k] + x[i][2] * y[2][k] for k in range(3)] for i in range(3)]


def test_the_compiled_products_round_every_step_as_python_does() -> None:
    # (1 + e)(1 - e) = 1 - e^2 rounds to 1 on its own; fused with the next term (a
    # multiply-add) it would keep the -e^2, and (1 + e)(-(1 - e)) alike
    e = 2.0**-30
    a, b = np.eye(3), np.eye(3)
    a[0, 0], a[0, 1] = 1 + e, 1 + e
    b[0, 0], b[1, 0] = 1 - e, -(1 - e)
    assert affine.compose(a, b)[0, 0] == 0.0
    rng = np.random.default_rng(11)
    t, u = _maps(rng, 40), _maps(rng, 40)
    got = affine.compose(t, u)
    assert all(got[n].tolist() == _python_product(t[n], u[n]) for n in range(40))


def test_compose_down_places_each_child_after_its_parent() -> None:
    # a tree 0 -> 1 -> 3, 0 -> 2, listed parents first: each map is its parent's after its step
    rng = np.random.default_rng(12)
    step = _maps(rng, 3)
    transforms = np.empty((4, 3, 3))
    transforms[0] = _maps(rng, 1)[0]
    affine.compose_down(transforms, np.array([1, 2, 3]), np.array([0, 0, 1]), step)
    assert transforms[1].tolist() == _python_product(transforms[0], step[0])
    assert transforms[2].tolist() == _python_product(transforms[0], step[1])
    assert transforms[3].tolist() == _python_product(transforms[1], step[2])


_PLAN_KEYS = """
import sys
import numpy  # first, as Snakemake loads it: shredfold's environment pin comes too late here
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
plan = make_plan(load_spec(sys.argv[1]), None)
print(sorted(s.key for s in plan.item_sets.values() if s.task != "shred"))
"""


@pytest.mark.skipif(
    settings()["pinned"] != "yes", reason=f"needs an x86-64 processor with AVX2 and FMA: {settings().get('why')}"
)
def test_procedural_designs_get_the_same_keys_under_any_blas_kernel() -> None:
    # Planned in the Snakemake process, where NumPy is loaded before shredfold: the folds of
    # the procedural designs must not depend on which kernels OpenBLAS picked for the
    # processor (with matrix products they did: other design keys under SkylakeX than Haswell).
    keys = set()
    for core, threads in (("Haswell", "1"), ("SkylakeX", "2"), ("Sandybridge", "1")):
        env = {**os.environ, "OPENBLAS_CORETYPE": core, "OPENBLAS_NUM_THREADS": threads}
        out = subprocess.run(
            [sys.executable, "-c", _PLAN_KEYS, str(ROOT / "specs" / "default.yaml")],
            env=env, capture_output=True, text=True, check=True, timeout=300,
        )  # fmt: skip
        keys.add(out.stdout.strip())
    assert len(keys) == 1
