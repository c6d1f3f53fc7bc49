"""What shapes a ShredBench sample, and so its content key.

Light on purpose: planning computes a key for every sample of the grid, so nothing here
imports an imaging or geometry library (the synthesizers' constants come from
:mod:`.modes`, fonts are hashed as files).
"""

from __future__ import annotations

import functools
from typing import Any

from shredfold.corpus.document import Document
from shredfold.shred.fonts import font_hashes, font_roles
from shredfold.shred.modes import MODES, mode_identity
from shredfold.spec import RenderSettings, SynthesisSettings
from shredfold.store import content_key
from shredfold.versions import version

SAMPLE_STAGE = "sample"
SAMPLE_VERSION = 4  # 4: table columns fit their widest cell; 3: no bare scraps (text_cut); 2: the document as written (source.txt)
# zlib level 1: on these noisy images 3x faster to write than the default (6) for ~18% more
# bytes; levels 2-3 save at most 7% for up to 25% more time. Fixed options and no ancillary
# chunks (no time stamp), so equal keys give equal bytes.
PNG_OPTIONS: dict[str, Any] = {"compress_level": 1, "optimize": False}
# Rasterisers, geometry and the PNG encoder shape the bytes; a version change must change
# the key rather than silently give different files under an old one.
TOOLCHAIN = ("pillow", "numpy", "scipy", "shapely", "opencv-python", "markdown-it-py", "lxml")


@functools.cache
def _toolchain() -> dict[str, str]:
    return {dist: version(dist) for dist in TOOLCHAIN}


def sample_params(
    doc: Document, n: int, render: RenderSettings, synth: SynthesisSettings, seed: int
) -> dict[str, Any]:
    synthesis = synth.model_dump(mode="json")
    for mode in MODES:  # another mode's settings do not shape this sample
        if mode != synth.mode:
            synthesis.pop(mode, None)
    return {
        "doc_id": doc.doc_id,  # written to hidden.json, so part of the output
        "n": n,
        "render": render.model_dump(mode="json"),
        "synthesis": synthesis,
        "synthesizer": mode_identity(synth),
        "fonts": font_hashes(font_roles(doc)),
        "png": PNG_OPTIONS,
        "toolchain": dict(_toolchain()),
        "seed": seed,
    }


def sample_key(
    doc: Document, n: int, render: RenderSettings, synth: SynthesisSettings, seed: int
) -> str:
    return content_key(
        SAMPLE_STAGE, SAMPLE_VERSION, sample_params(doc, n, render, synth, seed), [doc.key]
    )
