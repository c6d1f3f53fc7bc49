"""OCR for the built-in reference models: RapidOCR (PP-OCRv4, ONNX) and scrap orientation.

This package's top level is light (it only names the engine and its settings, which enter
the identities of the models built on it); :mod:`.reader` and :mod:`.orient` load the
imaging libraries and are imported where a model reads.
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


def engine_version() -> str:
    return version(ENGINE)


def engine_identity() -> dict[str, Any]:
    """The engine, its version (its models ship inside the wheel) and its settings."""
    return {"engine": ENGINE, "version": engine_version(), "params": ENGINE_PARAMS}
