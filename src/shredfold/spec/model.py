"""A model's configuration (in a spec or its own file): endpoint, decoding, how its images
are sent and counted (the image-token rules).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from shredfold.spec.base import Strict


class Decoding(Strict):
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = Field(
        default=0.0, description="None: not sent (reasoning models accept only their default)."
    )
    max_tokens: Annotated[int, Field(ge=1)] = 4096
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = Field(
        default="max_tokens",
        description="Request field that carries max_tokens (OpenAI's GPT-5 wants the second).",
    )
    top_p: Annotated[float, Field(gt=0.0, le=1.0)] | None = None
    seed: int | None = Field(default=None, description="Sent only where set (not all APIs take it).")


class ImageHandling(Strict):
    mode: Literal["pieces", "composite"] = "pieces"
    detail: Literal["auto", "low", "high"] = "auto"
    max_side: Annotated[int, Field(ge=64, le=8192)] = 1600


# ---------------------------------------------------------------- image tokens
# How a provider counts an image's input tokens (for cost estimates and budget reservations
# only: none of this is sent, and none of it enters a model's identity). Each rule follows
# the provider's documentation; see shredfold.models.image_tokens for the arithmetic.


class OpenAITiles(Strict):
    """OpenAI's tile rule (GPT-4o, GPT-4.1, GPT-5, o-series): ``detail: low`` costs
    ``base_tokens``; otherwise the image is fitted into ``max_side``², its short side cut to
    ``short_side``, and each ``tile``-px square costs ``tile_tokens`` on top of the base."""

    rule: Literal["openai-tiles"]
    base_tokens: Annotated[int, Field(ge=0)] = 85
    tile_tokens: Annotated[int, Field(ge=0)] = 170
    tile: Annotated[int, Field(ge=1)] = 512
    max_side: Annotated[int, Field(ge=1)] = 2048
    short_side: Annotated[int, Field(ge=1)] = 768


class OpenAIPatches(Strict):
    """OpenAI's patch rule (GPT-4.1-mini/nano, GPT-5-mini/nano, o4-mini): ``patch``-px
    patches, the image shrunk to at most ``max_patches`` of them, times ``multiplier``."""

    rule: Literal["openai-patches"]
    patch: Annotated[int, Field(ge=1)] = 32
    max_patches: Annotated[int, Field(ge=1)] = 1536
    multiplier: Annotated[float, Field(gt=0)] = 1.0


class QwenPatches(Strict):
    """Qwen-VL's rule: sides rounded to multiples of ``factor`` (28 for Qwen2/2.5-VL, 32 for
    Qwen3-VL), the area kept within [min_pixels, max_pixels], one token per factor² block,
    plus ``extra_tokens`` (the vision start/end markers)."""

    rule: Literal["qwen-patches"]
    factor: Annotated[int, Field(ge=1)] = 28
    min_pixels: Annotated[int, Field(ge=1)] = 4 * 28 * 28
    max_pixels: Annotated[int, Field(ge=1)] = 1280 * 28 * 28
    extra_tokens: Annotated[int, Field(ge=0)] = 2

    @model_validator(mode="after")
    def _order(self) -> QwenPatches:
        if self.min_pixels > self.max_pixels:
            raise ValueError("min_pixels must not exceed max_pixels")
        return self


class GeminiTiles(Strict):
    """Gemini's rule: an image with both sides at most ``small_side`` costs ``tokens``; a
    larger one ``tokens`` per ``tile``-px tile. ``tile: null``: ``tokens`` per image whatever
    its size (Gemini 3's ``media_resolution``: 280 low, 560 medium, 1120 high)."""

    rule: Literal["gemini"]
    tokens: Annotated[int, Field(ge=0)] = 258
    small_side: Annotated[int, Field(ge=1)] = 384
    tile: Annotated[int, Field(ge=1)] | None = 768


class PerPixel(Strict):
    """One token per ``pixels_per_token`` pixels (rounded up), plus ``extra_tokens``."""

    rule: Literal["per-pixel"]
    pixels_per_token: Annotated[float, Field(gt=0)] = 784.0
    extra_tokens: Annotated[int, Field(ge=0)] = 0


ImageTokenRule = Annotated[
    OpenAITiles | OpenAIPatches | QwenPatches | GeminiTiles | PerPixel, Field(discriminator="rule")
]


class ModelConfig(Strict):
    """One model: a built-in solver, or an OpenAI-compatible Chat Completions endpoint."""

    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    adapter: str = "openai"
    base_url: str | None = None
    cache_scope: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        default=None,
        description="Declares this endpoint interchangeable with every other whose model file "
        "sets the same cache_scope: it replaces the endpoint URL in the model's identity, so "
        "they share cached answers (same endpoint model, decoding and images). Unset: answers "
        "are never shared between different endpoints.",
    )
    model: str | None = Field(default=None, description="Model name at the endpoint.")
    api_key_env: str | None = Field(
        default=None, description="Environment variable that holds the API key (never the key)."
    )
    decoding: Decoding = Decoding()
    images: ImageHandling = ImageHandling()
    timeout_s: Annotated[float, Field(gt=0)] = 120.0
    max_attempts: Annotated[int, Field(ge=1, le=20)] = 5
    backoff_s: Annotated[float, Field(ge=0, le=60)] = Field(
        default=1.0, description="Base of the exponential backoff between attempts (full jitter)."
    )
    retry_malformed: Annotated[int, Field(ge=0, le=5)] = Field(
        default=1,
        description="Times a request is asked again after an HTTP 200 whose body cannot be read "
        "(malformed, no choices, cut off): a paying provider bills each such 200, so each is "
        "recorded in the spend ledger at its worst case. Not part of the model's identity.",
    )
    max_concurrency: Annotated[int, Field(ge=1, le=256)] = 4
    requests_per_minute: Annotated[float, Field(gt=0)] | None = None
    tokens_per_minute: Annotated[float, Field(gt=0)] | None = None
    price_input_per_mtok: Annotated[float, Field(ge=0)] = 0.0
    price_output_per_mtok: Annotated[float, Field(ge=0)] = 0.0
    image_tokens: ImageTokenRule | None = Field(
        default=None,
        description="How the provider counts an image's input tokens (cost estimates and "
        "budget reservations only). Unset: one token per 28×28 pixels, an approximation.",
    )
    budget_usd: Annotated[float, Field(ge=0)] | None = Field(
        default=None,
        description="Most dollars this model may spend, recorded across runs, cells and jobs "
        "(results/store/.spend/<id>.jsonl); once a call could exceed it, the remaining items "
        "are errors until it is raised. Not part of the model's identity.",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Extra Chat Completions fields sent as-is (e.g. reasoning_effort); part of "
        "the model's identity.",
    )
    endpoint_slots: Annotated[int, Field(ge=1)] = Field(
        default=1,
        description="Parallel Snakemake jobs allowed against this endpoint (shared resource).",
    )
    reference: bool = Field(
        default=False, description="A reference row (e.g. the oracle), marked on the leaderboard."
    )
    notes: str | None = None


