"""2-D affine maps as 3x3 matrices (last row 0 0 1), applied, composed and inverted with
one multiply or add at a time.

Not with ``@`` or ``numpy.linalg``: NumPy hands those to BLAS and LAPACK, whose kernels
differ from one processor to the next (the order of the sums, fused multiply-adds), so the
same folds gave coordinates that differed in their last bits between machines, and a design's
key hashes its coordinates (a procedural design planned under OpenBLAS's SkylakeX kernel got
another key than under its Haswell kernel). Written out element by element, every step is
one IEEE operation, the same on every machine.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def apply(t: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Points (..., 2) mapped by ``t`` (3, 3), or by one map per point (..., 3, 3)."""
    x, y = pts[..., 0], pts[..., 1]
    return np.stack(
        (
            t[..., 0, 0] * x + t[..., 0, 1] * y + t[..., 0, 2],
            t[..., 1, 0] * x + t[..., 1, 1] * y + t[..., 1, 2],
        ),
        axis=-1,
    )


def linear(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors (..., 2) mapped by the 2x2 matrix ``m`` (no translation)."""
    x, y = v[..., 0], v[..., 1]
    return np.stack((m[0, 0] * x + m[0, 1] * y, m[1, 0] * x + m[1, 1] * y), axis=-1)


def dot2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The dot product of 2-vectors along the last axis (broadcasting)."""
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1]


def compose(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a`` after ``b``: the matrix product of 3x3 maps, stacked over leading axes."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    flat_a, flat_b = (
        np.ascontiguousarray(np.broadcast_to(np.asarray(x, float), shape)).reshape(-1, 3, 3) for x in (a, b)
    )
    out = np.empty_like(flat_a)
    _products(flat_a, flat_b, out)
    return out.reshape(shape)


def compose_down(transforms: np.ndarray, child: np.ndarray, parent: np.ndarray, step: np.ndarray) -> None:
    """``transforms[child[n]] = transforms[parent[n]]`` after ``step[n]``, for n in turn, in
    place: down a tree whose nodes ``child`` lists so that each parent's map is set first
    (a search order). One compiled pass instead of a :func:`compose` per tree level."""
    child, parent = np.asarray(child, np.int64), np.asarray(parent, np.int64)
    _down(transforms, child, parent, np.ascontiguousarray(step, float))


# Compiled, the products stay one IEEE operation at a time: numba leaves multiply-adds unfused
# unless ``fastmath`` allows it (tests/origami/test_affine.py checks on a case where fusing
# would show).
@njit(cache=True, nogil=True)
def _product(a, b, out):  # noqa: ANN001, ANN202
    for i in range(3):
        for k in range(3):
            out[i, k] = a[i, 0] * b[0, k] + a[i, 1] * b[1, k] + a[i, 2] * b[2, k]


@njit(cache=True, nogil=True)
def _products(a, b, out):  # noqa: ANN001, ANN202
    for n in range(len(out)):
        _product(a[n], b[n], out[n])


@njit(cache=True, nogil=True)
def _down(transforms, child, parent, step):  # noqa: ANN001, ANN202
    for n in range(len(child)):
        _product(transforms[parent[n]], step[n], transforms[child[n]])


def invert(t: np.ndarray) -> np.ndarray:
    """The inverse of an affine map (3, 3) whose linear part is invertible, or of each of a
    stack of them (..., 3, 3)."""
    a, b, c, d = t[..., 0, 0], t[..., 0, 1], t[..., 1, 0], t[..., 1, 1]
    det = a * d - b * c
    out = np.zeros(np.shape(t))
    out[..., 0, 0], out[..., 0, 1], out[..., 1, 0], out[..., 1, 1] = d / det, -b / det, -c / det, a / det
    out[..., 0, 2] = -(out[..., 0, 0] * t[..., 0, 2] + out[..., 0, 1] * t[..., 1, 2])
    out[..., 1, 2] = -(out[..., 1, 0] * t[..., 0, 2] + out[..., 1, 1] * t[..., 1, 2])
    out[..., 2, 2] = 1.0
    return out
