"""Pixels of a laid-out page: flat paper, boxes snapped to whole pixels, glyphs by FreeType.

Chrome's screenshot of the authors' page is flat ``#fdfbf7``: their ``apply_paper_texture``
lays the screenshot over noise, but the screenshot is opaque, so the noise never shows. Boxes
are snapped to whole pixels as Chrome snaps them. Glyphs are drawn one by one with Pillow's
FreeType at the positions shaping and justification gave them, each at a whole pixel (Chrome
does not position glyphs at fractions of a pixel on a 1x screen). A ligature is drawn as the
character its glyph stands for. A fallback face in a bold element is thickened by Skia's
amount for synthetic bold.
"""

from __future__ import annotations

import functools
import struct

from PIL import Image, ImageDraw

from shredfold.shred.fonts import Role, load_font
from shredfold.shred.paper.blocks import Layout, Rect
from shredfold.shred.paper.css import PAPER
from shredfold.shred.paper.inline import Placed
from shredfold.shred.paper.shaping import _nominal, face


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


def synthetic_bold_stroke(size: float) -> float:
    """Half the outline growth Skia gives a face it emboldens: 1/24 of the size at 9 px and
    below, 1/32 at 36 px and above, linear between."""
    lo, hi = 9.0, 36.0
    t = min(1.0, max(0.0, (size - lo) / (hi - lo)))
    return size * (1 / 24 + t * (1 / 32 - 1 / 24)) / 2


@functools.cache
def _underline(role: Role) -> tuple[int, int]:
    """The face's underline position (below the baseline) and thickness, in font units."""
    data = face(role)._hb.face.reference_table("post").data  # type: ignore[attr-defined]
    position, thickness = struct.unpack(">hh", bytes(data[8:12]))
    return -position, thickness


def _glyph_text(c: Placed, gid: int) -> str:
    if len(c.glyphs) == 1 and _nominal(c.role, ord(c.ch)) == gid:
        return c.ch
    return face(c.role).glyph_char(gid) or c.ch


def _draw_char(draw: ImageDraw.ImageDraw, c: Placed, baseline: float) -> None:
    font = load_font(c.role, c.size)
    x = c.x
    stroke = synthetic_bold_stroke(c.size) if c.bold else 0.0
    for g in c.glyphs:
        text = _glyph_text(c, g.gid)
        if not text.isspace():
            xy = (_snap(x + g.dx), _snap(baseline - g.dy))
            draw.text(xy, text, font=font, fill=c.colour, anchor="ls", stroke_width=stroke, stroke_fill=c.colour)
        x += g.advance


def paint(layout: Layout, width: int, height: int) -> Image.Image:
    image = Image.new("RGB", (width, height), PAPER)
    draw = ImageDraw.Draw(image)
    for r in layout.rects:
        _rect(image, draw, r)
    for r in layout.inline_rects:
        _rect(image, draw, r)
    for tl in layout.lines:
        line = tl.line
        for c in line.chars:
            if tl.clip is not None and c.x >= tl.clip:
                continue
            _draw_char(draw, c, line.baseline)
            if c.underline:
                pos, thick = _underline(c.role)
                upem = face(c.role).upem
                y = _snap(line.baseline + pos * c.size / upem)
                t = max(1, _snap(thick * c.size / upem))
                _rect(image, draw, Rect(c.x, y, c.x + c.width, y + t, c.colour))
    return image
