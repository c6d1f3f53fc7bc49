"""ShredBench's jobs' memory, in MB before :mod:`shredfold.stages.resources` adds its margin:
measured peaks (``bench/job_memory.py``, ``bench/job_memory_notes.md``) that grow with a
page's pixels, Blender and an OCR model reading N pieces."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from shredfold.progress import track
from shredfold.spec import ResolvedSpec
from shredfold.tasks.base import Cell, ItemSet

# Fitted to the measured peaks in MB (bench/job_memory_notes.md). A ShredBench set's peak
# grows with its page's area A and with D = (w + h)² / 2, the largest box a piece can need
# when it is turned (a whole tall page at N = 1, turned 45°): both in megapixels, each term
# shrinking as 1/N where it is one piece's.
SHRED_SET_BASE_MB = 230
SHRED_SET_AREA = (42.0, 38.0)  # MB per megapixel of the page: a + b / N
SHRED_SET_TURNED = (6.0, 12.0)  # MB per megapixel of D: a + b / N
BLENDER_SET_BASE_MB = 640  # bpy loaded, Cycles' scene and buffers…
BLENDER_SET_TURNED = (16.0, 75.0)  # …and each piece's render target: MB per megapixel of D
OUTSIDE_SET_PER_MPX = 40.0  # decoded images re-encoded, pieces composited
OCR_QUERY_BASE_MB = 800  # ocr-islands / jigsaw-ocr: OpenVINO and both OCR models
OCR_QUERY_PER_MPX = 85.0
ORACLE_QUERY_MB = 60
SCORE_MB = 230  # text metrics, TEDS, diagnostics


@lru_cache(maxsize=8192)
def _page(doc_json: str, render_json: str) -> tuple[int, int]:
    from shredfold.corpus.document import Document
    from shredfold.shred.render import page_size
    from shredfold.spec import RenderSettings

    return page_size(Document.model_validate_json(doc_json), RenderSettings.model_validate_json(render_json))


def item_pixels(item: Any) -> tuple[float, float]:
    """A ShredBench item's page area A and turned box D = (w + h)² / 2, in megapixels: its
    page from the layout (nothing drawn), or an outside sample's images as the plan read
    them (all of them, D taken as 2 A)."""
    if item.outside is not None:
        ref = item.outside
        files = [ref.composite, *ref.pieces] if ref.composite is not None else list(ref.pieces)
        area = sum(f.size[0] * f.size[1] for f in files if f.size) / 1e6
        return area, 2 * area
    w, h = _page(item.doc.model_dump_json(), item.render.model_dump_json())
    return w * h / 1e6, (w + h) ** 2 / 2e6


def warm(item_sets: Iterable[ItemSet]) -> None:
    """Lay out every rendered page once, ahead of Snakemake asking each job's ``mem_mb`` (the
    paper style takes about a tenth of a second a page): with a bar when it takes a while."""
    rendered = [i for s in item_sets for i in s.items if i.outside is None]
    for item in track(rendered, "plan: page sizes for mem_mb", unit="page"):
        item_pixels(item)


def _largest(items: Any) -> float:
    return max((item_pixels(i)[0] for i in items), default=0.0)


def set_mb(item_set: ItemSet, spec: ResolvedSpec) -> float:
    sb = spec.spec.shred
    n = int(item_set.labels.get("n", 1))
    sizes = [item_pixels(i) for i in item_set.items] or [(0.0, 0.0)]
    if sb is not None and sb.samples is not None:
        return SHRED_SET_BASE_MB + OUTSIDE_SET_PER_MPX * max(a for a, _ in sizes)
    if sb is not None and sb.synthesis.mode == "blender":
        b1, b2 = BLENDER_SET_TURNED
        return BLENDER_SET_BASE_MB + (b1 + b2 / n) * max(d for _, d in sizes)
    (a1, a2), (d1, d2) = SHRED_SET_AREA, SHRED_SET_TURNED
    return SHRED_SET_BASE_MB + max((a1 + a2 / n) * a + (d1 + d2 / n) * d for a, d in sizes)


def query_mb(cell: Cell, spec: ResolvedSpec) -> float | None:
    """Its in-process solvers' memory (None: a model behind an endpoint)."""
    if cell.model.adapter in ("ocr-islands", "jigsaw-ocr"):
        return OCR_QUERY_BASE_MB + OCR_QUERY_PER_MPX * _largest(cell.item_set.items)
    if cell.model.adapter == "oracle":
        return ORACLE_QUERY_MB
    return None


def request_mpx(cell: Cell, spec: ResolvedSpec) -> float:
    """The megapixels of a request's images: at most its page's (the pieces tile it)."""
    return _largest(cell.item_set.items)


def score_mb(cell: Cell, spec: ResolvedSpec) -> float:
    return SCORE_MB
