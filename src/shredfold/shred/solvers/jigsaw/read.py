"""Reading a solved puzzle: draw each cluster upright on white, OCR it, order the clusters.

OCR is passed in (``Reader``: image -> lines with boxes; ``Turner``: image -> quarter turns
that put it upright), so this module stays testable without the engine;
:mod:`shredfold.models.builtin.jigsaw` passes ``shredfold.shred.ocr``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import cv2
import numpy as np
from PIL import Image

from shredfold.shred.solvers.jigsaw.contour import PAPER_LEVEL, Scrap
from shredfold.shred.solvers.jigsaw.geometry import apply
from shredfold.shred.solvers.jigsaw.solve import Cluster, Solution
from shredfold.shred.solvers.jigsaw.words import Word, format_text

__all__ = ["Line", "Reader", "Reading", "Turner", "Word", "draw", "format_text", "read", "read_words", "upright"]

PAD = 12  # px of white around a drawn cluster
BAND = 1400  # px: taller pages are read in bands (the detector downsizes past ~2000 px)
SEAM_COVER = 0.3  # paper share above which a seam's pixel is drawn as paper
EDGE_REACH = 0.05  # of a cluster's extent: how far in from its far side a page edge may lie


class Line(Protocol):
    text: str
    box: tuple[float, float, float, float]
    score: float


Reader = Callable[[Image.Image], Sequence[Line]]
# How many counter-clockwise quarter turns (np.rot90) put the text of an RGB image upright.
Turner = Callable[[np.ndarray], int]


def draw(cluster: Cluster, scraps: Sequence[Scrap], scale: float = 1.0, *,
         close_seams: bool = False) -> np.ndarray:
    """RGB uint8 image of the cluster's paper on white (no shadows), enlarged ``scale``
    times (bicubic; small text of a photograph reads better drawn large once than
    enlarged again from a drawing). With ``close_seams``, paper partly covered by two
    scraps' rims (whose paper shares add up to less than one where they meet) is drawn at
    full strength, so a seam draws no white line through the letters it cuts."""
    x0, y0, x1, y1 = (v * scale for v in cluster.bounds(scraps))
    w, h = int(np.ceil(x1 - x0)) + 2 * PAD, int(np.ceil(y1 - y0)) + 2 * PAD
    acc = np.zeros((h, w, 3), np.float32)
    cover = np.zeros((h, w), np.float32)
    shift = np.array([[scale, 0.0, PAD - x0], [0.0, scale, PAD - y0], [0.0, 0.0, 1.0]])
    flags = cv2.INTER_LINEAR if scale == 1.0 else cv2.INTER_CUBIC
    lo = PAPER_LEVEL * 255.0
    for m in cluster.members:
        sc = scraps[m]
        pose = shift @ cluster.poses[m]
        pts = apply(pose, sc.outline)
        bx0, by0 = np.floor(pts.min(axis=0)).astype(int) - 2
        bx1, by1 = np.ceil(pts.max(axis=0)).astype(int) + 2
        bx0, by0 = max(bx0, 0), max(by0, 0)
        bx1, by1 = min(bx1, w), min(by1, h)
        local = np.array([[1.0, 0.0, -bx0], [0.0, 1.0, -by0], [0.0, 0.0, 1.0]]) @ pose
        # Weight = how much of a pixel is paper: the shadow (alpha below the paper level)
        # contributes nothing, so seams stay light.
        a = sc.rgba[..., 3].astype(np.float32)
        weight = np.clip((a - lo) / (255.0 - lo), 0.0, 1.0)
        pre = np.dstack([sc.rgba[..., :3].astype(np.float32) * weight[..., None], weight])
        warped = cv2.warpAffine(pre, local[:2], (bx1 - bx0, by1 - by0), flags=flags)
        acc[by0:by1, bx0:bx1] += warped[..., :3]
        cover[by0:by1, bx0:bx1] += warped[..., 3]
    if close_seams:
        # Below SEAM_COVER a pixel is the rim's own soft edge on white, above it paper.
        full = np.clip(cover, SEAM_COVER, None)
        out = np.where((cover >= SEAM_COVER)[..., None], acc / full[..., None],
                       acc + (1.0 - cover)[..., None] * 255.0)
        return np.clip(out, 0, 255).astype(np.uint8)
    cover = np.clip(cover, 0.0, 1.0)
    out = acc + (1.0 - cover)[..., None] * 255.0
    return np.clip(out, 0, 255).astype(np.uint8)


def _ink_rows(rgb: np.ndarray) -> np.ndarray:
    gray = rgb.mean(axis=2)
    return (gray < 128).sum(axis=1).astype(np.float64)


def upright(cluster: Cluster, scraps: Sequence[Scrap], turn: Turner, scale: float = 1.0,
            close_seams: bool = False) -> tuple[Cluster, np.ndarray]:
    """The cluster turned the right way up (OCR reads upside-down text badly), and its
    drawing (:func:`draw`): the way its scraps' readings say (``cluster.turn``), else the
    way ``turn`` reads it. A quarter turn (rare: a lone monospace piece)
    turns the drawing only; the cluster's poses, used to order clusters by the page edges
    they touch, keep the half turn alone."""
    rgb = draw(cluster, scraps, scale, close_seams=close_seams)
    k = turn(rgb) if cluster.turn is None else cluster.turn
    if k >= 2:
        cluster = cluster.flipped(scraps)
    return cluster, np.ascontiguousarray(np.rot90(rgb, k))


def _cuts(rgb: np.ndarray) -> list[int]:
    """Row indices splitting the image into bands of at most BAND rows, at ink-free rows."""
    h = rgb.shape[0]
    if h <= BAND + 200:
        return [0, h]
    rows = _ink_rows(rgb)
    cuts = [0]
    while h - cuts[-1] > BAND + 200:
        lo = cuts[-1] + BAND - 300
        hi = cuts[-1] + BAND
        cuts.append(lo + int(np.argmin(rows[lo:hi])))
    cuts.append(h)
    return cuts


def read_words(rgb: np.ndarray, reader: Reader) -> list[Word]:
    words = []
    cuts = _cuts(rgb)
    for top, bottom in zip(cuts, cuts[1:], strict=False):
        for ln in reader(Image.fromarray(np.ascontiguousarray(rgb[top:bottom]))):
            x0, y0, x1, y1 = ln.box
            words.append(Word(ln.text, x0, y0 + top, x1, y1 + top, ln.score))
    return words


def _is_code(kind: str | None, words: Sequence[Word]) -> bool:
    from shredfold.shred.solvers.jigsaw.markdown import looks_like_code

    return kind == "code" or (kind is None and looks_like_code(words))


@dataclass
class Reading:
    text: str
    clusters: list[Cluster]  # upright, in reading order
    words: list[list[Word]]  # recognised boxes, per cluster


def _edges(cluster: Cluster, sol: Solution) -> set[str]:
    """Which page edges the (upright) cluster touches: 'top', 'bottom', 'left', 'right'
    (a border side at the cluster's far side that way, within EDGE_REACH of its extent:
    a side taken for the page's edge inside the cluster is a cut)."""
    x0, y0, x1, y1 = cluster.bounds(sol.scraps)
    reach_x, reach_y = EDGE_REACH * (x1 - x0), EDGE_REACH * (y1 - y0)
    out = set()
    for m in cluster.members:
        for s in sol.shapes[m].sides:
            if not s.border:
                continue
            p = apply(cluster.poses[m], s.points[[0, -1]])
            d = p[1] - p[0]
            mid = p.mean(axis=0)
            # Paper lies on the left of travel, normal (-dy, dx).
            nx, ny = -d[1], d[0]
            if abs(ny) > abs(nx):
                if ny > 0 and mid[1] - y0 <= reach_y:
                    out.add("top")
                elif ny < 0 and y1 - mid[1] <= reach_y:
                    out.add("bottom")
            elif nx > 0 and mid[0] - x0 <= reach_x:
                out.add("left")
            elif nx < 0 and x1 - mid[0] <= reach_x:
                out.add("right")
    return out


def _read_some_way(rgb: np.ndarray, reader: Reader) -> tuple[np.ndarray, list[Word]]:
    """The drawing as read, or, where nothing is read the way it was turned, turned the
    quarter turn that reads the most characters.

    A page of CJK text lines up in columns as well as in rows, and a drawing on its side
    may then be taken for upright (a paper-style news_zh page, N = 8, was read as nothing):
    an empty reading costs three more readings, a page read costs none."""
    words = read_words(rgb, reader)
    best = (rgb, words)
    if words:
        return best
    for k in (1, 3, 2):
        turned = np.ascontiguousarray(np.rot90(rgb, k))
        got = read_words(turned, reader)
        if sum(len(w.text) for w in got) > sum(len(w.text) for w in best[1]):
            best = (turned, got)
    return best


def read(sol: Solution, kind: str | None, reader: Reader, turn: Turner,
         code_reader: Reader | None = None) -> Reading:
    """The page's text (or table) in reading order, from however many clusters there are.
    With no ``kind`` (the paper's protocol tells none) the page is written as the Markdown
    it shows (:mod:`shredfold.shred.solvers.jigsaw.markdown`: a table, code or prose). A page that is
    program text is read again with ``code_reader``, if one is given."""
    done = []
    for cl in sol.clusters:
        up, rgb = upright(cl, sol.scraps, turn, sol.scale, sol.close_seams)
        done.append((up, *_read_some_way(rgb, reader)))
    if code_reader is not None and _is_code(kind, [w for _, _, ws in done for w in ws]):
        done = [(up, rgb, read_words(rgb, code_reader)) for up, rgb, _ in done]

    def key(item: tuple[Cluster, np.ndarray, list[Word]]) -> tuple[int, int]:
        edges = _edges(item[0], sol)
        band = 0 if "top" in edges else 2 if "bottom" in edges else 1
        return band, -len(item[0].members)

    done.sort(key=key)
    if kind is None:
        from shredfold.shred.solvers.jigsaw.markdown import pages_markdown

        text = pages_markdown([(rgb, w) for _, rgb, w in done])
    elif kind == "table":
        from shredfold.shred.solvers.jigsaw.table import table_html

        text = "\n".join(table_html(rgb, words) for _, rgb, words in done[:1])
    else:
        text = "\n".join(t for t in (format_text(w, kind) for _, _, w in done) if t)
    return Reading(text, [c for c, _, _ in done], [w for _, _, w in done])
