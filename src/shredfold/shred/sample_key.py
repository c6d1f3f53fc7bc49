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
from shredfold.shred.formats import ENCODING
from shredfold.shred.modes import MODES, mode_identity
from shredfold.spec import RenderSettings, SynthesisSettings
from shredfold.store import content_key
from shredfold.versions import version

SAMPLE_STAGE = "sample"
# 7: layout.json (where each character is drawn) stored with the sample
SAMPLE_VERSION = 7
# What the sample's random streams are seeded from (draw_key). Apart from SAMPLE_VERSION so
# that a change of what is stored beside the images (7: layout.json) keeps every image as
# it was: a redraw would change every request, and every model would be asked again. Bump
# both when the draws or the images change.
DRAW_VERSION = 6
# Rasterisers, geometry and the image encoders shape the bytes; a version change must change
# the key rather than silently give different files under an old one.
TOOLCHAIN = ("pillow", "numpy", "scipy", "shapely", "opencv-python", "markdown-it-py", "lxml")


# The paper style's typesetting also rests on these (Markdown to HTML, line breaking, shaping,
# rasterising).
PAPER_TOOLCHAIN = ("markdown", "icu4py", "uharfbuzz", "freetype-py", "pygments")


@functools.cache
def _toolchain(style: str = "shredfold") -> dict[str, str]:
    dists = TOOLCHAIN + (PAPER_TOOLCHAIN if style == "paper" else ())
    return {dist: version(dist) for dist in dists}


def render_params(render: RenderSettings) -> dict[str, Any]:
    """What of the render settings shapes a page: under the paper style its version only (the
    authors' stylesheet fixes everything else); under the default style every field but the
    style (so its keys are what they were before styles existed)."""
    if render.style == "paper":
        from shredfold.shred.paper import STYLE_VERSION

        return {"style": "paper", "version": STYLE_VERSION}
    return render.model_dump(mode="json", exclude={"style"})


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
        "render": render_params(render),
        "synthesis": synthesis,
        "synthesizer": mode_identity(synth),
        "fonts": font_hashes(font_roles(doc, render.style)),
        "encoding": ENCODING,
        "toolchain": dict(_toolchain(render.style)),
        "seed": seed,
    }


def sample_key(
    doc: Document, n: int, render: RenderSettings, synth: SynthesisSettings, seed: int
) -> str:
    return content_key(
        SAMPLE_STAGE, SAMPLE_VERSION, sample_params(doc, n, render, synth, seed), [doc.key]
    )


def draw_key(
    doc: Document, n: int, render: RenderSettings, synth: SynthesisSettings, seed: int
) -> str:
    """The key the sample's random streams are seeded from: the sample's content under
    :data:`DRAW_VERSION`."""
    return content_key(
        SAMPLE_STAGE, DRAW_VERSION, sample_params(doc, n, render, synth, seed), [doc.key]
    )
