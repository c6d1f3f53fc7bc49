"""Glyph coverage as Chrome's text renderer makes it on Linux: FreeType with slight hinting.

Chrome rasterises through Skia and FreeType with fontconfig's default "hintslight": outlines
snapped vertically only, by FreeType's light auto-hinter (so DejaVu Serif's x-height at 28 px
is 15 rows, where the font's own hinting, which Pillow uses, gives 14), and horizontally at a
quarter-pixel position (Skia's subpixel positioning: four renderings of each glyph). This module loads
each glyph the same way through the pinned ``freetype-py`` wheel (which carries its own
FreeType build), by glyph id, as shaping produced it. A face Chrome thickens for a bold
element (a fallback face in regular weight) is emboldened as Skia does it (:func:`embolden`).

The coverage is then mapped through :data:`COVERAGE` before blending: Skia boosts the
contrast of dark text on a light ground (its "mask gamma"); the table was fitted on
Chromium's screenshots of the same pages (``bench/paper_page.py``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from shredfold.shred.fonts import FONTS, Role, font_path


def embolden(size: float) -> float:
    """How much wider Skia makes a glyph it emboldens (px): its outline is stroked 1/24 of
    the size wide at 9 px and below, 1/32 at 36 px and above, linearly between."""
    t = min(1.0, max(0.0, (size - 9.0) / (36.0 - 9.0)))
    return size * (1 / 24 + t * (1 / 32 - 1 / 24))


@dataclass(frozen=True)
class Mask:
    coverage: np.ndarray  # uint8 (rows, cols)
    left: int  # from the pen position to the bitmap's left column
    top: int  # from the baseline up to the bitmap's top row


@functools.cache
def _face(role: Role) -> object:
    import freetype

    return freetype.Face(str(font_path(role)), FONTS[role].index)


SUBPIXELS = 4  # horizontal glyph positions per pixel (Skia's subpixel positioning)


def pen(x: float) -> tuple[int, int]:
    """(whole pixel, quarter) where a glyph drawn at ``x`` goes: Skia rounds a glyph's
    horizontal position to a quarter pixel and draws one of four renderings of it."""
    q = int(np.floor(x * SUBPIXELS + 0.5))
    return q // SUBPIXELS, q % SUBPIXELS


@functools.lru_cache(maxsize=16384)
def glyph_mask(role: Role, size: float, gid: int, bold: bool = False, quarter: int = 0) -> Mask:
    """The coverage of glyph ``gid`` drawn ``quarter``/4 px right of a whole pixel."""
    import freetype

    face = _face(role)
    em = round(size * 64)
    face.set_char_size(em, 0, 72, 72)  # type: ignore[attr-defined]
    face.load_glyph(gid, freetype.FT_LOAD_TARGET_LIGHT | freetype.FT_LOAD_NO_BITMAP)  # type: ignore[attr-defined]
    slot = face.glyph  # type: ignore[attr-defined]
    if bold and slot.format == freetype.FT_GLYPH_FORMAT_OUTLINE:
        freetype.raw.FT_Outline_Embolden(freetype.ft_structs.byref(slot._FT_GlyphSlot.contents.outline), round(embolden(size) * 64))
    if quarter and slot.format == freetype.FT_GLYPH_FORMAT_OUTLINE:
        freetype.raw.FT_Outline_Translate(freetype.ft_structs.byref(slot._FT_GlyphSlot.contents.outline), quarter * 64 // SUBPIXELS, 0)
    slot.render(freetype.FT_RENDER_MODE_NORMAL)
    bitmap = slot.bitmap
    rows, cols, pitch = bitmap.rows, bitmap.width, bitmap.pitch
    if rows == 0 or cols == 0:
        return Mask(np.zeros((0, 0), dtype=np.uint8), 0, 0)
    data = np.frombuffer(bytes(bitmap.buffer), dtype=np.uint8).reshape(rows, pitch)[:, :cols]
    return Mask(np.ascontiguousarray(data), slot.bitmap_left, slot.bitmap_top)


# Coverage (0..255) to opacity (0..255), fitted on Chromium's screenshots: its text is
# darker than the raw coverage. Identity until fitted.
COVERAGE = np.arange(256, dtype=np.int32)


def blend(pixels: np.ndarray, mask: Mask, x: int, baseline: int, colour: tuple[int, int, int]) -> None:
    """Draw ``mask`` with its pen at (``x``, ``baseline``) into ``pixels`` (uint8 RGB), in
    integers (the same bytes on any CPU)."""
    h, w = mask.coverage.shape
    if not h:
        return
    x0, y0 = x + mask.left, baseline - mask.top
    cx0, cy0 = max(0, -x0), max(0, -y0)
    cx1, cy1 = min(w, pixels.shape[1] - x0), min(h, pixels.shape[0] - y0)
    if cx1 <= cx0 or cy1 <= cy0:
        return
    alpha = COVERAGE[mask.coverage[cy0:cy1, cx0:cx1]][..., None]
    region = pixels[y0 + cy0 : y0 + cy1, x0 + cx0 : x0 + cx1]
    mixed = region.astype(np.int32) * (255 - alpha) + np.asarray(colour, dtype=np.int32) * alpha
    region[...] = ((mixed + 127) // 255).astype(np.uint8)
