"""One BLAS arithmetic on every machine, so that a spec gives the same bytes anywhere.

NumPy hands matrix products to OpenBLAS, which picks its kernels for the processor it finds
(Haswell, SkylakeX, Zen, Sandybridge, ...) and splits large products over as many threads as
there are cores. The kernels add in other orders, with or without fused multiply-adds, and
threads add partial sums, so one product can differ in its last bit from one machine to the
next. Measured on the default spec: the procedural origami designs came out with other
coordinates, so other keys, under this machine's own kernel (SkylakeX) than under Haswell's,
and every OrigamiBench item with them (``origami-random`` scored 0.21 / 0.27 / GS 0.327
against 0.25 / 0.27 / GS 0.321).

The origami engine no longer multiplies matrices through BLAS (:mod:`shredfold.origami.affine`),
which is what made those bytes differ; this module pins BLAS for everything else a job
computes (the jigsaw solver's least squares, for one). OpenBLAS reads its settings once, when
it loads, so :func:`pin` puts them in the environment before NumPy is imported (``import
shredfold`` calls it, and a pipeline job, ``python -m shredfold job ...``, imports nothing
before it); every process started from there inherits them:

* ``OPENBLAS_CORETYPE=Haswell``: AVX2 and FMA kernels, which every x86-64 server processor
  of the last decade runs (Intel since Haswell, AMD since Zen);
* ``OPENBLAS_NUM_THREADS=1``: one thread, so no partial sums (the pipeline runs one job per
  core anyway; measured, the jigsaw solver spent less CPU so).

These override what the environment says (a user's own ``OPENBLAS_CORETYPE`` would make
their bytes differ from everyone else's). On a processor without AVX2 and FMA, or not
x86-64, nothing is pinned: its kernels are its own, and :func:`settings` says so (a release
records it in ``environment.json``).

NumPy's own loops are not pinned. On AVX-512 processors its ``exp``, ``log`` and ``arctan2``
differ in the last bit from their AVX2 versions, and its default (unstable) sort orders ties
differently; but with AVX-512 switched off (``NPY_DISABLE_CPU_FEATURES``) every sample, item
and episode of the default spec came out byte for byte the same, the engine and the agents
sort with ``kind="stable"`` where ties can occur, and switching AVX-512 off made the layer
solver 9% slower (30 median Flat-Folder designs).
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

BLAS_CORE = "Haswell"
_CPUINFO = Path("/proc/cpuinfo")

# Set by pin(): why nothing was pinned, or "" when it was.
_not_pinned = "pin() has not run"
# Whether NumPy was loaded before pin() ran (then this process computes as it was loaded).
_too_late = False


def _cpu_flags() -> set[str]:
    """The processor's feature flags as Linux lists them (empty elsewhere)."""
    try:
        text = _CPUINFO.read_text(errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def pin() -> None:
    """Pin OpenBLAS's kernel and threads for this process and its children (see the
    module's text); idempotent."""
    global _not_pinned, _too_late
    if platform.machine().lower() not in ("x86_64", "amd64"):
        _not_pinned = f"a {platform.machine()} processor: its own kernels"
        return
    if not {"avx2", "fma"} <= _cpu_flags():
        _not_pinned = "a processor without AVX2 and FMA: its own kernels"
        return
    env = os.environ
    pinned_already = env.get("OPENBLAS_CORETYPE") == BLAS_CORE and env.get("OPENBLAS_NUM_THREADS") == "1"
    _too_late = _too_late or ("numpy" in sys.modules and not pinned_already)
    env["OPENBLAS_CORETYPE"] = BLAS_CORE
    env["OPENBLAS_NUM_THREADS"] = "1"
    _not_pinned = ""


def settings() -> dict[str, str]:
    """What this process computes with: the pinned settings, or why there are none."""
    if _not_pinned:
        return {"pinned": "no", "why": _not_pinned}
    out = {"pinned": "yes", "openblas_coretype": BLAS_CORE, "openblas_num_threads": "1"}
    if _too_late:
        out["note"] = "NumPy was loaded before shredfold: this process kept its own BLAS settings"
    return out
