"""A table's HTML from the drawn, upright page: cells from the ruled lines, text from OCR.

Rules are long straight dark runs, which text strokes never are, so a morphological opening
with a long thin kernel keeps only them. Row bands lie between horizontal rules and column
slots between vertical ones; two neighbouring grid units belong to one (merged) cell when
no rule separates them. Header rows are the leading rows drawn with a darker wash.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import cv2
import numpy as np

from shredfold.shred.ocr.rows import group_rows
from shredfold.shred.solvers.jigsaw.words import Word, format_text, stroke_width

RULE_RUN = 61  # px: a straight dark run this long is a rule, not a letter
RULE_STEP = 2  # px: a rule may step sideways this much where two scraps meet ...
RULE_GAP = 15  # px: ... and break off for less than this (a seam's gap)
RULE_PIECE = 25  # px: the shortest run of a rule between two seams that counts
RULE_COVER = 0.6  # share of a boundary that must be ruled to separate two units
# Parts of a page laid together a few px off each other draw one rule as pieces a few px
# apart (a paper-style table, N = 8: a column rule at x 774 on some scraps, 784 on the
# others): positions this close are one rule, looked for this far either side of it.
RULE_MERGE = 12
RULE_SLACK = 7
DARK = 150  # grey level below which a pixel is ink
FAINT = 200  # ... and below which it is faint ink (a rule lightened by shading)
HEAD_WASH = 0.96  # a header row's paper is at most this bright relative to the body's
# ... or a header row is set in bold (a browser's <th>): its words' strokes (median) this
# many times as wide as all words' (median). On the ShredBench authors' pages the header's
# #eee wash is 2 grey levels under the body's paper on a photograph (238 to 240), less
# than the shading across a curled sheet; its bold words' strokes are 2.5-4.0 px wide, the
# body's 2.1-2.2 (a paper-style table, N = 8).
HEAD_BOLD = 1.15
# Faint rules (a 1 px #999 border photographed and reduced: ~5-10 grey levels under the
# paper): a pixel is on one where it is this much darker than the paper RIDGE_SIDE px to
# either side across the rule, and not dark enough to be ink (DARK) ...
RIDGE_DEPTH = 2.0
RIDGE_SIDE = 3
# ... and a run of RULE_RUN px is a rule where this share of it is (letters' strokes, which
# also stand out from the paper beside them, cover far less of a run).
RIDGE_SHARE = 0.6
PAPER_MAX = 252  # grey: brighter is the white a cluster is drawn on, not paper
# A grid unit with less paper than this share of it lies off the drawn scraps (a part of the
# page not assembled, or beside a cut): no rule can be seen there, and taken as a cell it
# merged with its neighbours (the largest part of a paper-style table read as one cell
# spanning eight rows and four columns). It is written as an empty cell of its own.
UNIT_PAPER = 0.5
# No table merges most of its grid into one cell: where the cells found do (of a grid of at
# least COLLAPSED_UNITS units), the rules were not followed, and the table is read by its
# text rows instead. A paper-style table, N = 8, laid together with one part 22 px off
# drew its column rules as pairs of pieces 45 px apart; the boundaries between them read
# unruled, merged units grew to their boxes, and the whole table came out as one cell
# spanning 17 rows and 13 columns (raw NED 0.682; read by its rows, 0.196).
COLLAPSED_UNITS = 9
COLLAPSED_SHARE = 0.5


def _positions(profile: np.ndarray, min_count: float) -> list[int]:
    """Centres of runs of indices where ``profile`` reaches ``min_count``; runs within
    :data:`RULE_MERGE` of each other are one (their centre weighted by the profile)."""
    idx = np.flatnonzero(profile >= min_count)
    if not len(idx):
        return []
    groups = np.split(idx, np.flatnonzero(np.diff(idx) > RULE_MERGE) + 1)
    return [int(round(float(np.average(g, weights=profile[g])))) for g in groups]


def _ruled(mask: np.ndarray, x0: int, x1: int, y0: int, y1: int, *, across: bool) -> bool:
    """Whether a boundary is ruled for RULE_COVER of its length: the window ``x0:x1`` by
    ``y0:y1`` around it, a vertical boundary (rule looked for across x) when ``across``."""
    part = mask[max(y0, 0) : max(y1, 1), max(x0, 0) : max(x1, 1)]
    return part.size > 0 and float(part.any(axis=1 if across else 0).mean()) >= RULE_COVER


def rule_runs(mask: np.ndarray, direction: tuple[int, int]) -> np.ndarray:
    """Pixels of ``mask`` on straight runs along ``direction`` ((1, 0): horizontal) of at
    least RULE_RUN, counting runs of RULE_PIECE that are less than RULE_GAP apart as one."""

    def line(length: int) -> np.ndarray:
        return np.ones((1, length) if direction == (1, 0) else (length, 1), np.uint8)

    pieces = cv2.morphologyEx(mask, cv2.MORPH_OPEN, line(RULE_PIECE))
    chained = cv2.morphologyEx(pieces, cv2.MORPH_CLOSE, line(RULE_GAP))
    return cv2.morphologyEx(chained, cv2.MORPH_OPEN, line(RULE_RUN))


def _continued(gray: np.ndarray, thicken: tuple[int, int], direction: tuple[int, int]) -> np.ndarray:
    """Runs along ``direction`` of ink darker than FAINT that hold a run of ink darker than
    DARK (hysteresis: faint stretches only extend rules the dark ink shows)."""
    kernel = np.ones(thicken, np.uint8)
    strong = rule_runs(cv2.dilate((gray < DARK).astype(np.uint8), kernel), direction)
    weak = rule_runs(cv2.dilate((gray < FAINT).astype(np.uint8), kernel), direction)
    count, labels = cv2.connectedComponents(weak | strong, connectivity=8)
    keep = np.zeros(count, bool)
    keep[np.unique(labels[strong > 0])] = True
    keep[0] = False
    return keep[labels].astype(np.uint8)


def faint_rules(gray: np.ndarray, direction: tuple[int, int], spread: int = 1) -> np.ndarray:
    """Pixels on faint rules along ``direction`` ((1, 0): horizontal): thin lines a little
    darker than the paper on both sides, for at least RIDGE_SHARE of a run of RULE_RUN.
    With ``spread``, a pixel counts for a run where one within ``spread`` // 2 across it is
    on the line (a rule drawn between two rows of pixels shows half on each)."""
    g = gray.astype(np.float32) if direction == (1, 0) else gray.astype(np.float32).T
    soft = cv2.GaussianBlur(g, (0, 0), 0.8)
    pad = np.pad(soft, ((RIDGE_SIDE, RIDGE_SIDE), (0, 0)), mode="edge")
    sides = np.minimum(pad[: -2 * RIDGE_SIDE], pad[2 * RIDGE_SIDE :])
    # Paper all round: the shaded rim of a drawn scrap next to the white it is drawn on
    # is no rule.
    white = cv2.dilate((g > PAPER_MAX).astype(np.uint8), np.ones((2 * RIDGE_SIDE + 5,) * 2, np.uint8))
    on = ((sides - soft >= RIDGE_DEPTH) & (g >= DARK) & (white == 0)).astype(np.float32)
    wide = cv2.dilate(on, np.ones((spread, 1), np.uint8)) if spread > 1 else on
    share = cv2.blur(wide, (RULE_RUN, 1), borderType=cv2.BORDER_CONSTANT)
    # A run centred on the rule covers it to its ends; a rule drawn over two rows counts once.
    runs = cv2.dilate((share >= RIDGE_SHARE).astype(np.uint8), np.ones((1, RULE_RUN), np.uint8))
    runs &= cv2.dilate(on.astype(np.uint8), np.ones((3, 1), np.uint8))
    return runs if direction == (1, 0) else np.ascontiguousarray(runs.T)


def grid(rgb: np.ndarray) -> tuple[list[int], list[int], np.ndarray, np.ndarray]:
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    # Reassembled scraps sit a pixel or two off each other, and on a photograph the seams
    # between segmented scraps are gaps of white a few pixels wide: a rule is a chain of
    # runs stepping and breaking at the seams. Ink is first thickened across the rule's
    # direction (bridges the steps), runs of RULE_PIECE are kept (letters' strokes are
    # shorter), gaps of up to RULE_GAP between them are closed, and what then reaches
    # RULE_RUN is a rule.
    across = 2 * RULE_STEP + 1
    # On a photographed, curled sheet a crease's shading lightens a rule for a stretch
    # (greys up to ~200 where the rule is ~100 elsewhere), breaking it into pieces too short
    # to count. Runs are also found in the fainter ink, but kept only where they continue
    # a run of the dark ink, so shading alone never makes a rule.
    # A photographed 1 px rule may be only a few grey levels under the paper: found as a
    # ridge (:func:`faint_rules`) and bridged across seams as the dark ones are.
    horiz = _continued(gray, (across, 1), (1, 0)) | rule_runs(
        cv2.dilate(faint_rules(gray, (1, 0)), np.ones((across, 1), np.uint8)), (1, 0))
    vert = _continued(gray, (1, across), (0, 1)) | rule_runs(
        cv2.dilate(faint_rules(gray, (0, 1)), np.ones((1, across), np.uint8)), (0, 1))
    ys = _positions(horiz.sum(axis=1), RULE_RUN * 2)
    xs = _positions(vert.sum(axis=0), RULE_RUN * 2)
    return ys, xs, horiz.astype(bool), vert.astype(bool)


def is_ruled_table(rgb: np.ndarray) -> bool:
    """Whether the drawing shows a ruled grid (three rules or more each way): a table."""
    ys, xs, _, _ = grid(rgb)
    return len(ys) >= 3 and len(xs) >= 3


def _present(gray: np.ndarray, ys: list[int], xs: list[int]) -> np.ndarray:
    """Which grid units (rows x columns) lie on the drawn paper (:data:`UNIT_PAPER`); all
    of them where none seems to (a page as white as what it is drawn on)."""
    paper = gray <= PAPER_MAX
    out = np.zeros((len(ys) - 1, len(xs) - 1), bool)
    for r in range(len(ys) - 1):
        for c in range(len(xs) - 1):
            unit = paper[ys[r] : ys[r + 1], xs[c] : xs[c + 1]]
            out[r, c] = unit.size > 0 and float(unit.mean()) >= UNIT_PAPER
    return out if out.any() else np.ones_like(out)


def _cells(ys: list[int], xs: list[int], horiz: np.ndarray, vert: np.ndarray,
           present: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(row, col, rowspan, colspan) of every merged cell, in row-major order. Units not
    ``present`` stay cells of their own."""
    nr, nc = len(ys) - 1, len(xs) - 1
    parent = list(range(nr * nc))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for r in range(nr):
        for c in range(nc):
            top, bottom = ys[r] + RULE_SLACK, ys[r + 1] - RULE_SLACK
            left, right = xs[c] + RULE_SLACK, xs[c + 1] - RULE_SLACK
            if not present[r, c]:
                continue
            x, y = xs[c + 1] if c + 1 < nc else 0, ys[r + 1] if r + 1 < nr else 0
            if c + 1 < nc and present[r, c + 1] and not _ruled(
                    vert, x - RULE_SLACK, x + RULE_SLACK + 1, top, bottom, across=True):
                parent[find(r * nc + c)] = find(r * nc + c + 1)
            if r + 1 < nr and present[r + 1, c] and not _ruled(
                    horiz, left, right, y - RULE_SLACK, y + RULE_SLACK + 1, across=False):
                parent[find(r * nc + c)] = find((r + 1) * nc + c)
    # A cell is a rectangle: a missing rule can join units in an L, whose bounding box
    # overlaps a neighbour (two cells then claim the same text). Grow every group to its
    # box, absorbing what lies inside, until the boxes tile the grid.
    while True:
        spans: dict[int, list[int]] = {}
        for u in range(nr * nc):
            spans.setdefault(find(u), []).append(u)
        grown = False
        for root, units in spans.items():
            rs = [u // nc for u in units]
            cs = [u % nc for u in units]
            for r in range(min(rs), max(rs) + 1):
                for c in range(min(cs), max(cs) + 1):
                    if find(r * nc + c) != find(root):
                        parent[find(r * nc + c)] = find(root)
                        grown = True
        if not grown:
            break
    out = []
    for units in spans.values():
        rs = [u // nc for u in units]
        cs = [u % nc for u in units]
        out.append((min(rs), min(cs), max(rs) - min(rs) + 1, max(cs) - min(cs) + 1))
    return sorted(out)


def _stroke_width(gray: np.ndarray, w: Word) -> float:
    """The width of the ink strokes in a word's box (px)."""

    box = gray[max(int(w.y0), 0) : max(int(np.ceil(w.y1)), 0), max(int(w.x0), 0) : max(int(np.ceil(w.x1)), 0)]
    if box.size == 0:
        return float("nan")
    _, ink = cv2.threshold(box, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    # A box of one grey (Otsu then calls it all ink) has no strokes to measure.
    return stroke_width(ink) if ink.any() and not ink.all() else float("nan")


def _head_rows(rgb: np.ndarray, ys: list[int], xs: list[int], words: Sequence[Word]) -> int:
    """How many leading rows are the table's header: drawn with a darker wash than the
    body's, or set in bold (:data:`HEAD_BOLD`); at least one row is left for the body."""
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    level = []
    for r in range(len(ys) - 1):
        band = gray[ys[r] + 4 : ys[r + 1] - 3, xs[0] + 4 : xs[-1] - 3].astype(np.float32)
        level.append(float(np.median(band)) if band.size else 255.0)
    if len(level) < 2:
        return 0
    body = float(np.median(level))
    strokes: list[list[float]] = [[] for _ in level]
    for w in words:
        r = int(np.searchsorted(ys, (w.y0 + w.y1) / 2)) - 1
        width = _stroke_width(gray, w)
        if 0 <= r < len(level) and width == width:
            strokes[r].append(width)
    every = [v for row in strokes for v in row]
    typical = float(np.median(every)) if every else 0.0
    count = 0
    while count < len(level) - 1 and (
            level[count] < HEAD_WASH * body
            or (strokes[count] and float(np.median(strokes[count])) >= HEAD_BOLD * typical)):
        count += 1
    return count


def _split_at_rules(w: Word, xs: list[int], vert: np.ndarray) -> list[Word]:
    """The word cut where a vertical rule crosses its box, at the space nearest the rule.

    The OCR's line detector joins the texts of neighbouring cells on one baseline ("Region
    Product line" from two header cells); by its centre the whole line would land in one
    of them and leave the other empty. Without a space near the rule the text stays whole
    (letters' widths are unknown, so a cut inside a word would be a guess).
    """
    y0, y1 = int(w.y0) + 2, int(w.y1) - 2
    cuts = [x for x in xs[1:-1] if w.x0 + 4 < x < w.x1 - 4 and y1 > y0
            and _ruled(vert, x - RULE_SLACK, x + RULE_SLACK + 1, y0, y1, across=True)]
    if not cuts:
        return [w]
    spaces = [k for k, ch in enumerate(w.text) if ch == " "]
    width = w.x1 - w.x0
    pieces, start, left = [], 0, w.x0
    for x in cuts:
        target = (x - w.x0) / width * len(w.text)
        near = [k for k in spaces if k > start and abs(k - target) <= max(2.0, 0.2 * len(w.text))]
        if not near:
            continue
        k = min(near, key=lambda k: abs(k - target))
        pieces.append(Word(w.text[start:k].strip(), left, w.y0, float(x), w.y1, w.score))
        start, left = k + 1, float(x)
    pieces.append(Word(w.text[start:].strip(), left, w.y0, w.x1, w.y1, w.score))
    return [p for p in pieces if p.text]


def _rows_html(words: Sequence[Word]) -> str:
    """A table read without its rules: one row per text line, cells at wide gaps."""
    body = []
    for row in group_rows(words):
        cells, cur = [], [row[0].text]
        for prev, w in zip(row, row[1:], strict=False):
            if w.x0 - prev.x1 > max(prev.height, w.height):
                cells.append(" ".join(cur))
                cur = []
            cur.append(w.text)
        cells.append(" ".join(cur))
        body.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return "<table>\n" + "\n".join(body) + "\n</table>" if body else format_text(words, "prose")


def table_html(rgb: np.ndarray, words: Sequence[Word]) -> str:
    ys, xs, horiz, vert = grid(rgb)
    if len(ys) < 2 or len(xs) < 2:
        return _rows_html(words)  # no ruling found (a partial page)
    cells = _cells(ys, xs, horiz, vert, _present(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY), ys, xs))
    units = (len(ys) - 1) * (len(xs) - 1)
    if units >= COLLAPSED_UNITS and max(rs * cs for _, _, rs, cs in cells) > COLLAPSED_SHARE * units:
        return _rows_html(words)
    texts: dict[tuple[int, int], list[Word]] = {}
    for w in (part for word in words for part in _split_at_rules(word, xs, vert)):
        cx, cy = (w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2
        for r, c, rs, cs in cells:
            if ys[r] <= cy < ys[r + rs] and xs[c] <= cx < xs[c + cs]:
                texts.setdefault((r, c), []).append(w)
                break
    head = _head_rows(rgb, ys, xs, words)
    lines = ["<table>"]
    for section, lo, hi, tag in (("thead", 0, head, "th"), ("tbody", head, len(ys) - 1, "td")):
        if hi <= lo:
            continue
        lines.append(f"<{section}>")
        for r in range(lo, hi):
            parts = []
            for cr, c, rs, cs in cells:
                if cr != r:
                    continue
                text = " ".join(" ".join(w.text for w in row) for row in group_rows(texts.get((r, c), [])))
                attrs = (f' rowspan="{rs}"' if rs > 1 else "") + (f' colspan="{cs}"' if cs > 1 else "")
                parts.append(f"<{tag}{attrs}>{html.escape(text)}</{tag}>")
            lines.append("<tr>" + "".join(parts) + "</tr>")
        lines.append(f"</{section}>")
    lines.append("</table>")
    return "\n".join(lines)
