"""What each pipeline job asks of the machine: memory (``mem_mb``) and threads.

The numbers are measured peaks (resident memory, ``ru_maxrss``) of the jobs of real runs,
recorded by ``bench/job_memory.py`` and written up in ``bench/job_memory_notes.md``, with a
margin on top (:data:`MARGIN`). Each benchmark declares its own jobs' peaks
(:class:`~shredfold.tasks.benchmark.Memory`, e.g. ``tasks/shredbench/resources.py``): where
the peak grows with the spec (a page's pixels, Blender, an OCR model reading N pieces, the
origami pictures), the declaration grows with it.

Snakemake sums ``mem_mb`` over the jobs it runs at once and keeps the sum within the
``mem_mb`` resource, which the Snakefile sets from what this machine has free
(:func:`machine_mem_mb`) unless ``--resources mem_mb=N`` says otherwise; a job declaring more
than that is given all of it (Snakemake caps it), so it runs alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

from shredfold.spec import ResolvedSpec
from shredfold.tasks.base import Cell, ItemSet
from shredfold.tasks.benchmark import Memory
from shredfold.tasks.registry import benchmark, benchmarks, tasks
from shredfold.tasks.registry import get as get_task

MARGIN = 1.25  # over the fitted peaks: other documents, fonts and answers than measured
# Left to Snakemake itself (390 MB measured on the default spec) and the rest of the machine
# when the bound comes from the machine.
RESERVE_MB = 768

# Each benchmark declares its own jobs' peaks (:class:`shredfold.tasks.benchmark.Memory`);
# these are what a job is given where its benchmark declares none.
DEFAULT_SET_MB = 300
DEFAULT_SCORE_MB = 300
HTTP_QUERY_BASE_MB = 100  # an API model: the interpreter and the client (54 MB measured)…
HTTP_QUERY_PER_MPX = 12.0  # …and each request in flight: its images, as PNG, base64 and JSON
AGGREGATE_MB = 300
REPORT_MB = 600
RELEASE_MB = 500



def _mb(value: float) -> int:
    return int(math.ceil(value * MARGIN / 50.0) * 50)


def _memory(task: str) -> Memory:
    return benchmark(get_task(task).benchmark).memory


def warm(item_sets: Iterable[ItemSet]) -> None:
    """Work the benchmarks do once per plan before each job's ``mem_mb`` is asked (laying out
    pages, say), each on its own tasks' sets."""
    sets = list(item_sets)
    for b in benchmarks():
        if b.memory.warm is not None:
            names = {t.name for t in tasks() if t.benchmark == b.name}
            b.memory.warm([s for s in sets if s.task in names])


def set_mem_mb(item_set: ItemSet, spec: ResolvedSpec) -> int:
    hook = _memory(item_set.task).set_mb
    return _mb(DEFAULT_SET_MB if hook is None else hook(item_set, spec))


def query_mem_mb(cell: Cell, spec: ResolvedSpec) -> int:
    memory = _memory(cell.task)
    own = None if memory.query_mb is None else memory.query_mb(cell, spec)
    if own is not None:
        return _mb(own)
    mpx = 0.0 if memory.request_mpx is None else memory.request_mpx(cell, spec)
    return _mb(HTTP_QUERY_BASE_MB + HTTP_QUERY_PER_MPX * mpx * cell.model.max_concurrency)


def score_mem_mb(cell: Cell, spec: ResolvedSpec) -> int:
    hook = _memory(cell.task).score_mb
    return _mb(DEFAULT_SCORE_MB if hook is None else hook(cell, spec))


def score_threads(cell: Cell, spec: ResolvedSpec) -> int:
    hook = _memory(cell.task).score_threads
    return 1 if hook is None else hook(cell, spec)


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
