"""``jigsaw-ocr``: classical jigsaw reassembly of the scraps, then OCR of the page.

A reference row: how far plain geometry gets with exactly what an API model sees (the
images of the request — one per scrap, or one photograph of them all on a table, whose
scraps are segmented out first; never the cut polygons or the truth). See
:mod:`shredfold.jigsaw` for the method.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from shredfold.models.base import ModelCallError, Request, Response
from shredfold.prompts.shred import kind_of_template
from shredfold.spec import ModelConfig

VERSION = 3  # 3: photographs of scraps on a table are segmented


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
        from shredfold.jigsaw.segment import scrap_images
        from shredfold.jigsaw.solve import solve

        kind = kind_of_template(request.template)
        if not request.images:
            raise ModelCallError("jigsaw-ocr: the request holds no images")
        try:
            images = scrap_images(request.images)
        except ValueError as exc:
            raise ModelCallError(f"jigsaw-ocr: {exc}") from exc
        if not images:
            raise ModelCallError("jigsaw-ocr: no scraps found in the request's images")
        solution = solve(images)
        text = read(solution, kind, ocr.read_lines).text
        if kind == "code":
            text = "```\n" + text + "\n```"
        return Response(text=text, served_model="jigsaw-ocr")
