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
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    for i in range(3):
        for k in range(3):
            out[..., i, k] = a[..., i, 0] * b[..., 0, k] + a[..., i, 1] * b[..., 1, k] + a[..., i, 2] * b[..., 2, k]
    return out


def invert(t: np.ndarray) -> np.ndarray:
    """The inverse of an affine map (3, 3) whose linear part is invertible."""
    a, b, c, d = t[0, 0], t[0, 1], t[1, 0], t[1, 1]
    det = a * d - b * c
    out = np.zeros((3, 3))
    out[0, 0], out[0, 1], out[1, 0], out[1, 1] = d / det, -b / det, -c / det, a / det
    out[0, 2] = -(out[0, 0] * t[0, 2] + out[0, 1] * t[1, 2])
    out[1, 2] = -(out[1, 0] * t[0, 2] + out[1, 1] * t[1, 2])
    out[2, 2] = 1.0
    return out
