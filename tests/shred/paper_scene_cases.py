"""Samples of the paper scene (``synthesis.blender.preset: paper``) for tests, built once
per process: a real page cut and rendered in the authors' scene, with the true footprint of
every scrap in the composite (:attr:`~shredfold.shred.synth.TableTop.footprint`, presented
order, -1 for the backdrop) for tests that segment the photograph.

    from tests.shred.paper_scene_cases import paper_sample
    built = paper_sample()                    # news_en, N = 3
    photo, truth = built.table.image, built.table.footprint
"""

from __future__ import annotations

import functools

from shredfold.corpus.document import Document
from shredfold.shred.sample import Built, build_sample
from shredfold.spec import BlenderSettings, RenderSettings, SynthesisSettings
from tests.shred.conftest import CODE_PY, NEWS_EN, NEWS_ZH, TABLE

DOCS = {"news_en": NEWS_EN, "news_zh": NEWS_ZH, "code_python": CODE_PY, "table": TABLE}
# A narrow page keeps the tests quick; the frame is 4096² whatever the page.
RENDER = RenderSettings(width=800, margin=48, prose_font_size=16, code_font_size=13, table_font_size=14)
SAMPLES = 2  # the lighting pass's samples (the preset's 16 cost ~15 s more per frame)


def paper_synth(samples: int = SAMPLES) -> SynthesisSettings:
    return SynthesisSettings(mode="blender", jagged=0.0, blender=BlenderSettings(preset="paper", samples=samples))


@functools.cache
def paper_sample(domain: str = "news_en", n: int = 3, seed: int = 0) -> Built:
    """One paper-scene sample of a small inline document (cached: ~15 s of CPU each)."""
    doc = Document(doc_id=f"t/{domain}", domain=domain, text=DOCS[domain])  # type: ignore[arg-type]
    return build_sample(doc, n, RENDER, paper_synth(), seed)
