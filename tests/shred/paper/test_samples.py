"""The paper style in the pipeline: the paper spec plans with it, its keys are its own, and a
small sample of each domain builds with every scrap holding text."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from shredfold.corpus.document import Document
from shredfold.corpus.loaders import load_builtin
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.shred.glyphs import page_glyphs
from shredfold.shred.paper.page import paper_truth
from shredfold.shred.sample import build_sample, sample_key
from shredfold.shred.sample_key import sample_params
from shredfold.shred.text_cut import bare_pieces
from shredfold.spec import RenderSettings, SynthesisSettings

PAPER = RenderSettings(style="paper")
FLAT = SynthesisSettings(mode="flat")


def _plan(tmp_path, shred: dict, style: str):
    spec = {"name": f"paper-{style}", "shred": {**shred, "render": {**shred["render"], "style": style}}, "models": ["oracle"]}
    path = tmp_path / f"{style}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return make_plan(load_spec(path))


def test_the_paper_spec_renders_the_authors_page_and_its_keys_are_its_own(repo_root, tmp_path) -> None:
    resolved = load_spec(repo_root / "specs" / "paper.yaml")
    assert resolved.spec.shred is not None
    assert {resolved.spec.shred.render_for(d).style for d in resolved.spec.shred.domains} == {"paper"}
    # its ShredBench grid (one document per domain), planned in each style
    shred = yaml.safe_load((repo_root / "specs" / "paper.yaml").read_text())["shred"]
    shred["documents_per_domain"] = 1
    paper, default = _plan(tmp_path, shred, "paper"), _plan(tmp_path, shred, "shredfold")
    items = [i for s in paper.item_sets.values() for i in s.items]
    assert len(items) == 6 * 4 and {i.render.style for i in items} == {"paper"}
    assert {i.render.style for s in default.item_sets.values() for i in s.items} == {"shredfold"}
    # every sample (so every set) is another in the other style
    assert len(paper.item_sets) == len(default.item_sets) == 24
    assert not set(paper.item_sets) & set(default.item_sets)


def test_keys_follow_the_style_and_the_default_styles_keys_are_as_before() -> None:
    doc = load_builtin("news_en")[0]
    default = sample_params(doc, 8, RenderSettings(), FLAT, 0)
    assert "style" not in default["render"]  # keys made before styles existed stay valid
    assert "uharfbuzz" not in default["toolchain"] and "serif" not in default["fonts"]
    paper = sample_params(doc, 8, PAPER, FLAT, 0)
    assert paper["render"]["style"] == "paper"
    assert {"markdown", "icu4py", "uharfbuzz"} <= set(paper["toolchain"])
    assert {"serif", "serif_bold", "mono", "cjk_fallback"} <= set(paper["fonts"])
    assert sample_key(doc, 8, PAPER, FLAT, 0) != sample_key(doc, 8, RenderSettings(), FLAT, 0)
    # what the stylesheet fixes does not enter a paper key
    assert sample_key(doc, 8, PAPER, FLAT, 0) == sample_key(doc, 8, PAPER.model_copy(update={"margin": 10}), FLAT, 0)


@pytest.mark.parametrize("domain", ["news_en", "news_zh", "code_python", "code_java", "code_cpp", "table"])
def test_a_small_sample_of_each_domain_builds_with_no_bare_scrap(domain: str) -> None:
    doc: Document = load_builtin(domain)[0]
    built = build_sample(doc, 4, PAPER, FLAT, seed=0)
    width, height = built.page.image.size
    assert width == 1600
    pixels = np.asarray(built.page.image)
    assert tuple(pixels[2, 2]) == (0xFD, 0xFB, 0xF7)  # the authors' flat paper
    assert built.page.truth == paper_truth(doc)
    glyphs = page_glyphs(doc, PAPER)
    assert (glyphs.width, glyphs.height) == (width, height)
    assert bare_pieces(built.polygons, glyphs.boxes) == 0
    if domain.startswith("code"):
        # the fenced code is drawn as written: its lines are the truth's lines
        assert built.page.truth.split("\n")[:3] == doc.text.split("\n")[:3]
