"""What each pipeline job asks of the machine: memory (``mem_mb``) and threads.

The numbers are measured peaks (resident memory, ``ru_maxrss``) of the jobs of real runs,
recorded by ``bench/job_memory.py`` and written up in ``bench/job_memory_notes.md``, with a
margin on top (:data:`MARGIN`). Where the peak grows with the spec (a page's pixels, Blender,
an OCR model reading N pieces, the origami pictures), the declaration grows with it.

Snakemake sums ``mem_mb`` over the jobs it runs at once and keeps the sum within the
``mem_mb`` resource, which the Snakefile sets from what this machine has free
(:func:`machine_mem_mb`) unless ``--resources mem_mb=N`` says otherwise; a job declaring more
than that is given all of it (Snakemake caps it), so it runs alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from shredfold.progress import track
from shredfold.spec import ResolvedSpec
from shredfold.tasks.base import Cell, ItemSet

MARGIN = 1.25  # over the fitted peaks: other documents, fonts and answers than measured
# Left to Snakemake itself (390 MB measured on the default spec) and the rest of the machine
# when the bound comes from the machine.
RESERVE_MB = 768

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
ORIGAMI_SET_MB = 330  # MCQ pictures and full-step targets at 256 px
ORIGAMI_SET_PER_MPX = 500.0  # …and per megapixel of image_size² beyond that
# A user's design validated by its own job: the layer solver's memory follows no measure of
# the design (Dragon HP, 1550 vertices: 483 MB; Shrimp v2, 1529: 5716 MB when its 60 s ran
# out), only the time it is given: per second of validate_timeout_s, the most measured (300
# Japanese Spiny Lobster v2: 11 GB after 100 s, bench/origami_scale_notes.md).
VALIDATE_BASE_MB = 200  # a small design's whole job (194 MB measured)
VALIDATE_PER_S = 110.0
OCR_QUERY_BASE_MB = 800  # ocr-islands / jigsaw-ocr: OpenVINO and both OCR models
OCR_QUERY_PER_MPX = 85.0
ORIGAMI_AGENT_MB = 320
HTTP_QUERY_BASE_MB = 100  # an API model: the interpreter and the client (54 MB measured)…
HTTP_QUERY_PER_MPX = 12.0  # …and each request in flight: its images, as PNG, base64 and JSON
ORACLE_QUERY_MB = 60
SCORE_MB = 230  # text metrics, TEDS, diagnostics
ORIGAMI_SCORE_MB = 300
SS_SCORE_MB = 2000  # torch and a ViT-B-32 CLIP model for SS (its weights held twice on load)
AGGREGATE_MB = 300
REPORT_MB = 600
RELEASE_MB = 500

# A score job that computes SS runs torch on this many threads (OMP_NUM_THREADS).
SS_THREADS = 2


def _mb(value: float) -> int:
    return int(math.ceil(value * MARGIN / 50.0) * 50)


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


def warm(items: Iterable[Any]) -> None:
    """Lay out every rendered page once, ahead of Snakemake asking each job's ``mem_mb`` (the
    paper style takes about a tenth of a second a page): with a bar when it takes a while."""
    rendered = [i for i in items if i.outside is None]
    for item in track(rendered, "plan: page sizes for mem_mb", unit="page"):
        item_pixels(item)


def item_mpx(item: Any) -> float:
    return item_pixels(item)[0]


def _largest(items: Any) -> float:
    return max((item_mpx(i) for i in items), default=0.0)


def set_mem_mb(item_set: ItemSet, spec: ResolvedSpec) -> int:
    if item_set.task == "shred":
        sb = spec.spec.shred
        n = int(item_set.labels.get("n", 1))
        sizes = [item_pixels(i) for i in item_set.items] or [(0.0, 0.0)]
        if sb is not None and sb.samples is not None:
            return _mb(SHRED_SET_BASE_MB + OUTSIDE_SET_PER_MPX * max(a for a, _ in sizes))
        if sb is not None and sb.synthesis.mode == "blender":
            b1, b2 = BLENDER_SET_TURNED
            return _mb(BLENDER_SET_BASE_MB + (b1 + b2 / n) * max(d for _, d in sizes))
        (a1, a2), (d1, d2) = SHRED_SET_AREA, SHRED_SET_TURNED
        return _mb(SHRED_SET_BASE_MB + max((a1 + a2 / n) * a + (d1 + d2 / n) * d for a, d in sizes))
    ob = spec.spec.origami
    if ob is not None and item_set.labels.get("task") == "validate":
        return _mb(VALIDATE_BASE_MB + VALIDATE_PER_S * ob.designs.validate_timeout_s)
    size = ob.image_size if ob is not None else 256
    return _mb(ORIGAMI_SET_MB + ORIGAMI_SET_PER_MPX * max(size * size - 256 * 256, 0) / 1e6)


def query_mem_mb(cell: Cell, spec: ResolvedSpec) -> int:
    model = cell.model
    mpx = _largest(cell.item_set.items) if cell.task == "shred" else 0.0
    if model.adapter in ("ocr-islands", "jigsaw-ocr"):
        return _mb(OCR_QUERY_BASE_MB + OCR_QUERY_PER_MPX * mpx)
    if model.adapter.startswith("origami-"):
        return _mb(ORIGAMI_AGENT_MB)
    if model.adapter == "oracle":
        return _mb(ORACLE_QUERY_MB)
    if cell.task != "shred":
        ob = spec.spec.origami
        size = ob.image_size if ob is not None else 256
        mpx = 5 * size * size / 1e6  # an MCQ item's five pictures
    return _mb(HTTP_QUERY_BASE_MB + HTTP_QUERY_PER_MPX * mpx * model.max_concurrency)


def _ss(cell: Cell, spec: ResolvedSpec) -> bool:
    """Whether the cell's score job computes SS (CLIP weights named in the spec)."""
    ob = spec.spec.origami
    if cell.task != "origami_fullstep" or ob is None:
        return False
    return ob.clip.checkpoint is not None or ob.clip.pretrained is not None


def score_mem_mb(cell: Cell, spec: ResolvedSpec) -> int:
    if _ss(cell, spec):
        return _mb(SS_SCORE_MB)
    return _mb(SCORE_MB if cell.task == "shred" else ORIGAMI_SCORE_MB)


def score_threads(cell: Cell, spec: ResolvedSpec) -> int:
    return SS_THREADS if _ss(cell, spec) else 1


# ---------------------------------------------------------------- the machine


CGROUP = Path("/sys/fs/cgroup")


def cgroup_free_mb(root: Path = CGROUP) -> float | None:
    """What this process's cgroup still allows (v2 ``memory.max``, v1 ``limit_in_bytes``),
    or None when it sets no limit."""
    candidates = [
        (root / "memory.max", root / "memory.current"),
        (root / "memory" / "memory.limit_in_bytes", root / "memory" / "memory.usage_in_bytes"),
    ]
    for limit_file, usage_file in candidates:
        try:
            text = limit_file.read_text().strip()
            usage = int(usage_file.read_text().strip())
        except (OSError, ValueError):
            continue
        if text == "max" or not text.isdigit() or int(text) >= 1 << 60:
            return None
        return max(int(text) - usage, 0) / 2**20
    return None


def machine_mem_mb() -> int:
    """Memory the pipeline's jobs may use together on this machine: what is available now
    (free and reclaimable, within the cgroup's limit if there is one), less a reserve for
    Snakemake and the rest (``--resources mem_mb=N`` overrides it)."""
    import psutil

    free = psutil.virtual_memory().available / 2**20
    cgroup = cgroup_free_mb()
    if cgroup is not None:
        free = min(free, cgroup)
    return max(int(free) - RESERVE_MB, 512)
