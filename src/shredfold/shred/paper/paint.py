"""Pixels of a laid-out page: flat paper, boxes snapped to whole pixels, glyphs by FreeType.

Chrome's screenshot of the authors' page is flat ``#fdfbf7``: their ``apply_paper_texture``
lays the screenshot over noise, but the screenshot is opaque, so the noise never shows. Boxes
are snapped to whole pixels as Chrome snaps them. Glyphs (by id, as shaped, so ligatures are
the font's own) are rasterised as Chrome's do (:mod:`.raster`) and blended one by one at the
positions shaping and justification gave them (to a quarter pixel across, a whole one down,
as Chrome places them).
"""

from __future__ import annotations

import functools
import struct

import numpy as np
from PIL import Image, ImageDraw

from shredfold.shred.fonts import Role
from shredfold.shred.paper.blocks import Layout, Rect
from shredfold.shred.paper.css import PAPER
from shredfold.shred.paper.inline import Placed
from shredfold.shred.paper.raster import blend, glyph_mask, pen
from shredfold.shred.paper.shaping import face


def _snap(v: float) -> int:
    return int(v + 0.5) if v >= 0 else -int(-v + 0.5)


def _rect(image: Image.Image, draw: ImageDraw.ImageDraw, r: Rect) -> None:
    x0, y0, x1, y1 = _snap(r.x0), _snap(r.y0), _snap(r.x1), _snap(r.y1)
    if x1 <= x0 or y1 <= y0:
        return
    box = (x0, y0, x1 - 1, y1 - 1)
    if r.shape != "rect":
        _round_shape(image, r, box)
    elif r.radius > 0:
        corners = (r.round_left, r.round_right, r.round_right, r.round_left)
        draw.rounded_rectangle(box, radius=r.radius, fill=r.colour, corners=corners)
    else:
        draw.rectangle(box, fill=r.colour)


def _round_shape(image: Image.Image, r: Rect, box: tuple[int, int, int, int]) -> None:
    """A disc or a 1 px circle, drawn at 4x and scaled down (Chrome antialiases them)."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0 + 1, y1 - y0 + 1
    k = 4
    mask = Image.new("L", (w * k, h * k), 0)
    shape = ImageDraw.Draw(mask)
    if r.shape == "disc":
        shape.ellipse((0, 0, w * k - 1, h * k - 1), fill=255)
    else:
        shape.ellipse((0, 0, w * k - 1, h * k - 1), outline=255, width=k)
    mask = mask.resize((w, h), Image.Resampling.BOX)
    image.paste(r.colour, (x0, y0, x0 + w, y0 + h), mask)


@functools.cache
def _underline(role: Role) -> tuple[int, int]:
    """The face's underline position (below the baseline) and thickness, in font units."""
    data = face(role).hb_font.face.reference_table("post").data  # type: ignore[attr-defined]
    position, thickness = struct.unpack(">hh", bytes(data[8:12]))
    return -position, thickness


def _draw_char(pixels: np.ndarray, c: Placed, baseline: float) -> None:
    x = c.x
    for g in c.glyphs:
        whole, quarter = pen(x + g.dx)
        mask = glyph_mask(c.role, c.size, g.gid, c.bold, quarter)
        blend(pixels, mask, whole, _snap(baseline - g.dy), c.colour)
        x += g.advance


def paint(layout: Layout, width: int, height: int) -> Image.Image:
    image = Image.new("RGB", (width, height), PAPER)
    draw = ImageDraw.Draw(image)
    for r in layout.rects:
        _rect(image, draw, r)
    for r in layout.inline_rects:
        _rect(image, draw, r)
    pixels = np.array(image)
    underlines: list[Rect] = []
    for tl in layout.lines:
        line = tl.line
        for c in line.chars:
            if tl.clip is not None and c.x >= tl.clip:
                continue
            _draw_char(pixels, c, line.baseline)
            if c.underline:
                pos, thick = _underline(c.role)
                upem = face(c.role).upem
                y = _snap(line.baseline + pos * c.size / upem)
                t = max(1, _snap(thick * c.size / upem))
                underlines.append(Rect(c.x, y, c.x + c.width, y + t, c.colour))
    image = Image.fromarray(pixels)
    draw = ImageDraw.Draw(image)
    for r in underlines:
        _rect(image, draw, r)
    return image
