"""``ocr-islands``: OCR each image in the order presented and concatenate.

This is the "fragments as isolated islands" failure mode: every scrap is read on its own,
with no attempt to put the page back together. Each scrap is first turned so its text lines
are horizontal and the right way up (see ``orient.upright``), which is what any sensible OCR
pipeline does with a photographed scrap. A photograph of all scraps on a table is first
cut into its scraps (``jigsaw.segment``), read in the photo's reading order.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from shredfold.calls import Request, Response
from shredfold.models.adapter import AdapterBase, adapter
from shredfold.shred.ocr import engine_identity
from shredfold.shred.prompts import kind_of_template
from shredfold.spec import ModelConfig

# Bump when an answer changes. 13: Markdown rows grouped by the OCR reader's rule (ocr.rows).
# 14: lone strokes (seams read as "1", "|") out of code; photographed scraps levelled by
# their printed rules where the text is far out (the read scale follows the pitch).
# 15: chains of seam strokes ("11", "1.") out of code too. 16: a table's grid units off the
# scrap stay cells of their own (table.UNIT_PAPER). 17: a table whose grid collapses into one
# cell is read by its text rows (table.COLLAPSED_SHARE); a sliver the bound taken from touching
# scraps left out is a scrap (segment._held_back). 18: a part of a page that is not program
# text is never fenced (markdown.pages_markdown). 19: a table read in parts leads with its
# largest ruled part (markdown.pages_markdown).
VERSION = 19


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
        import numpy as np
        from PIL import Image

        from shredfold.models.builtin.request_images import request_scraps
        from shredfold.shred.ocr import reader as ocr
        from shredfold.shred.ocr.orient import quarter_turn, upright
        from shredfold.shred.solvers.jigsaw.markdown import looks_like_code, pages_markdown
        from shredfold.shred.solvers.jigsaw.photo import STRAIGHT_SHARE, read_scale, straight_share
        from shredfold.shred.solvers.jigsaw.read import read_words
        from shredfold.shred.solvers.jigsaw.scale import enlarge
        from shredfold.shred.solvers.jigsaw.segment import enlarged

        # The paper's protocol tells no kind: each scrap is written as the Markdown it shows.
        kind = kind_of_template(request.template)
        # Bounded in pixels and memory.
        scraps, source = request_scraps(request.images, "ocr-islands")
        if scraps and all(s is not None for s in source) and straight_share(scraps) >= STRAIGHT_SHARE:
            # A photograph of straight-cut scraps, read as jigsaw-ocr reads its page: drawn
            # larger, the grey read (ocr.read_lines).
            factor = read_scale(scraps)
            scraps = [enlarge(c, factor) for c in scraps]
            binarize = False
        else:
            scraps = enlarged(scraps, source)
            binarize = True
        parts, read = [], []
        for rgba in scraps:
            scrap = upright(Image.fromarray(rgba, "RGBA"), turn=quarter_turn)
            if kind is None:
                rgb = np.asarray(scrap.convert("RGB"))
                read.append((rgb, read_words(rgb, partial(ocr.read_lines, binarize=binarize))))
                continue
            text = ocr.read_text(scrap, kind="code" if kind == "code" else "prose",
                                 binarize=binarize)
            if text.strip():
                parts.append(text)
        if kind is None:
            if not binarize and looks_like_code([w for _, words in read for w in words]):
                # Monospace code reads best binarized (as jigsaw-ocr reads it).
                read = [(rgb, read_words(rgb, ocr.read_lines)) for rgb, _ in read]
            return Response(text=pages_markdown(read), served_model="ocr-islands")
        return Response(text="\n".join(parts), served_model="ocr-islands")
