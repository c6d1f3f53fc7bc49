"""Money and tokens: the price of one call, and a rough token estimate for rate limiting."""

from __future__ import annotations

import math

from shredfold.spec import ModelConfig


def cost_usd(config: ModelConfig, input_tokens: int, output_tokens: int) -> float:
    """Dollars for one call at the model's prices per million input/output tokens."""
    return (
        input_tokens * config.price_input_per_mtok + output_tokens * config.price_output_per_mtok
    ) / 1e6


def estimate_input_tokens(text: str, image_sides: list[tuple[int, int]]) -> int:
    """Upper-end guess of a request's input tokens, for tokens-per-minute budgeting only.

    Text at ~4 characters a token (CJK is closer to 1, hence the floor of one token per
    non-ASCII character); images at one token per 28×28 patch, the common ViT patching of
    Qwen-VL and InternVL and within a factor of two of OpenAI's tile accounting.
    """
    ascii_chars = sum(1 for c in text if ord(c) < 128)
    text_tokens = math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)
    image_tokens = sum(math.ceil(w / 28) * math.ceil(h / 28) for w, h in image_sides)
    return text_tokens + image_tokens
