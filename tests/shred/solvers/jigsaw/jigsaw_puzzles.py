"""Small flat puzzles with their answer key, built by the benchmark's sample builder."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from shredfold.corpus.document import Document
from shredfold.shred.sample import build_sample
from shredfold.spec import RenderSettings, SynthesisSettings

NEWS = """# Harbour ferry returns after repairs

The harbour ferry returned to service on Monday after six weeks of repairs to its hull,
the city transport office said. Morning crossings will run every twenty minutes until the
summer timetable begins.

Commuters who switched to the bridge bus during the repairs said the ferry was faster and
calmer. The office plans a second boat for the evening rush next year if the budget allows.
"""

SMALL = RenderSettings(width=640, margin=40, prose_font_size=20)


@dataclass(frozen=True)
class Puzzle:
    pieces: list[Image.Image]  # RGBA scraps as a model receives them
    truth: list[np.ndarray]  # answer key: scrap pixel -> page, per presented piece
    text: str


def make_puzzle(n: int, seed: int = 0, drop: int | None = None) -> Puzzle:
    """A small flat ShredBench puzzle built by the benchmark's own sample builder."""
    from shredfold.shred.solvers.jigsaw.scoring import truth_poses

    doc = Document(doc_id="ferry", domain="news_en", text=NEWS)
    built = build_sample(doc, n, SMALL, SynthesisSettings(), seed)
    hidden = {"presented": [
        {"matrix": [list(r) for r in built.pieces[i].matrix],
         "scrap_origin": list(built.scraps[i].origin)}
        for i in built.order
    ]}
    pieces = [Image.fromarray(built.scraps[i].image, "RGBA") for i in built.order]
    truth = truth_poses(hidden)
    if drop is not None:
        del pieces[drop], truth[drop]
    return Puzzle(pieces, truth, built.page.truth)
