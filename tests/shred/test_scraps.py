"""Flat scraps: opaque paper with a darker rim, a soft shadow around it, one light."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from shredfold.shred.pieces import cut_pieces
from shredfold.shred.scraps import FlatSynthesizer
from shredfold.shred.synth import Synthesizer, get_synthesizer
from shredfold.shred.voronoi import cut
from shredfold.spec import FlatSettings, SynthesisSettings


@pytest.fixture(scope="module")
def pieces():
    page = np.full((500, 400, 3), 235, np.uint8)
    page[::25] = 30  # some ink
    polys = cut(400, 500, 6, np.random.default_rng(0), 3.0)
    return cut_pieces(page, polys, np.random.default_rng(1), 180.0)


def _scraps(pieces, **flat):
    synth = SynthesisSettings(flat=FlatSettings(**flat))
    return get_synthesizer(synth).scraps(pieces, np.random.default_rng(2))


def test_flat_is_a_synthesizer() -> None:
    synth = get_synthesizer(SynthesisSettings())
    assert isinstance(synth, FlatSynthesizer) and isinstance(synth, Synthesizer)
    assert synth.mode == "flat" and synth.version >= 1
    assert "compositor" in synth.params()


def test_paper_is_opaque_and_shadow_is_translucent(pieces) -> None:
    for piece, scrap in zip(pieces, _scraps(pieces), strict=True):
        alpha = scrap.image[..., 3]
        paper = scrap.paper
        inner = cv2.erode(paper.view(np.uint8), np.ones((9, 9), np.uint8)).astype(bool)
        assert (alpha[inner] == 255).all()
        shadow = alpha[~paper]
        assert (shadow > 0).sum() > 0.1 * paper.sum() ** 0.5  # a band, not a speck
        assert shadow.max() < 255 and shadow.max() <= round(0.45 * 255) + 1
        assert (scrap.image[~paper, :3] == 0).all()  # the shadow is black, only alpha varies
        ox, oy = scrap.origin
        h, w = piece.image.shape[:2]
        assert np.array_equal(paper[oy : oy + h, ox : ox + w], piece.image[..., 3] > 0)


def test_all_shadows_fall_the_same_way(pieces) -> None:
    directions = []
    for scrap in _scraps(pieces, shadow_offset=10.0, shadow_blur=2.0):
        alpha = scrap.image[..., 3].astype(np.float64)
        shadow = np.where(scrap.paper, 0.0, alpha)
        ys, xs = np.nonzero(scrap.paper)
        sy, sx = np.nonzero(shadow)
        wts = shadow[sy, sx]
        dx = (sx * wts).sum() / wts.sum() - xs.mean()
        dy = (sy * wts).sum() / wts.sum() - ys.mean()
        directions.append(math.atan2(dy, dx))
    spread = max(abs(math.remainder(d - directions[0], 2 * math.pi)) for d in directions)
    assert spread < 0.6


def test_no_effects_keeps_the_piece_colours(pieces) -> None:
    scraps = _scraps(pieces, tint=0.0, lighting=0.0, noise=0.0, shadow_opacity=0.0)
    for piece, scrap in zip(pieces, scraps, strict=True):
        ox, oy = scrap.origin
        h, w = piece.image.shape[:2]
        got = scrap.image[oy : oy + h, ox : ox + w].astype(int)
        inner = cv2.erode(piece.image[..., 3], np.ones((5, 5), np.uint8)) == 255
        # only the rim is shaded
        assert np.abs(got[inner, :3] - piece.image[inner, :3].astype(int)).max() <= 1


def test_noise_and_tint_are_mild(pieces) -> None:
    for piece, scrap in zip(pieces, _scraps(pieces), strict=True):
        ox, oy = scrap.origin
        h, w = piece.image.shape[:2]
        inner = cv2.erode(piece.image[..., 3], np.ones((5, 5), np.uint8)) == 255
        diff = scrap.image[oy : oy + h, ox : ox + w][inner, :3].astype(int) - piece.image[
            inner, :3
        ].astype(int)
        assert 0 < np.abs(diff).mean() < 20
