"""One floating-point arithmetic on every machine, so that a spec gives the same bytes anywhere.

NumPy hands matrix products to OpenBLAS, which picks its kernels for the processor it finds
(Haswell, SkylakeX, Zen, Sandybridge, ...) and splits large products over as many threads as
there are cores. The kernels add in other orders, with or without fused multiply-adds, and
threads add partial sums, so one product can differ in its last bit from one machine to the
next; a last bit can move an edge across a pixel boundary. Measured on the default spec: three
ShredBench sets' samples and an OrigamiBench set's items were built with other bytes under
this machine's own kernel (SkylakeX) than under Haswell's, and ``origami-random`` scored
0.21 / 0.27 / GS 0.327 against 0.25 / 0.27 / GS 0.321.

OpenBLAS and NumPy read their settings once, when they load, so :func:`pin` puts them in the
environment before NumPy is imported (``import shredfold`` calls it, and a pipeline job,
``python -m shredfold job …``, imports nothing before it); every process started from there
inherits them:

* ``OPENBLAS_CORETYPE=Haswell``: AVX2 and FMA kernels, which every x86-64 server processor
  of the last decade runs (Intel since Haswell, AMD since Zen);
* ``OPENBLAS_NUM_THREADS=1``: one thread, so no partial sums (the pipeline runs one job per
  core anyway);
* ``NPY_DISABLE_CPU_FEATURES`` += NumPy's AVX-512 groups: processors that have AVX-512 run
  the same AVX2 loops as those that do not (``exp``, ``log`` and ``arctan2`` differ in the
  last bit between the two, and AVX-512's unstable sorts order ties differently).

These override what the environment says (a user's own ``OPENBLAS_CORETYPE`` would make
their bytes differ from everyone else's). On a processor without AVX2 and FMA, or not
x86-64, nothing is pinned: its kernels are its own, and :func:`settings` says so (a release
records it in ``environment.json``).
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

BLAS_CORE = "Haswell"
_NUMPY_OFF = (
    "AVX512F", "AVX512CD", "AVX512_KNL", "AVX512_KNM", "AVX512_SKX",
    "AVX512_CLX", "AVX512_CNL", "AVX512_ICL", "AVX512_SPR",
)  # fmt: skip
_CPUINFO = Path("/proc/cpuinfo")

# Set by pin(): why nothing was pinned, or "" when it was.
_not_pinned = "pin() has not run"
# Whether NumPy was loaded before pin() ran (then this process computes as it was loaded).
_too_late = False


def cpu_flags() -> set[str]:
    try:
        text = _CPUINFO.read_text(errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def pin() -> None:
    """Pin OpenBLAS's kernel and threads and NumPy's CPU loops for this process and its
    children (see the module's text); idempotent."""
    global _not_pinned, _too_late
    if platform.machine().lower() not in ("x86_64", "amd64"):
        _not_pinned = f"a {platform.machine()} processor: its own kernels"
        return
    if not {"avx2", "fma"} <= cpu_flags():
        _not_pinned = "a processor without AVX2 and FMA: its own kernels"
        return
    _too_late = "numpy" in sys.modules and os.environ.get("OPENBLAS_CORETYPE") != BLAS_CORE
    os.environ["OPENBLAS_CORETYPE"] = BLAS_CORE
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    off = os.environ.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split()
    os.environ["NPY_DISABLE_CPU_FEATURES"] = " ".join(dict.fromkeys([*off, *_NUMPY_OFF]))
    _not_pinned = ""


def settings() -> dict[str, str]:
    """What this process computes with: the pinned settings, or why there are none."""
    if _not_pinned:
        return {"pinned": "no", "why": _not_pinned}
    out = {
        "pinned": "yes",
        "openblas_coretype": BLAS_CORE,
        "openblas_num_threads": "1",
        "numpy_disabled": " ".join(_NUMPY_OFF),
    }
    if _too_late:
        out["note"] = "NumPy was loaded before shredfold: this process kept its own kernels"
    return out
