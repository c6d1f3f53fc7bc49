"""``ocr-islands``: OCR each image in the order presented and concatenate.

This is the "fragments as isolated islands" failure mode: every scrap is read on its own,
with no attempt to put the page back together. Each scrap is first turned so its text lines
are horizontal and the right way up (see ``orient.upright``), which is what any sensible OCR
pipeline does with a photographed scrap. A photograph of all scraps on a table is first
cut into its scraps (``jigsaw.segment``), read in the photo's reading order.
"""

from __future__ import annotations

from typing import Any

from shredfold.calls import Request, Response
from shredfold.models.adapter import AdapterBase, adapter
from shredfold.models.builtin.ocr import engine_identity
from shredfold.prompts.shred import kind_of_template
from shredfold.spec import ModelConfig

# 8: a scrap put level is cut to its paper before it is read (orient.upright);
# 7: the OCR engine's models run by OpenVINO (and the engine's identity given in full);
# 6: the quarter turn settled on the first patch when that is clear; 5: a near tie of the
# full readings settled on the whole scrap; 4: quarter turn from a few short crops
# (orient.quarter_turn); 3: photographs segmented
VERSION = 8


@adapter("ocr-islands", benchmarks=("shred",))
class OcrIslands(AdapterBase):
    @classmethod
    def identity_of(cls, config: ModelConfig) -> dict[str, Any]:
        return {
            "adapter": "ocr-islands",
            "version": VERSION,
            "ocr": engine_identity(),
            "images": config.images.model_dump(mode="json"),
        }

    def complete(self, request: Request) -> Response:
        from PIL import Image

        from shredfold.models.builtin.ocr import reader as ocr
        from shredfold.models.builtin.ocr.orient import quarter_turn, upright
        from shredfold.models.builtin.request_images import request_scraps

        kind = kind_of_template(request.template)
        scraps = request_scraps(request.images, "ocr-islands")  # bounded in pixels and memory
        parts = []
        for rgba in scraps:
            scrap = upright(Image.fromarray(rgba, "RGBA"), turn=quarter_turn)
            text = ocr.read_text(scrap, kind="code" if kind == "code" else "prose")
            if text.strip():
                parts.append(text)
        return Response(text="\n".join(parts), served_model="ocr-islands")
