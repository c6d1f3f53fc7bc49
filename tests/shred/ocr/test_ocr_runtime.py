"""The OCR engine's networks run under OpenVINO and give what ONNX Runtime gives."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from shredfold.shred.fonts import load_font
from shredfold.shred.ocr import ENGINE_PARAMS, reader
from shredfold.shred.ocr.runtime import CompiledSession


def line_image(text: str) -> np.ndarray:
    page = Image.new("RGB", (760, 80), "white")
    ImageDraw.Draw(page).text((12, 20), text, font=load_font("mono", 28), fill="black")
    return np.asarray(page)[:, :, ::-1].copy()  # BGR, as RapidOCR takes it


def test_the_engine_runs_its_detector_and_recogniser_with_openvino() -> None:
    engine = reader.engine()
    assert isinstance(engine.text_det.infer, CompiledSession)
    assert isinstance(engine.text_rec.session, CompiledSession)


def test_openvino_reads_as_onnx_runtime_does() -> None:
    from rapidocr_onnxruntime import RapidOCR

    ours = reader.engine()
    onnx = RapidOCR(**ENGINE_PARAMS)  # the same engine on ONNX Runtime's sessions
    image = line_image("Hello shredded world 12345")

    boxes, _ = ours(image, use_det=True, use_cls=False, use_rec=False)
    reference, _ = onnx(image, use_det=True, use_cls=False, use_rec=False)
    assert boxes is not None and reference is not None
    np.testing.assert_allclose(np.asarray(boxes), np.asarray(reference), atol=1.0)

    crop = image[10:70, 4:740]
    (text, score, *_), *_ = ours.text_rec([crop])[0]
    (expected, expected_score, *_), *_ = onnx.text_rec([crop])[0]
    assert text == expected == "Hello shredded world 12345"
    assert abs(score - expected_score) < 1e-4


def test_each_call_returns_its_own_output() -> None:
    # OpenVINO reuses its output tensor between calls; a result kept must not change.
    rec = reader.engine().text_rec
    first = rec.session(np.zeros((1, 3, 48, 320), np.float32))[0]
    kept = first.copy()
    rec.session(np.ones((1, 3, 48, 320), np.float32))
    np.testing.assert_array_equal(first, kept)
