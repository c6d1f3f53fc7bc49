"""The flat (2D) synthesizer: paper tint, mild lighting gradient, sensor noise, drop shadow.

All scraps of a sample come from one sheet and lie on one table under one lamp: they share
the paper tint and the light direction (so shadows fall the same way); each scrap gets its
own small brightness change and lighting ramp, as pieces lying at slightly different angles
to the light do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from shredfold.shred.modes import (
    BRIGHTNESS_SCALE,
    EDGE_SHADE,
    FLAT_VERSION,
    NOISE_TILE,
    TINT_SCALE,
    WARM,
    flat_params,
)
from shredfold.shred.pieces import Piece
from shredfold.shred.synth import Compositing, Scrap, register
from shredfold.shred.texture import soft_noise
from shredfold.spec import FlatSettings, SynthesisSettings


@register("flat")
class FlatSynthesizer(Compositing):
    mode = "flat"
    version = FLAT_VERSION

    def __init__(self, settings: SynthesisSettings) -> None:
        self.synthesis = settings
        self.settings: FlatSettings = settings.flat

    def params(self) -> dict[str, Any]:
        return flat_params(self.synthesis)

    def scraps(self, pieces: Sequence[Piece], rng: np.random.Generator) -> list[Scrap]:
        s = self.settings
        light = rng.uniform(0.0, 2 * math.pi)
        shift = (
            round(s.shadow_offset * math.cos(light)),
            round(s.shadow_offset * math.sin(light)),
        )
        sheet = 1.0 + s.tint * TINT_SCALE * rng.standard_normal() * np.asarray(WARM)
        # soft, not white: the top octave of sensor noise costs the most bytes and shows least
        tile = np.stack([soft_noise(NOISE_TILE, NOISE_TILE, rng) for _ in range(3)])
        tile *= np.float32(s.noise)
        return [self._scrap(p, shift, sheet, tile, rng) for p in pieces]

    def _scrap(
        self,
        piece: Piece,
        shift: tuple[int, int],
        sheet: np.ndarray,
        tile: np.ndarray,
        rng: np.random.Generator,
    ) -> Scrap:
        s = self.settings
        h, w = piece.image.shape[:2]
        *planes, alpha = cv2.split(piece.image)
        gains = sheet * (1.0 + s.tint * BRIGHTNESS_SCALE * rng.standard_normal())
        phi = rng.uniform(0.0, 2 * math.pi)
        # Wrapped reads of the tile from a random offset, one contiguous plane per channel.
        oy, ox = (int(v) for v in rng.integers(0, NOISE_TILE, 2))
        iy = (np.arange(h) + oy) % NOISE_TILE
        ix = (np.arange(w) + ox) % NOISE_TILE

        # Lighting: a linear ramp of ±lighting/2 across the piece's diagonal.
        k = s.lighting / 2 / max(1.0, math.hypot(w, h) / 2)
        gx = (np.arange(w, dtype=np.float32) - np.float32(w / 2)) * np.float32(k * math.cos(phi))
        gy = (np.arange(h, dtype=np.float32) - np.float32(h / 2)) * np.float32(k * math.sin(phi))
        light = np.add.outer(gy, gx)
        light += np.float32(1.0)
        # The cut edge: a slightly darker rim along the outline.
        inner = cv2.erode(alpha, np.ones((3, 3), np.uint8))
        light[(alpha > 0) & (inner < 255)] *= np.float32(EDGE_SHADE)

        out = []
        for c, plane in enumerate(planes):
            v = plane.astype(np.float32)
            v *= light
            v *= np.float32(gains[c])
            v += tile[c].take(iy, axis=0).take(ix, axis=1)
            np.rint(v, out=v)
            np.clip(v, 0, 255, out=v)
            out.append(v.astype(np.uint8))
        on_paper = (alpha > 0).view(np.uint8)
        paper_rgb = cv2.merge(out)
        # Transparent pixels carry no colour: nothing to leak, and smaller PNGs.
        paper_rgb = cv2.bitwise_and(paper_rgb, paper_rgb, mask=on_paper)

        pad = math.ceil(abs(shift[0]) + abs(shift[1]) + 3 * s.shadow_blur) + 2
        shadow = self._shadow(alpha, pad, shift)
        return self._over_shadow(paper_rgb, alpha, shadow, pad)

    def _shadow(self, alpha: np.ndarray, pad: int, shift: tuple[int, int]) -> np.ndarray:
        """The silhouette, blurred, shifted away from the light, scaled by the opacity
        (uint16, 0..255, on the padded canvas)."""
        s = self.settings
        h, w = alpha.shape
        H, W = h + 2 * pad, w + 2 * pad
        dx, dy = shift
        sil = np.zeros((H, W), dtype=np.uint8)
        sil[pad + dy : pad + dy + h, pad + dx : pad + dx + w] = alpha
        if s.shadow_blur >= 2.0:
            # A soft shadow has no detail to lose at half size; blurring there is 4x cheaper.
            half = cv2.resize(sil, ((W + 1) // 2, (H + 1) // 2), interpolation=cv2.INTER_AREA)
            half = cv2.GaussianBlur(half, (0, 0), s.shadow_blur / 2)
            sil = cv2.resize(half, (W, H), interpolation=cv2.INTER_LINEAR_EXACT)
        elif s.shadow_blur > 0:
            sil = cv2.GaussianBlur(sil, (0, 0), s.shadow_blur)
        return (sil.astype(np.uint16) * round(s.shadow_opacity * 255) + 127) // 255

    @staticmethod
    def _over_shadow(
        paper_rgb: np.ndarray, alpha: np.ndarray, shadow: np.ndarray, pad: int
    ) -> Scrap:
        """Paper over a black shadow, straight alpha: a = a_p + s(1 - a_p), rgb = rgb_p·a_p/a."""
        h, w = alpha.shape
        H, W = shadow.shape
        a16 = alpha.astype(np.uint16)
        under = shadow[pad : pad + h, pad : pad + w]
        a_out = a16 + (under * (255 - a16) + 127) // 255
        shadow[pad : pad + h, pad : pad + w] = a_out
        rgb = np.zeros((H, W, 3), dtype=np.uint8)
        rgb[pad : pad + h, pad : pad + w] = paper_rgb
        image = cv2.merge([*cv2.split(rgb), shadow.astype(np.uint8)])
        soft = np.flatnonzero((alpha.reshape(-1) - 1) < 254)  # 0 < a < 255 (uint8 wraps)
        if soft.size:
            rows, cols = np.divmod(soft, w)
            rows += pad
            cols += pad
            a_in = a16.reshape(-1)[soft][:, None].astype(np.uint32)
            a_o = a_out.reshape(-1)[soft][:, None].astype(np.uint32)
            px = image[rows, cols, :3].astype(np.uint32)
            image[rows, cols, :3] = ((px * a_in + a_o // 2) // a_o).astype(np.uint8)
        paper = np.zeros((H, W), dtype=bool)
        paper[pad : pad + h, pad : pad + w] = alpha > 0
        return Scrap(image=image, paper=paper, origin=(pad, pad))
