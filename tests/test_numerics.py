"""`import shredfold` pins the BLAS arithmetic of the process and of every process it starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shredfold.numerics import settings

# the module's own decision for this machine (x86-64 with AVX2 and FMA), not a copy of it
pinnable = pytest.mark.skipif(settings()["pinned"] != "yes", reason=f"nothing is pinned here: {settings().get('why')}")

_PRODUCTS = """
import hashlib, json, sys
if sys.argv[1] == "numpy-first":
    import numpy
import shredfold.numerics
import numpy as np
rng = np.random.default_rng(0)
a, b = rng.standard_normal((300, 400)), rng.standard_normal((400, 200))
v, w = rng.standard_normal(300_000), rng.standard_normal(300_000)
small = rng.standard_normal((500, 3)) @ rng.standard_normal((3, 3))
digest = hashlib.sha256((a @ b).tobytes() + np.dot(v, w).tobytes() + small.tobytes()).hexdigest()
print(json.dumps({"digest": digest, "settings": shredfold.numerics.settings()}))
"""


def _run(order: str, **env: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _PRODUCTS, order],
        env={**os.environ, **env}, capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return json.loads(out.stdout)


@pinnable
def test_products_come_out_the_same_whatever_the_environment_says() -> None:
    # without the pin these three differ on this kind of machine (SkylakeX: the dot product;
    # Sandybridge, without FMA: every product; two threads: the large ones)
    runs = [
        _run("shredfold-first", OPENBLAS_CORETYPE="SkylakeX", OPENBLAS_NUM_THREADS="2"),
        _run("shredfold-first", OPENBLAS_CORETYPE="Sandybridge"),
        _run("shredfold-first", OPENBLAS_CORETYPE="Haswell", OPENBLAS_NUM_THREADS="1"),
    ]
    assert len({r["digest"] for r in runs}) == 1
    assert runs[0]["settings"] == {"pinned": "yes", "openblas_coretype": "Haswell", "openblas_num_threads": "1"}


@pinnable
def test_numpy_loaded_first_keeps_its_kernels_and_says_so() -> None:
    late = _run("numpy-first", OPENBLAS_CORETYPE="Sandybridge")
    assert late["settings"]["pinned"] == "yes"
    assert "loaded before shredfold" in late["settings"]["note"]
    assert "note" not in _run("numpy-first", OPENBLAS_CORETYPE="Haswell", OPENBLAS_NUM_THREADS="1")["settings"]
