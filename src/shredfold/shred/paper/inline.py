"""An inline formatting context: a block's text, broken into positioned lines as Chrome does.

Input is a flat list of :class:`Item` (text in a font, forced breaks, and the start and end of
inline boxes with padding and a background: ``code``). White space collapses (``white-space:
normal``) or is kept (``pre``); lines are filled greedily at :mod:`.breaks`' opportunities,
measured with :mod:`.shaping`'s advances, spaces at a line's end hanging; then each line is
aligned (start, centre, or justified: all but a block's last line and lines ended by a forced
break) and given its height from the line-height of every font on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from shredfold.shred.fonts import Role
from shredfold.shred.paper.breaks import SPACES, break_before, expansions
from shredfold.shred.paper.css import CODE_PADDING, Colour, Font, layout_unit
from shredfold.shred.paper.shaping import (
    Glyph,
    collapsed_marks,
    face,
    primary_role,
    punctuation_classes,
    punctuation_kind,
    resolve,
    shape,
)

TAB_SIZE = 8  # spaces per tab stop (CSS tab-size)
EPSILON = 1e-6


@dataclass(frozen=True)
class Item:
    kind: Literal["text", "br", "open", "close"]
    font: Font
    text: str = ""


@dataclass
class Placed:
    """A character on a line: drawn from ``x`` (its advance ``width`` includes any
    justification after it); ``glyphs`` are the glyphs whose cluster starts here."""

    ch: str
    x: float
    width: float
    role: Role
    size: float
    bold: bool  # synthetic bold (a fallback face in a bold element)
    colour: Colour
    underline: bool
    glyphs: tuple[Glyph, ...]
    marker: bool = False  # an ordered list's number (drawn, but not the item's text)


@dataclass
class Fragment:
    """The part of an inline box (``code``) on one line: its background's extent."""

    x0: float
    x1: float
    top: float
    bottom: float
    first: bool  # the box starts on this line (left corners rounded)
    last: bool  # ... and ends on it (right corners rounded)


@dataclass
class Line:
    top: float
    height: float
    baseline: float
    chars: list[Placed] = field(default_factory=list)
    fragments: list[Fragment] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(c.ch for c in self.chars)


@dataclass
class _Flat:
    """The collapsed text with, per character, its font, face and surroundings."""

    chars: list[str] = field(default_factory=list)
    fonts: list[Font] = field(default_factory=list)
    item: list[int] = field(default_factory=list)  # which text item it came from
    forced: list[bool] = field(default_factory=list)  # a forced break (not drawn)
    pad_left: list[float] = field(default_factory=list)  # box padding before it
    pad_right: list[float] = field(default_factory=list)
    opens: list[list[int]] = field(default_factory=list)  # boxes opening before it
    closes: list[list[int]] = field(default_factory=list)  # boxes closing after it
    box_fonts: list[Font] = field(default_factory=list)


def _flatten(items: list[Item], pre: bool) -> _Flat:
    flat = _Flat()
    prev_space = True  # spaces at the start of the block collapse away
    pending_open: list[int] = []
    stack: list[int] = []
    pending_pad = 0.0

    def emit(ch: str, font: Font, item: int, forced: bool = False) -> None:
        nonlocal pending_pad
        flat.chars.append(ch)
        flat.fonts.append(font)
        flat.item.append(item)
        flat.forced.append(forced)
        flat.pad_left.append(pending_pad)
        flat.pad_right.append(0.0)
        flat.opens.append(list(pending_open))
        flat.closes.append([])
        pending_open.clear()
        pending_pad = 0.0

    def drop_trailing_space() -> None:
        if flat.chars and flat.chars[-1] == " " and not pre and not flat.forced[-1]:
            for key in ("chars", "fonts", "item", "forced", "pad_left", "pad_right", "opens", "closes"):
                getattr(flat, key).pop()

    for k, it in enumerate(items):
        if it.kind == "open":
            box = len(flat.box_fonts)
            flat.box_fonts.append(it.font)
            pending_open.append(box)
            stack.append(box)
            pending_pad += CODE_PADDING[1]
        elif it.kind == "close":
            box = stack.pop()
            if box in pending_open:  # an empty box: nothing to hang it on
                pending_open.remove(box)
                pending_pad -= CODE_PADDING[1]
            elif flat.chars:
                flat.closes[-1].append(box)
                flat.pad_right[-1] += CODE_PADDING[1]
        elif it.kind == "br":
            drop_trailing_space()
            emit("\n", it.font, k, forced=True)
            prev_space = True
        else:
            for ch in it.text:
                if pre:
                    emit(ch, it.font, k, forced=ch == "\n")
                elif ch in SPACES:
                    if not prev_space:
                        emit(" ", it.font, k)
                        prev_space = True
                else:
                    emit(ch, it.font, k)
                    prev_space = False
    drop_trailing_space()
    if pre and flat.chars and flat.forced[-1]:
        # A newline ending a pre block starts no further line.
        flat.forced[-1] = False
        flat.chars[-1] = ""
    return flat


@dataclass
class _Shaped:
    adv: list[float]  # per character
    faces: list[tuple[Role, bool]]  # (face, synthetic bold)
    glyphs: list[tuple[Glyph, ...]]  # the glyphs whose cluster starts at the character
    # Half-width marks: index -> (because of the character before, ... after) and its
    # full-width advance and glyphs, for where a line break parts it from that character.
    halted: dict[int, tuple[bool, bool, float, tuple[Glyph, ...]]] = field(default_factory=dict)

    def unhalt(self, i: int, side: int) -> None:
        """Undo ``i``'s half width where it came only from its neighbour on ``side``
        (-1 before, +1 after) alone, now on another line."""
        if i not in self.halted:
            return
        before, after, full, glyphs = self.halted[i]
        if (side < 0 and before and not after) or (side > 0 and after and not before):
            self.adv[i], self.glyphs[i] = full, glyphs
            del self.halted[i]


def _advances(flat: _Flat) -> _Shaped:
    n = len(flat.chars)
    whole = "".join(c if c else " " for c in flat.chars)
    faces = [resolve(ch, f) if ch else (primary_role(f), False) for ch, f in zip(flat.chars, flat.fonts, strict=True)]
    out = _Shaped([0.0] * n, faces, [()] * n)
    i = 0
    while i < n:
        j = i + 1
        while (
            j < n
            and flat.item[j] == flat.item[i]
            and faces[j] == faces[i]
            and flat.fonts[j] == flat.fonts[i]
            and not flat.forced[j]
            and not flat.forced[i]
            and flat.chars[j] != "\t"
            and flat.chars[i] != "\t"
        ):
            j += 1
        if flat.forced[i] or not flat.chars[i] or flat.chars[i] == "\t":
            i = j
            continue
        role, size = faces[i][0], flat.fonts[i].size
        text = "".join(flat.chars[i:j])
        marks = collapsed_marks(whole, i, j, role)
        shaped = shape(text, role, size, tuple(sorted(marks)))
        starts = sorted({g.cluster for g in shaped}) + [len(text)]
        by_start: dict[int, list[Glyph]] = {}
        for g in shaped:
            by_start.setdefault(g.cluster, []).append(g)
        for a, b in zip(starts, starts[1:], strict=False):
            total = sum(g.advance for g in by_start.get(a, []))
            for m in range(a, b):
                out.adv[i + m] = total / (b - a)
            out.glyphs[i + a] = tuple(by_start.get(a, []))
        for m, (before, after) in marks.items():
            full = shape(text[m], role, size)
            out.halted[i + m] = (before, after, sum(g.advance for g in full), full)
        i = j
    return out


def _space_width(font: Font) -> float:
    return sum(g.advance for g in shape(" ", primary_role(font), font.size))


def _segments(flat: _Flat, adv: list[float]) -> list[tuple[int, int]]:
    """[start, end) of the unbreakable pieces of text, each ending after its trailing spaces or
    at a forced break (a forced break is a piece of its own)."""
    text = "".join(c if c else " " for c in flat.chars)
    ok = break_before(text)
    cuts = [0]
    for i in range(1, len(text)):
        if ok[i] or flat.forced[i] or flat.forced[i - 1]:
            cuts.append(i)
    cuts.append(len(text))
    return list(zip(cuts, cuts[1:], strict=False))


def _width(flat: _Flat, adv: list[float], a: int, b: int) -> float:
    return sum(adv[i] + flat.pad_left[i] + flat.pad_right[i] for i in range(a, b))


def _content_end(flat: _Flat, a: int, b: int) -> int:
    """``b`` less the spaces that would hang at a line's end."""
    while b > a and flat.chars[b - 1] in SPACES and not flat.forced[b - 1]:
        b -= 1
    return b


def intrinsic_widths(items: list[Item], pre: bool = False) -> tuple[float, float]:
    """(min-content, max-content) widths: the widest unbreakable piece, the widest line
    when only forced breaks end lines."""
    flat = _flatten(items, pre)
    if not flat.chars:
        return 0.0, 0.0
    adv = _advances(flat).adv
    if pre:
        widest = 0.0
        for a, b in _pre_lines(flat):
            widest = max(widest, _pre_width(flat, adv, a, b))
        return widest, widest
    lo = hi = line = 0.0
    for a, b in _segments(flat, adv):
        if flat.forced[a]:
            hi, line = max(hi, line), 0.0
            continue
        end = _content_end(flat, a, b)
        lo = max(lo, _width(flat, adv, a, end))
        hi = max(hi, line + _width(flat, adv, a, end))
        line += _width(flat, adv, a, b)
    return lo, hi


def _pre_lines(flat: _Flat) -> list[tuple[int, int]]:
    out, start = [], 0
    for i, forced in enumerate(flat.forced):
        if forced:
            out.append((start, i))
            start = i + 1
    out.append((start, len(flat.chars)))
    return out


def _tab_advance(x: float, font: Font) -> float:
    stop = TAB_SIZE * _space_width(font)
    return (math.floor(x / stop + EPSILON) + 1) * stop - x if stop > 0 else 0.0


def _pre_width(flat: _Flat, adv: list[float], a: int, b: int) -> float:
    x = 0.0
    for i in range(a, b):
        x += flat.pad_left[i]
        x += _tab_advance(x, flat.fonts[i]) if flat.chars[i] == "\t" else adv[i]
        x += flat.pad_right[i]
    return x


def _vertical(strut: Font, fonts: list[Font]) -> tuple[float, float]:
    """(above, below) the baseline of a line holding text in ``fonts`` in a block of ``strut``:
    each font's ascent and descent in whole pixels plus half its leading, the half above
    rounded down (Chrome's rule)."""
    above = below = -math.inf
    for f in {strut, *fonts}:
        ascent, descent = face(primary_role(f)).metrics(f.size)
        lh = f.line_height
        a = ascent + math.floor((lh - (ascent + descent)) / 2)
        above, below = max(above, a), max(below, lh - a)
    return above, below


def layout_lines(items: list[Item], strut: Font, left: float, width: float, top: float) -> list[Line]:
    """The lines of ``items`` in a block whose content box starts at ``(left, top)`` and is
    ``width`` wide; ``strut`` is the block's own font (its line height is every line's least)."""
    flat = _flatten(items, strut.pre)
    if not flat.chars:
        return []
    shaped = _advances(flat)
    adv, faces, glyphs = shaped.adv, shaped.faces, shaped.glyphs
    spans = [(a, b, True) for a, b in _pre_lines(flat)] if strut.pre else _fill(flat, shaped, width)
    lines: list[Line] = []
    y = top
    open_boxes: list[int] = []  # boxes going on from one line to the next
    for n, (a, b, forced) in enumerate(spans):
        end = b if strut.pre else _content_end(flat, a, b)
        chars = [i for i in range(a, end) if flat.chars[i] and not flat.forced[i]]
        above, below = _vertical(strut, [flat.fonts[i] for i in chars])
        line = Line(top=y, height=above + below, baseline=y + above)
        last = n == len(spans) - 1 or forced
        _place(line, flat, adv, faces, glyphs, (a, b, chars), strut, left, width, not last, open_boxes)
        lines.append(line)
        y = layout_unit(y + line.height)
    return lines


def _fill(flat: _Flat, shaped: _Shaped, width: float) -> list[tuple[int, int, bool]]:
    """Greedy line filling: (start, end, ended by a forced break) per line. Where a soft break
    parts two marks that collapsed, each gets its full width back. A full-width closing mark
    that would end a line is set half-width if that lets it fit (Chrome's
    ``text-spacing-trim``); its advance is halved then."""
    adv = shaped.adv
    spans: list[tuple[int, int, bool]] = []
    start: int | None = None
    used = 0.0
    end = 0

    def wrap_before(a: int) -> None:
        last = _content_end(flat, start if start is not None else a, a) - 1
        if last >= 0:
            shaped.unhalt(last, +1)
        shaped.unhalt(a, -1)

    for a, b in _segments(flat, adv):
        if flat.forced[a]:
            spans.append((a if start is None else start, a, True))
            start, used = None, 0.0
            end = b
            continue
        stop = _content_end(flat, a, b)
        content = _width(flat, adv, a, stop)
        if start is not None and used + content > width + EPSILON:
            last = stop - 1
            trim = adv[last] / 2 if _trimmable_end(flat.chars[last], shaped.faces[last][0]) and last not in shaped.halted else 0.0
            if trim and used + content - trim <= width + EPSILON:
                adv[last] -= trim
                spans.append((start, b, False))
                start, used, end = None, 0.0, b
                if b < len(flat.chars):
                    shaped.unhalt(b, -1)
                continue
            spans.append((start, a, False))
            wrap_before(a)
            start, used = None, 0.0
            content = _width(flat, adv, a, stop)
        if start is None:
            start = a
        used += _width(flat, adv, a, b)
        end = b
    if start is not None:
        spans.append((start, end, False))
    return spans


def _trimmable_end(ch: str, role: Role) -> bool:
    classes = punctuation_classes(role)
    return classes.has_halt and punctuation_kind(ch, classes) == "close"


def _place(
    line: Line,
    flat: _Flat,
    adv: list[float],
    faces: list[tuple[Role, bool]],
    glyphs: list[tuple[Glyph, ...]],
    span: tuple[int, int, list[int]],
    strut: Font,
    left: float,
    width: float,
    justify: bool,
    open_boxes: list[int],
) -> None:
    """Position the characters ``chars`` of ``line`` and the fragments of the inline boxes on
    it; ``open_boxes`` (updated) are the boxes open at its start. ``span`` is the line's range
    of the text and the characters in it that are drawn."""
    a, b, chars = span
    drawn = set(chars)
    widths = []
    x = 0.0
    for i in chars:
        w = _tab_advance(x + flat.pad_left[i], flat.fonts[i]) if flat.chars[i] == "\t" else adv[i]
        widths.append(w)
        x += flat.pad_left[i] + w + flat.pad_right[i]
    natural = x
    free = width - natural
    exp = [(0, 0)] * len(chars)
    per = 0.0
    offset = 0.0
    if strut.align == "justify" and justify and free > 0:
        exp = expansions("".join(flat.chars[i] for i in chars))
        count = sum(b + a for b, a in exp)
        per = free / count if count else 0.0
    elif strut.align == "center" and free > 0:
        offset = layout_unit(free / 2)
    x = left + offset
    open_at: dict[int, tuple[float, bool]] = {box: (x, False) for box in open_boxes}
    k = 0
    for i in range(a, b):
        for box in flat.opens[i]:
            open_at[box] = (x, True)
        if i in drawn:
            x += flat.pad_left[i] + exp[k][0] * per
            role, bold = faces[i]
            f = flat.fonts[i]
            w = widths[k] + exp[k][1] * per
            line.chars.append(Placed(flat.chars[i], x, w, role, f.size, bold, f.colour, f.underline, glyphs[i]))
            x += w + flat.pad_right[i]
            k += 1
        for box in flat.closes[i]:
            if box in open_at:
                x0, first = open_at.pop(box)
                line.fragments.append(_fragment(line, flat.box_fonts[box], x0, x, first, True))
    for box, (x0, first) in open_at.items():  # goes on past this line
        line.fragments.append(_fragment(line, flat.box_fonts[box], x0, x, first, False))
    open_boxes[:] = list(open_at)


def _fragment(line: Line, font: Font, x0: float, x1: float, first: bool, last: bool) -> Fragment:
    ascent, descent = face(primary_role(font)).metrics(font.size)
    pad = CODE_PADDING[0]
    return Fragment(x0, x1, line.baseline - ascent - pad, line.baseline + descent + pad, first, last)
