"""Where Chrome may end a line, and where justification may widen one.

Line breaks (``word-break: normal``), as Blink's line break iterator decides them:

- after a run of spaces (a space, tab or newline; not a no-break space);
- between two printable ASCII characters only where Blink's own ASCII table allows it (it
  predates ICU's rules and keeps other browsers' behaviour): after ``-`` (before a digit only
  when a letter or digit precedes the hyphen) and after ``?``, each unless a closing mark
  follows, and before an opening bracket after closing punctuation;
- where either character is not ASCII, wherever ICU's line breaker (UAX #14) allows one:
  between Chinese characters, around dashes, never before ，。、 or after （“.

ICU comes from the pinned ``icu4py`` wheel, which carries its own ICU build and data.

Justification (``text-align: justify``, Blink's ``text-justify: auto``) adds space at each
space and around each CJK ideograph or symbol (before it unless the previous character
already gave an opportunity, and after it), never before a line's first character nor
after its last.
"""

from __future__ import annotations

import functools

SPACES = frozenset(" \t\n")  # breakable spaces; U+00A0 is not one
NBSP = "\u00a0"

# Blink's ASCII table, as rules. After "-" and "?" a line may break before any printable
# character except these (closing marks, and "!", "$", "?" after a hyphen):
_NOT_AFTER_HYPHEN = frozenset("!$),./:;?]}")
_NOT_AFTER_QUESTION = frozenset("!\"'),./:;?]}")
# After these a line may break before an opening bracket.
_BEFORE_OPENING = frozenset("!\"#%&)*+,.:;=>\\]|}~")
_OPENING = frozenset("(<[{")


def _ascii(ch: str) -> bool:
    return "!" <= ch <= "\x7f"


def _table_break(before2: str, before: str, ch: str) -> bool:
    """Blink's rule for a break between two printable ASCII characters."""
    if before == "-" and ch.isdigit():
        # "-3" may be a minus sign; "ABCD-1234" and "1234-5678" (long URLs) break.
        return before2.isascii() and before2.isalnum()
    if before == "-":
        return ch not in _NOT_AFTER_HYPHEN and not ch.isdigit()
    if before == "?":
        return ch not in _NOT_AFTER_QUESTION
    return before in _BEFORE_OPENING and ch in _OPENING


@functools.lru_cache(maxsize=256)
def _icu_boundaries(text: str) -> frozenset[int]:
    from icu4py.breakers import LineBreaker

    return frozenset(end for _, end in LineBreaker(text, "en_US").segments())


def break_before(text: str) -> list[bool]:
    """``out[i]``: a line may end before ``text[i]`` (0 < i < len; spaces hang at the end of
    the line they follow, so a break "before" a space run is reported after it)."""
    n = len(text)
    out = [False] * n
    icu: frozenset[int] | None = None
    for i in range(1, n):
        ch, before = text[i], text[i - 1]
        if ch in SPACES:
            continue
        if before in SPACES:
            out[i] = True
            continue
        before2 = text[i - 2] if i > 1 else ""
        if _ascii(before) and _ascii(ch):
            out[i] = _table_break(before2, before, ch)
            continue
        if (before > "\x7f" and before != NBSP) or (ch > "\x7f" and ch != NBSP):
            if icu is None:
                icu = _icu_boundaries(text)
            out[i] = i in icu
    return out


# Blink's "CJK ideograph or symbol": ideographs, kana, CJK punctuation, full-width forms and
# some symbols common in CJK text (closed intervals, then single characters).
_CJK_RANGES = (
    (0x2156, 0x215A), (0x2160, 0x216B), (0x2170, 0x217B), (0x23BE, 0x23CC), (0x2460, 0x2492),
    (0x249C, 0x24FF), (0x25CE, 0x25D3), (0x25E2, 0x25E6), (0x2600, 0x2603), (0x2660, 0x266F),
    (0x2672, 0x267D), (0x2776, 0x277F), (0x2E80, 0x2FDF), (0x2FF0, 0x302F), (0x3031, 0x312F),
    (0x3190, 0x31BF), (0x31C0, 0x31EF), (0x3200, 0x33FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xF860, 0xF862), (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFF0C), (0xFF0E, 0xFF1A),
    (0xFF1F, 0xFFEF), (0x1F110, 0x1F129), (0x1F130, 0x1F149), (0x1F150, 0x1F169),
    (0x1F170, 0x1F189), (0x1F200, 0x1F6FF), (0x20000, 0x2A6DF), (0x2A700, 0x2B81F),
    (0x2F800, 0x2FA1F),
)  # fmt: skip
_CJK_SINGLE = frozenset(
    (0x2C7, 0x2CA, 0x2CB, 0x2D9, 0x2020, 0x2021, 0x2030, 0x203B, 0x203C, 0x2042, 0x2047, 0x2048,
     0x2049, 0x2051, 0x20DD, 0x20DE, 0x2100, 0x2103, 0x2105, 0x2109, 0x210A, 0x2113, 0x2116,
     0x2121, 0x212B, 0x213B, 0x2150, 0x2151, 0x2152, 0x217F, 0x2189, 0x2307, 0x2312, 0x23CE,
     0x2423, 0x25A0, 0x25A1, 0x25A2, 0x25AA, 0x25AB, 0x25B1, 0x25B2, 0x25B3, 0x25B6, 0x25B7,
     0x25BC, 0x25BD, 0x25C0, 0x25C1, 0x25C6, 0x25C7, 0x25C9, 0x25CB, 0x25CC, 0x25EF, 0x2605,
     0x2606, 0x260E, 0x2616, 0x2617, 0x2640, 0x2642, 0x26A0, 0x26BD, 0x26BE, 0x2713, 0x271A,
     0x273F, 0x2740, 0x2756, 0x2B1A, 0xFE10, 0xFE11, 0xFE12, 0xFE19, 0xFF1D, 0x1F100)
)  # fmt: skip


@functools.lru_cache(maxsize=8192)
def is_cjk_symbol(ch: str) -> bool:
    cp = ord(ch)
    if cp < 0x2C7:
        return False
    return cp in _CJK_SINGLE or any(a <= cp <= b for a, b in _CJK_RANGES)


def expansions(text: str) -> list[tuple[int, int]]:
    """Per character, the justification opportunities (before, after) it takes, for a line
    of ``text`` (its hanging spaces already removed)."""
    out = [(0, 0)] * len(text)
    after_expansion = True  # no space may be added before a line's first character
    for i, ch in enumerate(text):
        if ch in SPACES or ch == NBSP:
            out[i] = (0, 1)
            after_expansion = True
        elif is_cjk_symbol(ch):
            out[i] = (0 if after_expansion else 1, 1)
            after_expansion = True
        else:
            after_expansion = False
    # ... nor after its last.
    if out and out[-1][1]:
        out[-1] = (out[-1][0], 0)
    return out
