"""The inference runtime under RapidOCR: OpenVINO, running the wheel's own ONNX models.

RapidOCR's pre- and post-processing (resizing, box extraction, CTC decoding, the character
list stored in the recogniser's ONNX metadata) stay RapidOCR's; only the two network calls
it makes, the detector's and the recogniser's, go to OpenVINO compiled models of the same
ONNX files. Measured on one core (bench/default_profile.py, the default spec's 12 N = 16
OCR items in one process): CPU 228 s with ONNX Runtime 1.32, 152 s with OpenVINO, every
answer the same; one ocr-islands item in a process of its own, 39 -> 27 CPU-s.

Settings (:data:`shredfold.shred.ocr.RUNTIME_PARAMS`), and why:

* one inference thread and one stream: Snakemake runs one job per core;
* ``ENABLE_CPU_PINNING=False``: OpenVINO pins its inference thread to a core, and every
  process picks the same one, so two OCR jobs at once shared one core (measured: two
  processes recognising the same crops 30 times took 3.8 s each pinned, 1.8 s unpinned;
  the default run's OCR jobs, pinned, took as long as under ONNX Runtime);
* ``INFERENCE_PRECISION_HINT=f32``: on CPUs with AMX or AVX512-BF16 OpenVINO would
  otherwise run in bfloat16, so the same image would read differently from one machine to
  the next (and, measured here, it saved no time on our crops: most of the cost is in
  preparing each new input shape, not in the arithmetic).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from shredfold.shred.ocr import RUNTIME_PARAMS

if TYPE_CHECKING:
    from rapidocr_onnxruntime import RapidOCR


class CompiledSession:
    """One ONNX model compiled by OpenVINO, called like RapidOCR's ONNX Runtime session:
    ``session(batch)`` returns the list of the model's outputs (here, one)."""

    def __init__(self, model: Path) -> None:
        import openvino

        core = openvino.Core()
        self.compiled = core.compile_model(core.read_model(str(model)), "CPU", dict(RUNTIME_PARAMS))
        self._request = self.compiled.create_infer_request()

    def __call__(self, batch: np.ndarray) -> list[np.ndarray]:
        self._request.infer({0: np.ascontiguousarray(batch, dtype=np.float32)})
        # The request's output tensor is reused by the next call: hand out a copy.
        return [self._request.get_output_tensor(0).data.copy()]


def attach(engine: RapidOCR) -> None:
    """Route ``engine``'s detector and recogniser to OpenVINO. RapidOCR 1.4.4 calls
    ``text_det.infer(batch)`` and ``text_rec.session(batch)``, each returning a list whose
    first item is the output, and loads its models from the ``models`` folder of its
    package (the files :func:`shredfold.tasks.shredbench.release.ocr_model_hashes` digests)."""
    import rapidocr_onnxruntime

    models = Path(rapidocr_onnxruntime.__file__).parent / "models"
    det: Any = engine.text_det
    rec: Any = engine.text_rec
    det.infer = CompiledSession(models / "ch_PP-OCRv4_det_infer.onnx")
    rec.session = CompiledSession(models / "ch_PP-OCRv4_rec_infer.onnx")
