"""Image-token rules against the worked examples in the providers' own documentation."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from shredfold.models.image_tokens import APPROXIMATION, describe, image_tokens, png_size, sent_size
from shredfold.spec import (
    GeminiTiles,
    ModelConfig,
    OpenAIPatches,
    OpenAITiles,
    PerPixel,
    QwenPatches,
)

TILES = OpenAITiles(rule="openai-tiles")  # GPT-4o / 4.1: 85 + 170 per tile
GPT5_TILES = OpenAITiles(rule="openai-tiles", base_tokens=70, tile_tokens=140)


@pytest.mark.parametrize(
    ("size", "detail", "tokens"),
    [
        ((1024, 1024), "high", 765),  # scaled to 768², 4 tiles: 170·4 + 85
        ((2048, 4096), "high", 1105),  # 1024×2048, then 768×1536: 6 tiles
        ((4096, 8192), "low", 85),  # low detail: the base, whatever the size
        ((512, 512), "high", 255),  # one tile, not scaled up
        ((1024, 1024), "auto", 765),  # auto may mean high: the upper bound
    ],
)
def test_openai_tiles_follow_the_images_guide(size, detail, tokens) -> None:
    assert image_tokens(TILES, detail, *size) == tokens


def test_gpt5_tiles_use_its_own_base_and_tile_tokens() -> None:
    assert image_tokens(GPT5_TILES, "high", 1024, 1024) == 70 + 4 * 140


@pytest.mark.parametrize(
    ("size", "multiplier", "tokens"),
    [
        ((1024, 1024), 1.0, 1024),  # 32 × 32 patches, under the cap
        ((1800, 2400), 1.0, 1452),  # 4275 patches: shrunk to 1056 × 1408, 33 × 44
        ((1024, 1024), 1.62, 1659),  # GPT-5-mini: 1024 × 1.62 = 1658.88, rounded up
    ],
)
def test_openai_patches_follow_the_images_guide(size, multiplier, tokens) -> None:
    rule = OpenAIPatches(rule="openai-patches", multiplier=multiplier)
    assert image_tokens(rule, "high", *size) == tokens


def test_qwen_patches_follow_the_smart_resize_rule() -> None:
    # SiliconFlow's worked examples (pixels in [56², 3584²], no marker tokens).
    wide = QwenPatches(rule="qwen-patches", min_pixels=3136, max_pixels=12845056, extra_tokens=0)
    assert image_tokens(wide, "high", 224, 448) == 8 * 16
    assert image_tokens(wide, "high", 1024, 1024) == 37 * 37  # rounded to 1036²
    assert image_tokens(wide, "high", 3172, 4096) == 112 * 145  # over the cap: 3136 × 4060
    # Model Studio's default cap (1280 blocks) and its two vision markers: 1036² is over the
    # cap, so beta = √(1024² / 1003520) and each side becomes floor(1024 / beta / 28) = 35 blocks.
    assert image_tokens(QwenPatches(rule="qwen-patches"), "high", 1024, 1024) == 35 * 35 + 2
    # Too small: scaled up to the 4-block minimum.
    assert image_tokens(QwenPatches(rule="qwen-patches"), "high", 20, 20) == 4 + 2


def test_gemini_counts_small_images_once_and_large_ones_by_tile() -> None:
    rule = GeminiTiles(rule="gemini")
    assert image_tokens(rule, "high", 384, 384) == 258
    assert image_tokens(rule, "high", 600, 400) == 258  # one 768-px tile
    assert image_tokens(rule, "high", 1600, 1000) == 3 * 2 * 258
    fixed = GeminiTiles(rule="gemini", tokens=1120, tile=None)  # Gemini 3, media_resolution high
    assert image_tokens(fixed, "high", 4000, 3000) == image_tokens(fixed, "high", 64, 64) == 1120


def test_per_pixel_and_the_stated_approximation() -> None:
    assert image_tokens(PerPixel(rule="per-pixel", pixels_per_token=750), "high", 1000, 1000) == 1334
    assert image_tokens(None, "high", 1000, 700) == 36 * 25  # 28-px blocks, rounded up per side
    assert describe(None, "high") == APPROXIMATION
    assert describe(TILES, "low").startswith("openai-tiles (base_tokens=85") and "detail=low" in describe(TILES, "low")


def test_images_are_priced_at_the_size_they_are_sent() -> None:
    assert sent_size(3200, 1600, 1600) == (1600, 800)
    assert sent_size(1000, 700, 1600) == (1000, 700)


def test_png_size_reads_the_header_and_refuses_what_is_not_a_png() -> None:
    buf = io.BytesIO()
    Image.new("RGB", (321, 123)).save(buf, format="PNG")
    assert png_size(buf.getvalue()) == (321, 123)
    assert png_size(buf.getvalue()[:24]) == (321, 123)  # the header is enough
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(b"\x89PNG piece")


def test_a_model_file_names_its_rule_and_a_wrong_one_is_refused() -> None:
    cfg = ModelConfig.model_validate({"id": "m", "image_tokens": {"rule": "qwen-patches", "factor": 32}})
    assert isinstance(cfg.image_tokens, QwenPatches) and cfg.image_tokens.factor == 32
    with pytest.raises(ValueError, match="rule"):
        ModelConfig.model_validate({"id": "m", "image_tokens": {"rule": "anthropic"}})
    with pytest.raises(ValueError, match="min_pixels"):
        ModelConfig.model_validate({"id": "m", "image_tokens": {"rule": "qwen-patches", "min_pixels": 10**7}})
