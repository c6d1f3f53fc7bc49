"""``jigsaw-ocr``: classical jigsaw reassembly of the scraps, then OCR of the page.

A reference row: how far plain geometry gets with exactly what an API model sees (the
piece images of the request; never the cut polygons or the truth). See
:mod:`shredfold.jigsaw` for the method.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from shredfold.models.base import ModelCallError, Request, Response
from shredfold.prompts.shred import kind_of_template
from shredfold.spec import ModelConfig

VERSION = 2


def _ocr_identity() -> dict[str, Any]:
    from shredfold import ocr

    engine = getattr(ocr, "ENGINE", None)
    if engine is not None:
        return engine if isinstance(engine, dict) else {"engine": engine}
    try:
        version = metadata.version("rapidocr-onnxruntime")
    except metadata.PackageNotFoundError:
        version = "absent"
    return {"engine": "rapidocr-onnxruntime", "version": version, "params": ocr.ENGINE_PARAMS}


class JigsawOcr:
    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    def identity(self) -> dict[str, Any]:
        return {
            "adapter": "jigsaw-ocr",
            "version": VERSION,
            "ocr": _ocr_identity(),
            "images": self.config.images.model_dump(mode="json"),
        }

    def complete(self, request: Request) -> Response:
        from shredfold import ocr
        from shredfold.jigsaw.read import read
        from shredfold.jigsaw.solve import decode, solve

        if self.config.images.mode != "pieces":
            raise ModelCallError("jigsaw-ocr needs the scraps as separate images (images.mode: pieces)")
        kind = kind_of_template(request.template)
        images = [decode(png) for png in request.images]
        if not images:
            raise ModelCallError("jigsaw-ocr: the request holds no images")
        solution = solve(images)
        text = read(solution, kind, ocr.read_lines).text
        if kind == "code":
            text = "```\n" + text + "\n```"
        return Response(text=text, served_model="jigsaw-ocr")
