"""``jigsaw-ocr``: classical jigsaw reassembly of the scraps, then OCR of the page.

A reference row: how far plain geometry gets with exactly what an API model sees (the
images of the request — one per scrap, or one photograph of them all on a table, whose
scraps are segmented out first; never the cut polygons or the truth). See
:mod:`shredfold.shred.solvers.jigsaw` for the method.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from shredfold.calls import ModelCallError, Request, Response
from shredfold.models.adapter import AdapterBase, adapter
from shredfold.shred.ocr import engine_identity
from shredfold.shred.prompts import kind_of_template
from shredfold.spec import ModelConfig

# Bump when an answer changes. 17: words grouped into rows by the OCR reader's rule (ocr.rows).
# 18: photographs of straight-cut scraps: levelled by printed rules too, each
# scrap's way up read and kept, the page's box bounded, clusters ordered by page edges;
# lone strokes out of code; table rules drawn in parts, bold headers. 19: a seam's slide
# that leaves much of the shorter edge unshared is discounted (seam.UNSHARED_*). 20: page
# edges have a bare margin; chains of seam strokes ("11", "1.") out of code. 21: a nearly
# blank scrap slides no seam by its text (seam.blank). 22: a seam through bare paper slides
# by the ink a few lines deeper (seam.DEEP_*); a table's grid units off the drawn scraps stay
# cells of their own (table.UNIT_PAPER). 23: a seam fitted by its corners alone lies within
# 1.2 degrees of straight (seam.BARE_TURN_DEG). 24: a seam 15-20 degrees off the lines is
# sampled along them (seam.ALONG_LINES_DEG). 25: a scrap the inkiest patch leaves open is
# read whole (level.read_whole). 26: a merge may lay 0.12 of a scrap on another
# (place.OVERLAP_SHARE). 27: each merge made is tried struck off, and the placement with
# the most support in all kept (place.REPAIR_ROUNDS). 28: a table whose grid collapses into
# one cell is read by its text rows (table.COLLAPSED_SHARE); a sliver the bound taken from
# touching scraps left out is a scrap (segment._held_back). 29: a part of a page that is not
# program text is never fenced (markdown.pages_markdown). 30: a table read in parts leads
# with its largest ruled part (markdown.pages_markdown). 31: a seam is slid by where a
# table's column rules cross it (crossings.rule_support, seam.RULE_WEIGHT).
VERSION = 31


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
        from shredfold.models.builtin.request_images import request_scraps
        from shredfold.shred.ocr import reader as ocr
        from shredfold.shred.ocr.orient import level_confidence, quarter_turn, whole_confidence
        from shredfold.shred.solvers.jigsaw.photo import STRAIGHT_SHARE, solve_photo, straight_share
        from shredfold.shred.solvers.jigsaw.read import read
        from shredfold.shred.solvers.jigsaw.segment import enlarged
        from shredfold.shred.solvers.jigsaw.solve import solve

        # The paper's protocol tells no kind: the page is written as the Markdown it shows.
        kind = kind_of_template(request.template)
        if not request.images:
            raise ModelCallError("jigsaw-ocr: the request holds no images")
        # Bounded in pixels and memory.
        images, source = request_scraps(request.images, "jigsaw-ocr")
        if not images:
            raise ModelCallError("jigsaw-ocr: no scraps found in the request's images")
        reader, code_reader = ocr.read_lines, None
        if all(s is not None for s in source) and straight_share(images) >= STRAIGHT_SHARE:
            solution = solve_photo(images, level_confidence, whole_confidence)
            # Serif prose of a photograph reads best in grey (see read_lines); monospace
            # code binarized: in grey, its lone "}" reads as "了", "0" as "θ", ")" as "）".
            reader, code_reader = partial(ocr.read_lines, binarize=False), ocr.read_lines
        else:
            solution = solve(enlarged(images, source))
        text = read(solution, kind, reader, quarter_turn, code_reader).text
        if kind == "code":
            text = "```\n" + text + "\n```"
        return Response(text=text, served_model="jigsaw-ocr")
