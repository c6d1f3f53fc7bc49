"""How many input tokens an image costs: each provider's documented rule (values in, values out).

The rules (parameters in :class:`~shredfold.spec.ModelConfig`'s ``image_tokens``):

- ``openai-tiles`` — OpenAI's images guide, tile-based models: ``detail: low`` costs the base
  tokens; otherwise the image is scaled to fit a 2048² square, then (if larger) its shortest
  side down to 768 px, and every 512-px tile costs the tile tokens, plus the base
  (85 + 170 per tile for GPT-4o/4.1; 70 + 140 for GPT-5). ``auto`` is counted as ``high``:
  the model may choose it, so it is the upper bound.
- ``openai-patches`` — OpenAI's images guide, patch-based models: 32-px patches covering the
  image; over 1536 patches the image is shrunk (``r = √(32²·1536 / (w·h))``, then so that a
  side fits a whole number of patches), and the count is multiplied by the model's factor
  (1.62 for GPT-5-mini, 2.46 for GPT-5-nano), rounded up.
- ``qwen-patches`` — Alibaba Model Studio's documented ``smart_resize`` for Qwen-VL: each side
  rounded to a multiple of 28, the area brought within [4·28², 1280·28²] (16384·28² with
  ``vl_high_resolution_images``), one token per 28² block, plus 2 for the vision markers.
- ``gemini`` — Gemini API token docs: both sides ≤ 384 px → 258 tokens, else 258 per 768-px
  tile (Google says "cropped and scaled as needed"; tiles are counted by rounding up, an
  upper bound); Gemini 3's ``media_resolution`` is a fixed count per image.
- ``per-pixel`` — one token per N pixels, for servers that document only that.

Without a rule: one token per 28×28 block, rounded up per side (the common ViT patching of
Qwen-VL and InternVL, within a factor of two of OpenAI's tiles): :data:`APPROXIMATION`.
"""

from __future__ import annotations

import math
import struct

from shredfold.spec import (
    GeminiTiles,
    ImageTokenRule,
    OpenAIPatches,
    OpenAITiles,
    PerPixel,
    QwenPatches,
)

APPROXIMATION = "approximation: 1 token per 28×28 px (no provider rule in the model file)"
_EPS = 1e-9  # float slack before rounding up a quotient that is a whole number in exact arithmetic


def sent_size(width: int, height: int, max_side: int) -> tuple[int, int]:
    """The size an image is sent at: unchanged when it fits in ``max_side``, else scaled down
    (the OpenAI-compatible adapter resizes exactly so)."""
    if max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's header; ValueError when the bytes are not a PNG."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG image (no IHDR header)")
    width, height = struct.unpack(">II", data[16:24])
    if width == 0 or height == 0:
        raise ValueError("PNG header gives a zero size")
    return width, height


def _ceil(x: float) -> int:
    return math.ceil(x - _EPS)


def openai_tiles(rule: OpenAITiles, detail: str, width: int, height: int) -> int:
    if detail == "low":
        return rule.base_tokens
    w, h = float(width), float(height)
    if max(w, h) > rule.max_side:
        s = rule.max_side / max(w, h)
        w, h = w * s, h * s
    if min(w, h) > rule.short_side:
        s = rule.short_side / min(w, h)
        w, h = w * s, h * s
    return rule.base_tokens + rule.tile_tokens * _ceil(w / rule.tile) * _ceil(h / rule.tile)


def openai_patches(rule: OpenAIPatches, width: int, height: int) -> int:
    p = rule.patch
    patches = _ceil(width / p) * _ceil(height / p)
    if patches > rule.max_patches:
        r = math.sqrt(p * p * rule.max_patches / (width * height))
        r *= min(math.floor(width * r / p) / (width * r / p), math.floor(height * r / p) / (height * r / p))
        patches = min(rule.max_patches, _ceil(width * r / p) * _ceil(height * r / p))
    return _ceil(patches * rule.multiplier)


def qwen_patches(rule: QwenPatches, width: int, height: int) -> int:
    f = rule.factor
    h_bar = max(f, round(height / f) * f)
    w_bar = max(f, round(width / f) * f)
    if h_bar * w_bar > rule.max_pixels:
        beta = math.sqrt(height * width / rule.max_pixels)
        h_bar = max(f, math.floor(height / beta / f) * f)
        w_bar = max(f, math.floor(width / beta / f) * f)
    elif h_bar * w_bar < rule.min_pixels:
        beta = math.sqrt(rule.min_pixels / (height * width))
        h_bar = _ceil(height * beta / f) * f
        w_bar = _ceil(width * beta / f) * f
    return h_bar * w_bar // (f * f) + rule.extra_tokens


def gemini(rule: GeminiTiles, width: int, height: int) -> int:
    if rule.tile is None or (width <= rule.small_side and height <= rule.small_side):
        return rule.tokens
    return rule.tokens * _ceil(width / rule.tile) * _ceil(height / rule.tile)


def per_pixel(rule: PerPixel, width: int, height: int) -> int:
    return _ceil(width * height / rule.pixels_per_token) + rule.extra_tokens


def approximate(width: int, height: int) -> int:
    return _ceil(width / 28) * _ceil(height / 28)


def image_tokens(rule: ImageTokenRule | None, detail: str, width: int, height: int) -> int:
    """Input tokens of one image of ``width`` × ``height`` pixels (as sent)."""
    if rule is None:
        return approximate(width, height)
    if isinstance(rule, OpenAITiles):
        return openai_tiles(rule, detail, width, height)
    if isinstance(rule, OpenAIPatches):
        return openai_patches(rule, width, height)
    if isinstance(rule, QwenPatches):
        return qwen_patches(rule, width, height)
    if isinstance(rule, GeminiTiles):
        return gemini(rule, width, height)
    return per_pixel(rule, width, height)


def describe(rule: ImageTokenRule | None, detail: str) -> str:
    """One line naming the rule and its parameters, for reports."""
    if rule is None:
        return APPROXIMATION
    params = ", ".join(f"{k}={v}" for k, v in rule.model_dump().items() if k != "rule")
    extra = f", detail={detail}" if isinstance(rule, OpenAITiles) else ""
    return f"{rule.rule} ({params}{extra})"
