"""The report README command 1 builds (here: the small run's, made by Snakemake)."""

from __future__ import annotations

import re

import pytest

from shredfold.report.build import SECTIONS
from tests.e2e.small_run import MODELS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def html(small_run) -> str:
    return (small_run.results / "report.html").read_text(encoding="utf-8")


def section(html: str, name: str) -> str:
    m = re.search(rf'<section id="{name}">(.*?)</section>', html, re.S)
    assert m, f"no section {name}"
    return m.group(1)


def test_every_section_is_there_and_every_model_is_on_the_leaderboard(html) -> None:
    for name in SECTIONS:
        section(html, name)
    board = section(html, "leaderboard")
    for model in MODELS:
        assert f'data-model="{model}"' in board
    assert re.search(r"<td>0\.\d{3} \[0\.\d{3}, 0\.\d{3}\]</td>", board)  # a mean with its interval


def test_it_is_self_contained(html) -> None:
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert not re.search(r'(src|href)="(?!data:|#)', html)
    assert all(uri.startswith("data:image/webp;base64,") for uri in re.findall(r'src="([^"]+)"', html))
    assert "default-src 'none'" in html  # and the browser is told so
    assert len(html.encode()) < 1_500_000


def test_the_papers_numbers_are_drawn_and_labelled_as_reported(html) -> None:
    decay = section(html, "decay")
    assert "Gemini 3 Pro (reported)" in decay and "ocr-islands (measured)" in decay
    assert "reported, not measured" in decay and "<td>0.41</td>" in decay
    origami = section(html, "origami")
    assert "Qwen3-VL-32B (reported)" in origami and "96.18%" in origami and "43.37%" in origami


def test_the_viewers_show_scraps_truth_answers_and_turns(html, small_run) -> None:
    samples = section(html, "samples")
    assert samples.count('class="sample"') == 3  # one per domain at the largest N
    assert samples.count('alt="scrap ') == 3 * 3
    assert 'data-model="oracle"' in samples and 'data-model="ocr-islands"' in samples
    episodes = section(html, "episodes")
    assert episodes.count('class="episode"') == 2  # one per origami agent
    assert "crease pattern before turn 1" in episodes and ("valid" in episodes or "rejected" in episodes)


def test_the_oracles_answer_has_nothing_marked(html) -> None:
    samples = section(html, "samples")
    blocks = re.findall(r'<details[^>]*data-model="oracle">(.*?)</details>', samples, re.S)
    assert len(blocks) == 3  # one per sample shown: a loop over nothing would prove nothing
    for block in blocks:
        assert 'class="om"' not in block and 'class="ins"' not in block
    # and the marks exist where an answer misses: the OCR model's answers carry some
    ocr = re.findall(r'<details[^>]*data-model="ocr-islands">(.*?)</details>', samples, re.S)
    assert len(ocr) == 3 and any('class="om"' in b or 'class="ins"' in b for b in ocr)


def test_diagnostics_and_heatmaps_cover_the_shred_models(html) -> None:
    diag = section(html, "diagnostics")
    assert "omission" in diag and "<svg" in diag
    heat = section(html, "heatmaps")
    assert sorted(re.findall(r'<div class="heatmap" data-model="([^"]+)">', heat)) == ["ocr-islands", "oracle"]
    assert all(f"{m}: NED by domain and N" in heat for m in ("oracle", "ocr-islands"))
