"""Line breaking: greedy wrapping for Latin text and per-character wrapping for Chinese.

Text is cut into *units* that may not be split: a Latin word, or one CJK character with the
punctuation that must stay attached to it (closing marks glue to the character before them,
opening marks to the character after them). Greedy filling of units then gives the simple
Chinese line-breaking rules for free: no ，。、）” at a line start and no （“ at a line end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shredfold.corpus.document import CJK as _CJK

# Marks that may not begin a line (they close or end something) ...
CLOSING = frozenset("，。、；：？！）》」』】〕〉”’…‥·・％,.;:?!)]}")
# ... and marks that may not end one.
OPENING = frozenset("（《「『【〔〈“‘([{")
_QUOTES = frozenset("“”‘’")


def is_cjk(ch: str) -> bool:
    """True for characters set one per cell in Chinese text (ideographs, CJK punctuation)."""
    return _CJK.match(ch) is not None


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


@dataclass
class _Unit:
    text: str
    space_before: bool


def units(text: str) -> list[_Unit]:
    """Split a paragraph into unbreakable units, remembering where whitespace stood."""
    atoms: list[tuple[str, bool]] = []  # (text, preceded by whitespace)
    word: list[str] = []
    space = False

    def flush() -> None:
        nonlocal space
        if word:
            atoms.append(("".join(word), space))
            word.clear()
            space = False

    for ch in text:
        if ch.isspace():
            flush()
            space = bool(atoms)
        elif is_cjk(ch) or ch in _QUOTES:
            flush()
            atoms.append((ch, space))
            space = False
        else:
            word.append(ch)
    flush()

    out: list[_Unit] = []
    for atom, sp in atoms:
        if out and not sp and (atom[0] in CLOSING or out[-1].text[-1] in OPENING):
            out[-1].text += atom
        else:
            out.append(_Unit(atom, sp))
    return out


def wrap(text: str, measure: Callable[[str], float], max_width: float) -> list[str]:
    """Greedy line filling of one paragraph; ``measure`` gives a string's advance width.

    A unit wider than a whole line (a URL, a long identifier) is broken between characters.
    """
    widths: dict[str, float] = {}

    def w(s: str) -> float:
        if s not in widths:
            widths[s] = measure(s)
        return widths[s]

    space_w = w(" ")
    lines: list[str] = []
    cur = ""
    cur_w = 0.0
    for unit in units(text):
        gap = space_w if (unit.space_before and cur) else 0.0
        uw = w(unit.text)
        if cur and cur_w + gap + uw <= max_width:
            cur += (" " if gap else "") + unit.text
            cur_w += gap + uw
            continue
        if cur:
            lines.append(cur)
        if uw <= max_width:
            cur, cur_w = unit.text, uw
            continue
        # Too long for any line: break it between characters.
        cur, cur_w = "", 0.0
        for ch in unit.text:
            cw = w(ch)
            if cur and cur_w + cw > max_width:
                lines.append(cur)
                cur, cur_w = "", 0.0
            cur += ch
            cur_w += cw
    if cur:
        lines.append(cur)
    return lines


def hard_wrap(line: str, measure: Callable[[str], float], max_width: float) -> list[str]:
    """Break a code line between characters wherever it passes ``max_width`` (no reflow)."""
    if not line:
        return [""]
    out: list[str] = []
    start = 0
    acc = 0.0
    cache: dict[str, float] = {}
    for i, ch in enumerate(line):
        if ch not in cache:
            cache[ch] = measure(ch)
        if i > start and acc + cache[ch] > max_width:
            out.append(line[start:i])
            start, acc = i, 0.0
        acc += cache[ch]
    out.append(line[start:])
    return out
