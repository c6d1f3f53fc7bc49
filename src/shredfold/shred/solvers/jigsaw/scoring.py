"""Scoring a reassembly against the answer key (``hidden.json``); never used by the solver.

Poses here follow the solver's convention: a 3x3 matrix maps a scrap image's pixel
coordinates (pixel centres at integers, as the outline tracer reports them) to page
coordinates (pixel corners at integers, as the cutter's polygons are written).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from shredfold.shred.solvers.jigsaw.geometry import angle_of, apply


def truth_poses(hidden: dict[str, Any]) -> list[np.ndarray]:
    """Per presented scrap, its true pose (scrap pixel -> page), from ``hidden.json``."""
    out = []
    for p in hidden["presented"]:
        m = np.vstack([np.asarray(p["matrix"], dtype=np.float64), [0.0, 0.0, 1.0]])
        ox, oy = p["scrap_origin"]
        # scrap pixel centre -> scrap continuous -> piece continuous -> page
        to_piece = np.array([[1.0, 0.0, 0.5 - ox], [0.0, 1.0, 0.5 - oy], [0.0, 0.0, 1.0]])
        out.append(np.linalg.inv(m) @ to_piece)
    return out


def relative_error(
    est_i: np.ndarray, est_j: np.ndarray, true_i: np.ndarray, true_j: np.ndarray,
    points: np.ndarray,
) -> tuple[float, float]:
    """(max px, degrees) between estimated and true placement of j relative to i."""
    est = np.linalg.inv(est_i) @ est_j
    true = np.linalg.inv(true_i) @ true_j
    px = float(np.abs(apply(est, points) - apply(true, points)).max())
    deg = float(np.degrees(angle_of(est) - angle_of(true)))
    return px, abs((deg + 180.0) % 360.0 - 180.0)


def cluster_errors(
    poses: Sequence[np.ndarray],
    members: Sequence[int],
    truth: Sequence[np.ndarray],
    outlines: Sequence[np.ndarray],
) -> list[tuple[float, float]]:
    """Per member: (max px, degrees) off, once the cluster is laid on the page by its
    least-squares best rigid fit (so no single piece's error is blamed on the others)."""
    from shredfold.shred.solvers.jigsaw.geometry import fit

    src = np.vstack([apply(poses[m], outlines[m][::10]) for m in members])
    dst = np.vstack([apply(truth[m], outlines[m][::10]) for m in members])
    g = fit(src, dst)
    out = []
    for m in members:
        est = g @ poses[m]
        px = float(np.abs(apply(est, outlines[m]) - apply(truth[m], outlines[m])).max())
        deg = float(np.degrees(angle_of(est) - angle_of(truth[m])))
        out.append((px, abs((deg + 180.0) % 360.0 - 180.0)))
    return out


def join_correct(
    i: int, j: int, pose: np.ndarray, truth: Sequence[np.ndarray], points: np.ndarray,
    tolerance_px: float = 4.0,
) -> bool:
    """Whether a join (pose of j in i's frame) puts j where it truly lies next to i."""
    true = np.linalg.inv(truth[i]) @ truth[j]
    return float(np.abs(apply(pose, points) - apply(true, points)).max()) <= tolerance_px


# ------------------------------------------------------------------ composites


def composite_polygons(hidden: dict[str, Any], scale: float = 1.0) -> list[np.ndarray]:
    """Per presented piece, its cut polygon in the table-top photo (pixel corners at
    integers), for a photo scaled by ``scale`` from the stored composite."""
    out = []
    for p in hidden["presented"]:
        poly = np.asarray(hidden["polygons"][p["index"]], dtype=np.float64)
        m = np.asarray(p["composite_matrix"], dtype=np.float64)
        out.append((poly @ m[:, :2].T + m[:, 2]) * scale)
    return out


def composite_masks(
    hidden: dict[str, Any], shape: tuple[int, int], scale: float = 1.0
) -> list[np.ndarray]:
    """Per presented piece, the pixels (centres) its polygon covers in an (h, w) photo."""
    import cv2

    bits = 4
    out = []
    for poly in composite_polygons(hidden, scale):
        mask = np.zeros(shape, np.uint8)
        pts = np.round((poly - 0.5) * (1 << bits)).astype(np.int32)
        cv2.fillPoly(mask, [pts], 1, lineType=cv2.LINE_8, shift=bits)
        out.append(mask.astype(bool))
    return out


def crop_truth_pose(
    hidden: dict[str, Any], k: int, origin: tuple[int, int], scale: float = 1.0
) -> np.ndarray:
    """True pose (crop pixel centre -> page) of presented piece ``k`` cut out of the photo
    as a crop whose top-left pixel is ``origin`` (x, y) of the photo."""
    p = hidden["presented"][k]
    m = np.vstack([np.asarray(p["composite_matrix"], dtype=np.float64), [0.0, 0.0, 1.0]])
    x0, y0 = origin
    crop_to_photo = np.array([[1.0, 0.0, x0 + 0.5], [0.0, 1.0, y0 + 0.5], [0.0, 0.0, 1.0]])
    unscale = np.diag([1.0 / scale, 1.0 / scale, 1.0])
    return np.linalg.inv(m) @ unscale @ crop_to_photo
