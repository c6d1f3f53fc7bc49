"""``jigsaw-ocr``: classical jigsaw reassembly of the scraps, then OCR of the page.

A reference row: how far plain geometry gets with exactly what an API model sees (the
piece images of the request; never the cut polygons or the truth). See
:mod:`shredfold.jigsaw` for the method.
"""

from __future__ import annotations

from typing import Any

from shredfold.calls import ModelCallError, Request, Response
from shredfold.models.adapter import AdapterBase, adapter
from shredfold.models.builtin.ocr import engine_identity
from shredfold.prompts.shred import kind_of_template
from shredfold.spec import ModelConfig

VERSION = 2


@adapter("jigsaw-ocr", benchmarks=("shred",))
class JigsawOcr(AdapterBase):
    @classmethod
    def identity_of(cls, config: ModelConfig) -> dict[str, Any]:
        return {
            "adapter": "jigsaw-ocr",
            "version": VERSION,
            "ocr": engine_identity(),
            "images": config.images.model_dump(mode="json"),
        }

    def complete(self, request: Request) -> Response:
        from shredfold.jigsaw.read import read
        from shredfold.jigsaw.solve import decode, solve
        from shredfold.models.builtin.ocr import reader as ocr

        if self.config.images.mode != "pieces":
            raise ModelCallError("jigsaw-ocr needs the scraps as separate images (images.mode: pieces)")
        kind = kind_of_template(request.template) or "prose"  # the paper tells no kind
        images = [decode(png) for png in request.images]
        if not images:
            raise ModelCallError("jigsaw-ocr: the request holds no images")
        solution = solve(images)
        text = read(solution, kind, ocr.read_lines).text
        if kind == "code":
            text = "```\n" + text + "\n```"
        return Response(text=text, served_model="jigsaw-ocr")
