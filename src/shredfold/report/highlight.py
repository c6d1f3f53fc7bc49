"""Text with some characters marked, for the sample viewer: values in, values out.

The diagnostics align *skeletons* (the scored characters without whitespace, see
:func:`shredfold.shred.glyphs.skeleton`); here a flag per skeleton character is laid back
onto the text a reader sees, whitespace and a table's cell separators included.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from shredfold.tables import CELL_SEP

Segment = tuple[str, bool]  # text, marked


def _merge(parts: list[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for text, marked in parts:
        if out and out[-1][1] == marked:
            out[-1] = (out[-1][0] + text, marked)
        elif text:
            out.append((text, marked))
    return out


def mark(text: str, flags: Sequence[bool], kind: str) -> list[Segment]:
    """``text`` cut into runs, a run marked where its skeleton characters are flagged.

    Each non-space character of ``text`` (NFKC-folded one by one, as the skeleton was made)
    takes the next flags in order; for tables the cell separator is not part of the
    skeleton. Flags left over or missing (a text that is not the skeleton's source) leave
    the rest unmarked.
    """
    parts: list[Segment] = []
    i = 0
    lines = text.split("\n")
    for n, line in enumerate(lines):
        cells = line.split(CELL_SEP) if kind == "table" else [line]
        for c, cell in enumerate(cells):
            for ch in cell:
                if ch.isspace():
                    parts.append((ch, False))
                    continue
                width = sum(1 for f in unicodedata.normalize("NFKC", ch) if not f.isspace())
                hit = any(flags[i : i + width]) if i < len(flags) else False
                i += width
                parts.append((ch, hit))
            if c < len(cells) - 1:
                parts.append((CELL_SEP, False))
        if n < len(lines) - 1:
            parts.append(("\n", False))
    return _merge(parts)
