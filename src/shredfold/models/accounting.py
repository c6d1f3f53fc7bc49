"""Money and tokens: the price of one call, token estimates for rate limiting, and the worst
case a call may cost (what a budget reserves before the call is made)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from shredfold.models.image_tokens import image_tokens, sent_size
from shredfold.spec import ModelConfig


def cost_usd(config: ModelConfig, input_tokens: int, output_tokens: int) -> float:
    """Dollars for one call at the model's prices per million input/output tokens."""
    return (
        input_tokens * config.price_input_per_mtok + output_tokens * config.price_output_per_mtok
    ) / 1e6


def text_tokens(text: str) -> int:
    """Upper-end guess of a text's tokens: ~4 characters a token for ASCII, one per other
    character (CJK is close to one a character)."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def estimate_input_tokens(text: str, image_sides: list[tuple[int, int]]) -> int:
    """Upper-end guess of a request's input tokens, for tokens-per-minute budgeting only.

    Text by :func:`text_tokens`; images at one token per 28×28 patch, the common ViT patching
    of Qwen-VL and InternVL and within a factor of two of OpenAI's tile accounting.
    """
    return text_tokens(text) + sum(math.ceil(w / 28) * math.ceil(h / 28) for w, h in image_sides)


def input_tokens(config: ModelConfig, text: str, image_sides: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """(text tokens, image tokens) of a request to ``config``'s model: images at the size they
    are sent (``images.max_side``), counted by the model file's ``image_tokens`` rule."""
    images = sum(
        image_tokens(config.image_tokens, config.images.detail, *sent_size(w, h, config.images.max_side))
        for w, h in image_sides
    )
    return text_tokens(text), images


def worst_case_usd(config: ModelConfig, text: str, image_sides: Sequence[tuple[int, int]]) -> float:
    """The most one call is expected to cost: its estimated input and ``max_tokens`` output
    (which also bounds a reasoning model's hidden tokens)."""
    return cost_usd(config, sum(input_tokens(config, text, image_sides)), config.decoding.max_tokens)
