"""Pieces: the masks partition the page and the hidden poses put every piece back."""

from __future__ import annotations

import numpy as np
import pytest

from shredfold.shred.pieces import cut_pieces, label_map, place_back
from shredfold.shred.voronoi import cut

W, H = 480, 640


@pytest.fixture(scope="module")
def page() -> np.ndarray:
    """A page with structure everywhere (stripes and text-like dark dots) to catch misplacement."""
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:H, 0:W]
    img = np.stack([(xx * 255 // W), (yy * 255 // H), ((xx + yy) % 64) * 4], axis=-1)
    img = img.astype(np.uint8)
    dots = rng.random((H, W)) < 0.02
    img[dots] = 20
    return img


def _reassemble(pieces, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    acc = np.zeros((height, width, 4), np.float32)
    for p in pieces:
        acc += place_back(p, width, height)
    alpha = acc[..., 3]
    rgb = acc[..., :3] * 255 / np.maximum(alpha, 1)[..., None]
    return rgb, alpha


def test_labels_partition_the_page() -> None:
    polys = cut(W, H, 16, np.random.default_rng(1), 3.0)
    labels = label_map(polys, W, H)
    assert labels.max() == 15 and (labels < 16).all()
    counts = np.bincount(labels.ravel(), minlength=16)
    areas = np.array([p.area for p in polys])
    assert counts.sum() == W * H
    assert np.abs(counts - areas).max() < 0.05 * areas.min()  # pixels follow the polygons


def test_unrotated_pieces_reassemble_exactly(page: np.ndarray) -> None:
    polys = cut(W, H, 12, np.random.default_rng(2), 3.0)
    pieces = cut_pieces(page, polys, np.random.default_rng(3), max_rotation=0.0)
    rgb, alpha = _reassemble(pieces, W, H)
    assert (alpha == 255).all()
    assert np.array_equal(np.rint(rgb).astype(np.uint8), page)


@pytest.mark.parametrize("n", [1, 12])
def test_rotated_pieces_go_back_with_their_poses(page: np.ndarray, n: int) -> None:
    polys = cut(W, H, n, np.random.default_rng(4), 3.0)
    pieces = cut_pieces(page, polys, np.random.default_rng(5), max_rotation=180.0)
    assert len(pieces) == n and [p.index for p in pieces] == list(range(n))
    rgb, alpha = _reassemble(pieces, W, H)
    # Two bicubic resamplings blur a little; away from the page border, coverage is whole
    # and colours match closely.
    inner = (slice(3, H - 3), slice(3, W - 3))
    assert np.abs(alpha[inner] - 255).mean() < 1.0
    err = np.abs(rgb - page)[inner]
    assert err.mean() < 4.0
    assert np.percentile(err, 50) < 2.0


def test_angles_within_bounds_and_alpha_is_the_piece(page: np.ndarray) -> None:
    polys = cut(W, H, 8, np.random.default_rng(6), 3.0)
    pieces = cut_pieces(page, polys, np.random.default_rng(7), max_rotation=30.0)
    assert len(pieces) == len(polys) == 8  # a loop over no pieces would pass
    for piece, poly in zip(pieces, polys, strict=True):
        assert -30.0 <= piece.angle <= 30.0
        img = piece.image
        assert img.dtype == np.uint8 and img.shape[2] == 4
        assert (img[img[..., 3] == 0, :3] == 0).all()  # clear pixels carry no colour
        covered = img[..., 3].astype(np.float64).sum() / 255
        assert covered == pytest.approx(poly.area, rel=0.02)
        assert (img[0, :, 3] == 0).all() and (img[:, 0, 3] == 0).all()  # room to spare
        x0, y0 = piece.offset
        assert poly.bounds[0] >= x0 - 1 and poly.bounds[1] >= y0 - 1


def test_same_rng_same_pieces(page: np.ndarray) -> None:
    polys = cut(W, H, 6, np.random.default_rng(8), 3.0)
    a = cut_pieces(page, polys, np.random.default_rng(9), 180.0)
    b = cut_pieces(page, polys, np.random.default_rng(9), 180.0)
    assert all(
        np.array_equal(x.image, y.image) and x.matrix == y.matrix for x, y in zip(a, b, strict=True)
    )
