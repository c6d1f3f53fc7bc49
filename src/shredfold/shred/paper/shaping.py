"""Faces, per-character font fallback and HarfBuzz shaping, as Chrome does them for these pages.

Chrome shapes text with HarfBuzz (kerning and ligatures on) using each face's unhinted
advances, and measures lines with them; so does this module, through the pinned ``uharfbuzz``
wheel (its HarfBuzz is compiled in: the same numbers on any machine). Positions are kept in
16.16 fixed point as Chrome's HarfBuzz glue keeps them.

A character goes to the first face that has a glyph for it: the element's own face (DejaVu
Serif or Sans Mono, in its weight and slant), then what fontconfig's fallback offers for
characters those lack: DejaVu Sans (symbols), then Noto Sans CJK JP (Chinese). Fallback
faces are used in their regular weight; a bold element gets them thickened ("synthetic bold"),
as Chrome draws them.

Vertical metrics are the face's ascent and descent at the font size, each rounded to a whole
pixel, as Chrome's font metrics are: they place the baseline in each line box.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from shredfold.shred.fonts import FONTS, Role, font_path
from shredfold.shred.paper.css import Font

FIXED = 65536  # HarfBuzz positions in 16.16 fixed point, as Chrome sets its fonts' scale


@dataclass(frozen=True)
class Face:
    role: Role
    upem: int
    ascender: int  # font units (hhea), as FreeType reports them
    descender: int  # font units, positive below the baseline

    @functools.cached_property
    def hb_font(self) -> object:
        import uharfbuzz as hb

        spec = FONTS[self.role]
        blob = hb.Blob.from_file_path(str(font_path(self.role)))
        return hb.Font(hb.Face(blob, spec.index))

    def has(self, ch: str) -> bool:
        return _nominal(self.role, ord(ch)) is not None

    def metrics(self, size: float) -> tuple[int, int]:
        """(ascent, descent) in whole pixels at ``size``."""
        return round(self.ascender * size / self.upem), round(self.descender * size / self.upem)


@functools.cache
def face(role: Role) -> Face:
    import uharfbuzz as hb

    spec = FONTS[role]
    blob = hb.Blob.from_file_path(str(font_path(role)))
    hb_face = hb.Face(blob, spec.index)
    font = hb.Font(hb_face)
    extents = font.get_font_extents("ltr")
    return Face(role, hb_face.upem, extents.ascender, -extents.descender)


@functools.lru_cache(maxsize=65536)
def _nominal(role: Role, cp: int) -> int | None:
    gid = face(role).hb_font.get_nominal_glyph(cp)  # type: ignore[attr-defined]
    return None if gid is None or gid == 0 else int(gid)


def primary_role(font: Font) -> Role:
    """The face an element's own text is set in."""
    base = "serif" if font.family == "serif" else "mono"
    if font.bold and font.italic:
        return f"{base}_bold_italic"  # type: ignore[return-value]
    if font.bold:
        return f"{base}_bold"  # type: ignore[return-value]
    if font.italic:
        return f"{base}_italic"  # type: ignore[return-value]
    return base  # type: ignore[return-value]


FALLBACK: tuple[Role, ...] = ("prose", "cjk_fallback")


def resolve(ch: str, font: Font) -> tuple[Role, bool]:
    """(face, synthetic bold) for ``ch`` in ``font``: the element's face if it has the glyph,
    else the first fallback that does (else the element's face, which draws its .notdef box)."""
    own = primary_role(font)
    if ch in "\t\n" or face(own).has(ch):
        return own, False
    for role in FALLBACK:
        if face(role).has(ch):
            return role, font.bold
    return own, False


@dataclass(frozen=True)
class Glyph:
    cluster: int  # index of its first character in the shaped text
    gid: int
    advance: float  # px
    dx: float
    dy: float


@functools.lru_cache(maxsize=4096)
def shape(text: str, role: Role, size: float, halt: tuple[int, ...] = ()) -> tuple[Glyph, ...]:
    """HarfBuzz's glyphs for ``text`` in ``role`` at ``size`` px (Chrome's default features),
    with the half-width forms (OpenType ``halt``) at the characters ``halt``."""
    import uharfbuzz as hb

    font = face(role).hb_font
    scale = round(size * FIXED)
    font.scale = (scale, scale)  # type: ignore[attr-defined]
    buf = hb.Buffer()
    buf.add_str(text)
    buf.guess_segment_properties()
    features = {"halt": [(i, i + 1, True) for i in halt]} if halt else {}
    hb.shape(font, buf, features)
    return tuple(
        Glyph(i.cluster, i.codepoint, p.x_advance / FIXED, p.x_offset / FIXED, p.y_offset / FIXED)
        for i, p in zip(buf.glyph_infos, buf.glyph_positions, strict=True)
    )


# ------------------------------------------------------------------ punctuation collapsing
# Chrome (``text-spacing-trim: normal``) sets a full-width CJK punctuation mark half-width
# where it meets another: an opening mark after an opening, middle or closing one, a closing
# mark before a closing or middle one (CSS Text 4, "fullwidth punctuation collapsing"). It
# classes each mark by where its glyph sits in the em square of the face setting it.

Kind = str  # "open", "close", "middle", "open_narrow", "close_narrow", "other"

_OPEN = frozenset("\u3008\u300a\u300c\u300e\u3010\u3014\u3016\u3018\u301a\u301d\uff08\uff3b\uff5b\uff5f")
_CLOSE = frozenset("\u3009\u300b\u300d\u300f\u3011\u3015\u3017\u3019\u301b\u301e\u301f\uff09\uff3d\uff5d\uff60")
_MIDDLE = frozenset("\u30fb")
_DOTS = "\u3001\u3002\uff0c\uff0e"  # 、。，．
_QUOTES = "\u201c\u2018\u201d\u2019"  # “‘”’


@dataclass(frozen=True)
class PunctuationClasses:
    has_halt: bool
    dot: Kind
    colon: Kind
    semicolon: Kind
    quotes_fullwidth: bool


def _bounds_kind(x0: float, x1: float, em: float) -> Kind:
    if x1 <= em / 2:
        return "close"
    if x0 >= em / 2:
        return "open"
    if x0 >= em / 4 and x1 - x0 <= em / 2:
        return "middle"
    return "other"


@functools.cache
def punctuation_classes(role: Role) -> PunctuationClasses:
    """How ``role``'s face draws the marks whose class depends on the face (Chrome reads it
    from the glyphs' bounds; a face without ``halt`` or full-width marks collapses nothing)."""
    font = face(role).hb_font
    upem = face(role).upem
    font.scale = (upem, upem)  # type: ignore[attr-defined]
    has_halt = "halt" in face(role).hb_font.face.get_language_feature_tags("GPOS")  # type: ignore[attr-defined]

    def ext(ch: str) -> tuple[float, float, float] | None:
        gid = _nominal(role, ord(ch))
        if gid is None:
            return None
        e = font.get_glyph_extents(gid)  # type: ignore[attr-defined]
        return e.x_bearing, e.x_bearing + e.width, font.get_glyph_h_advance(gid)  # type: ignore[attr-defined]

    marks = [ext(ch) for ch in _DOTS + "\uff1a\uff1b"]
    if not has_halt or any(m is None or m[2] != upem for m in marks):
        return PunctuationClasses(False, "other", "other", "other", False)
    dots = {_bounds_kind(m[0], m[1], upem) for m in marks[:4] if m}
    quotes = [ext(ch) for ch in _QUOTES]
    fullwidth = all(q is not None and q[2] == upem for q in quotes)
    if fullwidth:
        kinds = [_bounds_kind(q[0], q[1], upem) for q in quotes if q]
        fullwidth = kinds[:2] == ["open", "open"] and kinds[2:] == ["close", "close"]
    return PunctuationClasses(
        True,
        dots.pop() if len(dots) == 1 else "other",
        _bounds_kind(marks[4][0], marks[4][1], upem),  # type: ignore[index]
        _bounds_kind(marks[5][0], marks[5][1], upem),  # type: ignore[index]
        fullwidth,
    )


def punctuation_kind(ch: str, classes: PunctuationClasses) -> Kind:
    if ch in _OPEN:
        return "open"
    if ch in _CLOSE:
        return "close"
    if ch in _MIDDLE:
        return "middle"
    if ch in _DOTS:
        return classes.dot
    if ch == "\uff1a":
        return classes.colon
    if ch == "\uff1b":
        return classes.semicolon
    if ch in "\u201c\u2018":
        return "open" if classes.quotes_fullwidth else "open_narrow"
    if ch in "\u201d\u2019":
        return "close" if classes.quotes_fullwidth else "close_narrow"
    return "other"


def _kern(kind: Kind, last: Kind) -> bool:
    return kind == "open" and last in ("open", "middle", "close", "open_narrow")


def _kern_last(kind: Kind, last: Kind) -> bool:
    return last == "close" and kind in ("close", "middle", "close_narrow")


def collapsed_marks(text: str, start: int, end: int, role: Role) -> dict[int, tuple[bool, bool]]:
    """The characters of ``text[start:end]`` (one face's run, ``text`` the whole paragraph)
    that Chrome sets half-width, as offsets from ``start``, each with why: (it meets the
    character before it, it meets the one after it). Across a line break neither applies."""
    classes = punctuation_classes(role)
    if not classes.has_halt or end <= start:
        return {}
    kinds = [punctuation_kind(text[i], classes) for i in range(max(0, start - 1), min(len(text), end + 1))]
    base = max(0, start - 1)
    out: dict[int, tuple[bool, bool]] = {}
    for i in range(start, end):
        kind = kinds[i - base]
        prev = i > 0 and _kern(kind, kinds[i - 1 - base])
        after = i + 1 < len(text) and _kern_last(kinds[i + 1 - base], kind)
        if prev or after:
            out[i - start] = (prev, after)
    return out
