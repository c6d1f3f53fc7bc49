"""How a ShredBench answer fails, measured per item: values in, values out.

The paper describes its models' failures only in words (strips left out, text made up, lines
in the wrong order). Here each is a number, from where every character of the truth was
drawn (:class:`~shredfold.shred.glyphs.PageGlyphs`), the pieces' polygons and the answer:

- **omission** — per scrap, the share of its own characters (those whose box centre lies on
  it) that the answer does not contain; the item's value is the mean over scraps that hold
  text, so a dropped narrow strip counts as much as a dropped wide one. ``omission_small`` and
  ``omission_large`` split the scraps at the item's median area: their gap is how much more
  often narrow strips are dropped;
- **hallucination** — the share of the answer's characters aligned to nothing in the truth:
  not part of any matched run, and not standing in for truth characters that were misread
  between two matched runs (a misread character is an omission and a substitution, not an
  invention);
- **reading order** — Kendall's τ-b between the truth's line order and where the lines
  were found in the answer (the median answer position of each line's matched characters),
  over lines of which at least :data:`LINE_FOUND` were found;
- **cut-word recovery** — of the words a scrap boundary passes through, the share the
  answer spells whole (every character matched, consecutively).

Matching (:func:`align`) finds the answer's text wherever the answer put it: long equal
blocks first, in any order (so swapped lines or scraps read in another order are moved
text, not omitted and invented text, as one monotone edit-distance alignment would count
them), then the gaps between blocks by edit distance (misread characters). Runs shorter
than :data:`MIN_RUN` are not trusted: two unrelated texts share plenty of single letters.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from rapidfuzz.distance import Levenshtein

# Bump when a change alters any diagnostic (it is part of the signature a release records).
VERSION = 1
# Blocks of at least this many equal characters anchor the matching wherever they stand in
# the answer (four Chinese characters are about as specific as eight Latin letters).
TILE = {"zh": 4, "en": 8}
# Inside the gaps between anchors, equal runs shorter than this are chance: two unrelated
# texts share plenty of single letters.
MIN_RUN = {"zh": 2, "en": 3}
MAX_REPEATS = 64  # a block repeated more often than this in the truth anchors nothing
LINE_FOUND = 0.3  # share of a line's characters that must be matched to place it
CUT_SHARE = 0.02  # a word is cut when two pieces each hold at least this share of its box


@dataclass(frozen=True)
class Alignment:
    """``t2a[i]``: the answer index matched to truth character i, or -1. ``inserted[j]``:
    answer character j is aligned to nothing (neither matched nor a misreading)."""

    t2a: np.ndarray
    inserted: np.ndarray


def align(truth: str, answer: str, tile: int = 8, min_run: int = 3) -> Alignment:
    """Match an answer's characters to the truth's, wherever the answer put them.

    1. *Tiling*: the longest blocks of equal characters (at least ``tile`` long) common to
       both, taken greedily longest first, each character used once (greedy string tiling,
       with an index of the truth's ``tile``-grams). Blocks are found in any order, so a
       moved line or scrap is matched where it was moved to.
    2. *Gaps*: between two blocks adjacent in the answer, the answer's characters are
       aligned (edit distance, monotone) with the unmatched truth that follows the first
       block and precedes the second; equal runs of at least ``min_run`` are matched. This
       recovers text around misread characters.
    3. Both again among the characters still unmatched, with blocks of ``min_run + 1``.
    """
    t2a = np.full(len(truth), -1, dtype=np.int64)
    a2t = np.full(len(answer), -1, dtype=np.int64)
    if truth and answer:
        # Short moved blocks (a table's merged cell read in another row, a word on a scrap
        # of its own) are tiled only among what the first two steps left.
        for k in (max(1, tile), min_run + 1):
            _tile(truth, answer, t2a, a2t, k)
            for a_from, a_to, region in _gaps(t2a, a2t):
                _align_gap(truth, answer, t2a, a2t, a_from, a_to, region, min_run)
    return Alignment(t2a, _inserted(t2a, a2t))


def _tile(truth: str, answer: str, t2a: np.ndarray, a2t: np.ndarray, k: int) -> None:
    if len(truth) < k or len(answer) < k:
        return
    while True:
        index: dict[str, list[int]] = {}
        free_t = t2a < 0
        for i in range(len(truth) - k + 1):
            if free_t[i : i + k].all():
                index.setdefault(truth[i : i + k], []).append(i)
        free_a = a2t < 0
        candidates = []
        for j in range(len(answer) - k + 1):
            starts = index.get(answer[j : j + k])
            if not starts or len(starts) > MAX_REPEATS or not free_a[j : j + k].all():
                continue
            for i in starts:
                if i and j and free_t[i - 1] and free_a[j - 1] and truth[i - 1] == answer[j - 1]:
                    continue  # inside a longer block that starts earlier
                n = k
                while (
                    i + n < len(truth) and j + n < len(answer) and free_t[i + n] and free_a[j + n]
                    and truth[i + n] == answer[j + n]
                ):  # fmt: skip
                    n += 1
                candidates.append((-n, i, j))
        if not candidates:
            return
        taken = 0
        for neg, i, j in sorted(candidates):
            n = -neg
            if (t2a[i : i + n] < 0).all() and (a2t[j : j + n] < 0).all():
                t2a[i : i + n] = np.arange(j, j + n)
                a2t[j : j + n] = np.arange(i, i + n)
                taken += 1
        if not taken:
            return


def _free_run_after(t2a: np.ndarray, t: int) -> range:
    """The unmatched truth characters right after truth index ``t`` (-1: the start)."""
    end = t + 1
    while end < len(t2a) and t2a[end] < 0:
        end += 1
    return range(t + 1, end)


def _free_run_before(t2a: np.ndarray, t: int) -> range:
    """The unmatched truth characters right before truth index ``t`` (len: the end)."""
    start = t
    while start > 0 and t2a[start - 1] < 0:
        start -= 1
    return range(start, t)


def _gaps(t2a: np.ndarray, a2t: np.ndarray) -> list[tuple[int, int, list[int]]]:
    """Each stretch of unmatched answer characters with the unmatched truth characters that
    border it: those after the matched character before it and before the one after it."""
    matched = np.flatnonzero(a2t >= 0)
    if not len(matched):
        return []
    out = []
    bounds = [(-1, int(matched[0]))]
    bounds += [(int(x), int(y)) for x, y in zip(matched[:-1], matched[1:], strict=True) if y - x > 1]
    bounds.append((int(matched[-1]), len(a2t)))
    for left, right in bounds:
        if right - left <= 1:
            continue
        region: list[int] = []
        if left >= 0:
            region += list(_free_run_after(t2a, int(a2t[left])))
        if right < len(a2t):
            region += [t for t in _free_run_before(t2a, int(a2t[right])) if t not in set(region)]
        out.append((left + 1, right, region))
    return out


def _align_gap(
    truth: str, answer: str, t2a: np.ndarray, a2t: np.ndarray, a_from: int, a_to: int,
    region: list[int], min_run: int,
) -> None:  # fmt: skip
    if not region:
        return
    ts = "".join(truth[i] for i in region)
    pairs = []
    for op in Levenshtein.opcodes(ts, answer[a_from:a_to]):
        if op.tag == "equal":
            pairs += [(region[op.src_start + k], a_from + op.dest_start + k) for k in range(op.src_end - op.src_start)]
    run: list[tuple[int, int]] = []
    for t, a in [*pairs, (-2, -2)]:
        if run and (t, a) == (run[-1][0] + 1, run[-1][1] + 1):
            run.append((t, a))
            continue
        if len(run) >= min_run:
            for rt, ra in run:
                t2a[rt], a2t[ra] = ra, rt
        run = [(t, a)]


def _inserted(t2a: np.ndarray, a2t: np.ndarray) -> np.ndarray:
    """Unmatched answer characters that do not stand in for the unmatched truth bordering
    them (a misread character is a substitution: one truth character lost, none invented)."""
    out = a2t < 0
    for a_from, a_to, region in _gaps(t2a, a2t):
        out[a_from : a_from + min(a_to - a_from, len(region))] = False
    if not (a2t >= 0).any():
        out[:] = True
    return out


# ---------------------------------------------------------------- geometry


def _polygons(polygons: Sequence[Sequence[Sequence[float]]]) -> np.ndarray:
    return np.asarray([shapely.Polygon(p) for p in polygons], dtype=object)


def piece_of_glyphs(boxes: np.ndarray, polygons: Sequence[Sequence[Sequence[float]]]) -> np.ndarray:
    """The polygon holding each box's centre (the nearest one for a centre on no polygon)."""
    polys = _polygons(polygons)
    cx = (boxes[:, 0] + boxes[:, 2]) / 2
    cy = (boxes[:, 1] + boxes[:, 3]) / 2
    out = np.full(len(boxes), -1, dtype=np.int64)
    for k, poly in enumerate(polys):
        inside = shapely.contains_xy(poly, cx, cy) & (out < 0)
        out[inside] = k
    missing = np.flatnonzero(out < 0)
    if len(missing):
        points = shapely.points(cx[missing], cy[missing])
        dist = np.stack([shapely.distance(points, p) for p in polys], axis=1)
        out[missing] = np.argmin(dist, axis=1)
    return out


def cut_words(
    boxes: np.ndarray, words: np.ndarray, polygons: Sequence[Sequence[Sequence[float]]]
) -> list[np.ndarray]:
    """The glyph indices of each word that a piece boundary passes through: at least two
    pieces each hold :data:`CUT_SHARE` of the word's box."""
    ids = np.unique(words[words >= 0])
    if len(polygons) < 2 or not len(ids):
        return []
    members = [np.flatnonzero(words == w) for w in ids]
    wboxes = shapely.box(
        [boxes[m, 0].min() for m in members],
        [boxes[m, 1].min() for m in members],
        [boxes[m, 2].max() for m in members],
        [boxes[m, 3].max() for m in members],
    )
    polys = _polygons(polygons)
    areas = shapely.area(wboxes)
    shares = np.stack([shapely.area(shapely.intersection(wboxes, p)) for p in polys], axis=1)
    shares = shares / np.maximum(areas, 1e-9)[:, None]
    cut = (shares >= CUT_SHARE).sum(axis=1) >= 2
    return [m for m, c in zip(members, cut, strict=True) if c]


# ---------------------------------------------------------------- one item


@dataclass(frozen=True)
class Diagnosis:
    omission: float | None
    omission_small: float | None
    omission_large: float | None
    hallucination: float | None
    order_tau: float | None
    cut_words: int
    cut_word_recovery: float | None
    pieces: list[dict[str, float | int | None]]  # per polygon: area share, chars, omission
    alignment: Alignment

    def columns(self) -> dict[str, object]:
        """The cell-table columns (rounded, so re-scoring reproduces them exactly)."""
        return {
            "omission": _round(self.omission),
            "omission_small": _round(self.omission_small),
            "omission_large": _round(self.omission_large),
            "hallucination": _round(self.hallucination),
            "order_tau": _round(self.order_tau),
            "cut_words": self.cut_words,
            "cut_word_recovery": _round(self.cut_word_recovery),
            "piece_omission": json.dumps(self.pieces, separators=(",", ":")),
        }


def _round(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else round(float(v), 6)


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b (None when fewer than two points or either side is constant).

    Computed here over all pairs, as ``scipy.stats.kendalltau`` defines it (concordant minus
    discordant pairs over the square roots of the pairs untied in x and in y): importing
    scipy.stats costs every score job ~0.7 CPU-s, more than the rest of its diagnostics,
    and the points are a page's text lines (tens to a few hundred), so the n² pairs are
    cheap.
    """
    if len(x) < 2:
        return None
    xs, ys = np.asarray(x, np.float64), np.asarray(y, np.float64)
    upper = np.triu_indices(len(xs), k=1)
    sx = np.sign(xs[:, None] - xs[None, :])[upper]
    sy = np.sign(ys[:, None] - ys[None, :])[upper]
    untied_x, untied_y = float(np.count_nonzero(sx)), float(np.count_nonzero(sy))
    if untied_x == 0 or untied_y == 0:
        return None
    tau = float(np.dot(sx, sy)) / math.sqrt(untied_x) / math.sqrt(untied_y)
    return min(1.0, max(-1.0, tau))


def diagnose(
    truth: str,
    boxes: np.ndarray,
    lines: np.ndarray,
    words: np.ndarray,
    polygons: Sequence[Sequence[Sequence[float]]],
    page_area: float,
    answer: str,
    lang: str = "en",
) -> Diagnosis:
    """The failure diagnostics of one answer. ``truth`` is the truth's skeleton, character
    i drawn in ``boxes[i]`` on line ``lines[i]`` as part of word ``words[i]`` (-1: none);
    ``answer`` is the answer's skeleton (:func:`shredfold.shred.glyphs.skeleton`)."""
    if len(truth) != len(boxes):
        raise ValueError(f"{len(truth)} truth characters but {len(boxes)} boxes")
    lang = "zh" if lang == "zh" else "en"
    al = align(truth, answer, TILE[lang], MIN_RUN[lang])
    found = al.t2a >= 0

    piece = piece_of_glyphs(boxes, polygons) if len(boxes) else np.zeros(0, np.int64)
    pieces: list[dict[str, float | int | None]] = []
    for k, poly in enumerate(polygons):
        own = piece == k
        chars = int(own.sum())
        pieces.append({
            "area": round(float(shapely.Polygon(poly).area) / page_area, 6),
            "chars": chars,
            "omission": round(1.0 - float(found[own].mean()), 6) if chars else None,
        })  # fmt: skip
    with_text = [p for p in pieces if p["chars"]]
    omissions = [float(p["omission"]) for p in with_text]  # type: ignore[arg-type]
    small = large = None
    if len(with_text) >= 2:
        by_area = sorted(with_text, key=lambda p: (p["area"], p["omission"]))
        half = len(by_area) // 2
        small = _mean([float(p["omission"]) for p in by_area[:half]])  # type: ignore[arg-type]
        large = _mean([float(p["omission"]) for p in by_area[half:]])  # type: ignore[arg-type]

    hallucination = float(al.inserted.mean()) if len(answer) else None

    placed_lines, positions = [], []
    for line in np.unique(lines):
        mine = lines == line
        hit = al.t2a[mine & found]
        if mine.sum() and len(hit) / mine.sum() >= LINE_FOUND:
            placed_lines.append(int(line))
            positions.append(float(np.median(hit)))
    tau = kendall_tau(placed_lines, positions)

    cut = cut_words(boxes, words, polygons)
    whole = sum(bool(found[m].all() and np.all(np.diff(al.t2a[m]) == 1)) for m in cut)
    recovery = whole / len(cut) if cut else None

    return Diagnosis(
        omission=_mean(omissions),
        omission_small=small,
        omission_large=large,
        hallucination=hallucination,
        order_tau=tau,
        cut_words=len(cut),
        cut_word_recovery=recovery,
        pieces=pieces,
        alignment=al,
    )
