"""OCR for the built-in reference models: RapidOCR (PP-OCRv4, ONNX, run by OpenVINO) and
scrap orientation.

This package's top level is light (it only names the engine and its settings, which enter
the identities of the models built on it); :mod:`.reader` and :mod:`.orient` load the
imaging libraries and are imported where a model reads; :mod:`.runtime` runs the models.
"""

from __future__ import annotations

from typing import Any

from shredfold.versions import version

ENGINE = "rapidocr-onnxruntime"

# Everything that changes what the engine returns; part of any cache key built on OCR.
ENGINE_PARAMS: dict[str, object] = {
    "intra_op_num_threads": 1,
    "inter_op_num_threads": 1,
    "det_limit_type": "max",
    "use_cls": False,
    "rec_batch_num": 1,
}

# The runtime that evaluates the engine's networks (see .runtime) and its settings; part of
# the identity for the same reason.
RUNTIME = "openvino"
RUNTIME_PARAMS: dict[str, object] = {
    "INFERENCE_NUM_THREADS": 1,
    "NUM_STREAMS": 1,
    "PERFORMANCE_HINT": "LATENCY",
    "INFERENCE_PRECISION_HINT": "f32",
    "ENABLE_CPU_PINNING": False,
}


def engine_version() -> str:
    return version(ENGINE)


def engine_identity() -> dict[str, Any]:
    """The engine, its version (its models ship inside the wheel) and its settings, and the
    runtime that evaluates its models, with its version and settings."""
    return {
        "engine": ENGINE,
        "version": engine_version(),
        "params": ENGINE_PARAMS,
        "runtime": {"name": RUNTIME, "version": version(RUNTIME), "params": RUNTIME_PARAMS},
    }
