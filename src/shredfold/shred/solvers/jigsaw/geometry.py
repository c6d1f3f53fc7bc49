"""Planar rigid and similarity transforms as 3x3 homogeneous matrices."""

from __future__ import annotations

import numpy as np


def rigid(angle: float, tx: float = 0.0, ty: float = 0.0, scale: float = 1.0) -> np.ndarray:
    """Turn by ``angle`` radians (x towards y), scale, then translate."""
    c, s = np.cos(angle) * scale, np.sin(angle) * scale
    return np.array([[c, -s, tx], [s, c, ty], [0.0, 0.0, 1.0]])


def apply(t: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return pts @ t[:2, :2].T + t[:2, 2]


def angle_of(t: np.ndarray) -> float:
    return float(np.arctan2(t[1, 0], t[0, 0]))


def scale_of(t: np.ndarray) -> float:
    return float(np.sqrt(abs(np.linalg.det(t[:2, :2]))))


def fit(src: np.ndarray, dst: np.ndarray, *, scale: bool = False) -> np.ndarray:
    """Least-squares rigid (or similarity) transform taking ``src`` points onto ``dst``."""
    ms, md = src.mean(axis=0), dst.mean(axis=0)
    a, b = src - ms, dst - md
    # 2D Procrustes in closed form: the best rotation angle is atan2(sum cross, sum dot).
    dot = float((a * b).sum())
    cross = float((a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]).sum())
    th = np.arctan2(cross, dot)
    k = 1.0
    if scale:
        k = float(np.hypot(dot, cross) / max((a * a).sum(), 1e-12))
    r = rigid(th, scale=k)
    t = md - r[:2, :2] @ ms
    r[:2, 2] = t
    return r


def wrap_deg(d: float, period: float = 360.0) -> float:
    """``d`` folded into [-period/2, period/2)."""
    return (d + period / 2) % period - period / 2
