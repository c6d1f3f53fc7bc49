"""Experiment specs: pydantic models, and strict YAML reading with errors that name the
file, the line, the YAML path and the cause.

The spec is the single source of truth for an experiment. JSON Schema in ``schemas/`` is
generated from these models (``shredfold schema``); a test fails when the two drift. What a
model reference or an adapter name means is the adapter registry's business
(:mod:`shredfold.resolve` puts the two together), so this module knows no adapter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from shredfold.corpus.document import Domain


class SpecError(ValueError):
    """A spec that cannot be used; the message names the file, the YAML path and the cause."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- ShredBench settings


class RenderSettings(_Strict):
    """How a document becomes a page image. Every field that shapes the page enters the
    sample key (under ``style: paper`` only the style does: the authors' stylesheet fixes
    the rest)."""

    style: Literal["shredfold", "paper"] = Field(
        default="shredfold",
        description="shredfold: this harness's own page (the fields below); paper: the "
        "ShredBench authors' page (their stylesheet as headless Chrome set it: 1600 px, DejaVu "
        "Serif 28 px justified, ruled headings, grey code blocks, bordered tables, flat "
        "#fdfbf7 paper), where the other fields do not apply.",
    )
    width: Annotated[int, Field(ge=400, le=4000)] = 1600
    fit: Literal["content", "page"] = Field(
        default="content",
        description="content: the page is as wide as its content plus the margin, at most "
        "width (a code listing or a table narrower than the page makes no blank scraps); "
        "page: always width wide.",
    )
    margin: Annotated[int, Field(ge=0, le=400)] = 96
    prose_font_size: Annotated[int, Field(ge=8, le=96)] = 30
    code_font_size: Annotated[int, Field(ge=8, le=96)] = 24
    table_font_size: Annotated[int, Field(ge=8, le=96)] = 26
    line_spacing: Annotated[float, Field(ge=1.0, le=3.0)] = 1.45
    ink: tuple[int, int, int] = (24, 24, 28)
    paper: tuple[int, int, int] = (246, 243, 236)
    texture: Annotated[float, Field(ge=0.0, le=1.0)] = 0.35


def _overrides_of(model: type[BaseModel], name: str, doc: str) -> type[BaseModel]:
    """A model with every field of ``model`` optional (None: keep the shared value), with
    the same constraints, so the two can never disagree."""
    fields: dict[str, Any] = {}
    for f, info in model.model_fields.items():
        kind: Any = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
        fields[f] = (kind | None, Field(default=None, description=info.description))
    return create_model(name, __base__=_Strict, __doc__=doc, **fields)  # type: ignore[call-overload, no-any-return]


RenderOverrides = _overrides_of(
    RenderSettings,
    "RenderOverrides",
    "Per-domain changes to :class:`RenderSettings`; unset fields keep the shared value.",
)


class FlatSettings(_Strict):
    """2D scrap realism: paper tint, drop shadow, lighting gradient, sensor noise."""

    tint: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5
    shadow_offset: Annotated[float, Field(ge=0.0, le=40.0)] = 6.0
    shadow_blur: Annotated[float, Field(ge=0.0, le=40.0)] = 5.0
    shadow_opacity: Annotated[float, Field(ge=0.0, le=1.0)] = 0.45
    lighting: Annotated[float, Field(ge=0.0, le=1.0)] = 0.12
    # 1 (was 2): a grey level of noise on white paper is not seen, and half the noise was 13%
    # of the pieces' bytes
    noise: Annotated[float, Field(ge=0.0, le=20.0)] = 1.0


BLENDER_PRESETS: dict[str, dict[str, float | int | bool]] = {
    # paper_scale / paper_samples: the paper's lighting pass, rendered at this fraction of
    # the piece's pixels with this many Cycles samples per pixel; textured: the page texture
    # is shaded by Cycles itself at full size (else the lighting multiplies the texture
    # afterwards, which for a matte sheet under an orthographic camera is the same sum).
    # shadow_scale / shadow_samples: the pass that lights the table (shadows are soft).
    "draft": {"paper_scale": 0.5, "paper_samples": 1, "textured": False,
              "shadow_scale": 0.25, "shadow_samples": 4},
    "default": {"paper_scale": 0.5, "paper_samples": 2, "textured": False,
                "shadow_scale": 0.25, "shadow_samples": 8},
    "high": {"paper_scale": 1.0, "paper_samples": 4, "textured": True,
             "shadow_scale": 0.5, "shadow_samples": 8},
    # The ShredBench authors' scene (shredfold.shred.blender_paper): one frame of all the
    # pieces, RESOLUTION² px. Visibility and the page texture are resolved exactly, at
    # supersample² points per pixel; Cycles renders only the lighting, at paper_scale of the
    # frame with paper_samples per pixel (bench/paper_scene_noise.py: samples vs time vs
    # difference to a 256-sample reference).
    "paper": {"paper_scale": 0.125, "paper_samples": 16, "supersample": 2},
}
# Settings of the sheet-on-a-table scene that the authors' scene fixes (their values).
PAPER_FIXED = ("crumple", "crumple_scale", "creases", "crease_angle", "thickness",
               "light_elevation", "light_azimuth", "light_softness", "ambient",
               "shadow_opacity", "grain")  # fmt: skip


class BlenderSettings(_Strict):
    """Blender-mode (bpy, Cycles) scraps. Presets ``draft``, ``default`` and ``high``: each
    piece a thin crumpled, creased sheet lit by one sun, casting a soft shadow on the table,
    at three render qualities. Preset ``paper``: the ShredBench authors' scene (their
    ``blenderprocess_.py``): every piece a subdivided, solidified, displaced rectangle cut by
    its mask, packed around the centre on a grey ground under one area light, one 4096² frame;
    it fixes the scene, so only ``samples`` and ``resolution`` may be set with it.
    ``samples`` and ``resolution`` override the preset's lighting pass. Lengths are in page
    pixels. Every field enters the sample key."""

    preset: Literal["draft", "default", "high", "paper"] = "default"
    samples: Annotated[int, Field(ge=1, le=4096)] | None = Field(
        default=None, description="Cycles samples per pixel of the lighting pass (default: preset's)."
    )
    resolution: Literal[0.125, 0.25, 0.5, 1.0] | None = Field(
        default=None,
        description="Lighting pass size as a fraction of the piece's, or with preset paper of "
        "the frame's (default: preset's; the textured 'high' preset always shades at full size).",
    )
    crumple: Annotated[float, Field(ge=0.0, le=80.0)] = Field(
        default=24.0, description="Relief of the crumple displacement, px."
    )
    crumple_scale: Annotated[float, Field(ge=10.0, le=4000.0)] = Field(
        default=200.0, description="Size of crumple features, px."
    )
    creases: Annotated[int, Field(ge=0, le=8)] = Field(
        default=2, description="Most fold lines per piece (each piece draws 0..creases)."
    )
    crease_angle: Annotated[float, Field(ge=0.0, le=20.0)] = Field(
        default=6.0, description="Most tilt of the paper on each side of a fold line, degrees."
    )
    thickness: Annotated[float, Field(ge=0.0, le=10.0)] = Field(
        default=1.0, description="Paper thickness (Solidify), px."
    )
    light_elevation: Annotated[float, Field(ge=10.0, le=90.0)] = Field(
        default=45.0, description="Sun height above the table, degrees."
    )
    light_azimuth: Annotated[float, Field(ge=0.0, lt=360.0)] | None = Field(
        default=None,
        description="Where the sun is, degrees counter-clockwise from the image's right; "
        "None: random per sample.",
    )
    light_softness: Annotated[float, Field(ge=0.0, le=45.0)] = Field(
        default=10.0, description="Angular diameter of the sun (shadow softness), degrees."
    )
    ambient: Annotated[float, Field(ge=0.0, le=0.9)] = Field(
        default=0.35, description="Share of a flat sheet's brightness from shadowless fill light."
    )
    shadow_opacity: Annotated[float, Field(ge=0.0, le=1.0)] = 0.6
    grain: Annotated[float, Field(ge=0.0, le=20.0)] = Field(
        default=1.5, description="Sensor noise on the paper, grey levels (std)."
    )

    @model_validator(mode="after")
    def _paper_fixes_the_scene(self) -> BlenderSettings:
        if self.preset == "paper":
            fixed = sorted(set(PAPER_FIXED) & self.model_fields_set)
            if fixed:
                raise ValueError(
                    f"{', '.join(fixed)}: not settable with preset 'paper' (the authors' scene "
                    "fixes it; only samples and resolution may be set)"
                )
        return self

    @property
    def paper_scene(self) -> bool:
        """Whether this is the authors' one-frame scene rather than a sheet per piece."""
        return self.preset == "paper"

    def quality(self) -> dict[str, float | int | bool]:
        """The preset's render settings with this spec's overrides applied."""
        q = dict(BLENDER_PRESETS[self.preset])
        if self.samples is not None:
            q["paper_samples"] = self.samples
        if self.resolution is not None:
            q["paper_scale"] = self.resolution
        return q


class SynthesisSettings(_Strict):
    """How pieces are cut, turned into scraps and scattered. Every field enters the key."""

    mode: Literal["flat", "blender"] = "flat"
    jagged: Annotated[float, Field(ge=0.0, le=20.0)] = 3.0
    max_rotation: Annotated[float, Field(ge=0.0, le=180.0)] = 180.0
    table: tuple[int, int, int] = (92, 74, 58)
    composite_gap: Annotated[int, Field(ge=0, le=400)] = 24
    flat: FlatSettings = FlatSettings()
    blender: BlenderSettings = BlenderSettings()


class CorpusSource(_Strict):
    """Where documents come from: the built-in set, a folder (domain = sub-folder), or JSONL."""

    builtin: bool = True
    folder: Path | None = None
    jsonl: Path | None = None

    @model_validator(mode="after")
    def _one_source(self) -> CorpusSource:
        chosen = [self.folder is not None, self.jsonl is not None]
        if sum(chosen) > 1:
            raise ValueError("give at most one of 'folder' and 'jsonl'")
        return self


class SampleSource(_Strict):
    """Samples made elsewhere (a released data set, photographs of real shreds), read from a
    folder laid out ``<domain>/<n>/<id>/`` or from a JSONL manifest; they replace rendering
    for this spec (see :mod:`shredfold.shred.outside`)."""

    folder: Path | None = Field(
        default=None,
        description="Folder laid out <domain>/<n>/<id>/ holding composite.(png|jpg|jpeg) "
        "and/or piece_*.(png|jpg|jpeg), and one truth.(md|txt|html).",
    )
    manifest: Path | None = Field(
        default=None,
        description='JSONL, one sample a line: {"id", "domain", "n", "images": [...], '
        '"truth": ...}; paths relative to the manifest and inside its folder.',
    )

    @model_validator(mode="after")
    def _one_source(self) -> SampleSource:
        if (self.folder is None) == (self.manifest is None):
            raise ValueError("give exactly one of 'folder' and 'manifest'")
        return self


class ShredBenchSpec(_Strict):
    protocol: Literal["shredfold", "paper"] = Field(
        default="shredfold",
        description="paper: as the ShredBench authors ran it (one table-top photograph as JPEG "
        "q95, 2048 px; one Markdown instruction; scored against the document as written, "
        "ned_raw without normalisation). shredfold: each model's image mode, a per-kind "
        "instruction, scored against the text drawn on the page (normalised NED).",
    )
    domains: list[Domain] = Field(
        default_factory=list,
        description="Domains to render (required), or, with 'samples', those of the outside "
        "set to keep (empty: all it has).",
    )
    granularities: list[Annotated[int, Field(ge=1, le=256)]] = Field(
        default_factory=list,
        description="Numbers of pieces to cut (required), or, with 'samples', those of the "
        "outside set to keep (empty: all it has).",
    )
    documents_per_domain: Annotated[int, Field(ge=1)] = 4
    corpus: CorpusSource = CorpusSource()
    samples: SampleSource | None = Field(
        default=None,
        description="Take the samples from an outside set instead of rendering the corpus.",
    )
    render: RenderSettings = RenderSettings()
    render_by_domain: dict[Domain, RenderOverrides] = Field(default_factory=dict)  # type: ignore[valid-type]
    synthesis: SynthesisSettings = SynthesisSettings()

    @field_validator("domains", "granularities")
    @classmethod
    def _unique(cls, v: list[Any]) -> list[Any]:
        if len(set(v)) != len(v):
            raise ValueError("entries must be unique")
        return v

    @model_validator(mode="after")
    def _grid_or_samples(self) -> ShredBenchSpec:
        if self.samples is None:
            missing = [f for f in ("domains", "granularities") if not getattr(self, f)]
            if missing:
                raise ValueError(f"give {' and '.join(missing)} (at least one each), or 'samples'")
        elif self.corpus != CorpusSource():  # (a plan file's round trip gives the default)
            raise ValueError("give 'corpus' (documents to render) or 'samples' (an outside set), not both")
        return self

    def render_for(self, domain: str) -> RenderSettings:
        over = self.render_by_domain.get(domain)  # type: ignore[call-overload]
        if over is None:
            return self.render
        changes = {k: v for k, v in over.model_dump().items() if v is not None}
        return self.render.model_copy(update=changes)


# ---------------------------------------------------------------- OrigamiBench settings

OrigamiTask = Literal["mcq_assoc", "mcq_causal", "fullstep"]


class DesignSources(_Strict):
    """Where designs come from: the built-in FOLD set, seeded procedural sequences,
    Flat-Folder's designs, a folder."""

    builtin: bool = True
    procedural: Annotated[int, Field(ge=0, le=10000)] = Field(
        default=12, description="Number of designs made from seeded random simple-fold sequences."
    )
    procedural_folds: tuple[Annotated[int, Field(ge=1, le=12)], Annotated[int, Field(ge=1, le=12)]] = Field(
        default=(2, 5), description="Fewest and most folds of a procedural design."
    )
    flat_folder: bool = Field(
        default=False,
        description="Flat-Folder's instagram designs as fetched by `shredfold designs fetch` "
        "(the paper's data set), with the paper's categories and tiers.",
    )
    folder: Path | None = Field(
        default=None,
        description="Folder of .fold / .cp files; a file whose bytes are one of Flat-Folder's "
        "designs gets that design's category and tier.",
    )
    categories: Path | None = Field(
        default=None,
        description="YAML/JSON mapping of design id (file stem) to semantic category; else "
        "the FOLD file's file_classes/frame_classes metadata, else 'uncategorised'.",
    )
    on_invalid: Literal["stop", "skip"] = Field(
        default="stop",
        description="A design file that does not parse or fold flat: stop the plan (listing "
        "every such file), or leave it out.",
    )
    validate_timeout_s: Annotated[float, Field(gt=0, le=3600)] = Field(
        default=60.0,
        description="Time the layer solver may take to find one flat-folded state of a folder "
        "design at plan time (once per design: the result is cached).",
    )

    @model_validator(mode="after")
    def _order(self) -> DesignSources:
        if self.procedural_folds[0] > self.procedural_folds[1]:
            raise ValueError("procedural_folds: fewest must not exceed most")
        return self


class TierThresholds(_Strict):
    """A design is hard when either count reaches its hard threshold, medium when either
    reaches its medium threshold, else easy. Creases: edges that are not the boundary."""

    medium_vertices: Annotated[int, Field(ge=1)] = 10
    medium_creases: Annotated[int, Field(ge=1)] = 10
    hard_vertices: Annotated[int, Field(ge=1)] = 20
    hard_creases: Annotated[int, Field(ge=1)] = 24


class ClipSettings(_Strict):
    """SS (CLIP image similarity) weights: a pretrained tag fetched beforehand (`shredfold
    weights fetch clip`), a local checkpoint, or a folder `shredfold clip finetune` wrote.
    Never downloaded during a run; absent → SS left empty."""

    model: str = Field(
        default="ViT-B-32",
        description="open_clip model config name, or a JSON model config file (its stem is the "
        "name). Not used for a fine-tuned folder, which carries its own.",
    )
    checkpoint: Path | None = Field(
        default=None,
        description="A local state-dict / open_clip checkpoint file, or a folder written by "
        "`shredfold clip finetune` (checked against its recipe's SHA-256).",
    )
    pretrained: str | None = Field(
        default=None,
        description="open_clip pretrained tag: a pinned one is read from the cache `shredfold "
        "weights fetch clip` writes (its bytes checked against the pin); another only if open_clip "
        "already has its file.",
    )
    cache_dir: Path | None = Field(
        default=None,
        description="The folder `shredfold weights fetch clip --to` wrote under (default "
        "$SHREDFOLD_CACHE/clip).",
    )


class OrigamiBenchSpec(_Strict):
    designs: DesignSources = DesignSources()
    tiers: TierThresholds = TierThresholds()
    tasks: list[OrigamiTask] = Field(default=["mcq_assoc", "mcq_causal", "fullstep"], min_length=1)
    action: Literal["fold", "crease"] = Field(
        default="fold",
        description="fold: fold every layer along a line in the folded state; crease: add a "
        "crease to the crease pattern.",
    )
    step_limit: Annotated[int, Field(ge=1, le=200)] = 6
    fullstep_targets: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="Most designs used as full-step targets (None: all)."
    )
    mcq_items: Annotated[int, Field(ge=1, le=100000)] = Field(
        default=100, description="Multiple-choice items per variant."
    )
    image_size: Annotated[int, Field(ge=64, le=2048)] = 256
    clip: ClipSettings = ClipSettings()

    @field_validator("tasks")
    @classmethod
    def _unique(cls, v: list[Any]) -> list[Any]:
        if len(set(v)) != len(v):
            raise ValueError("entries must be unique")
        return v


# ---------------------------------------------------------------- models


class Decoding(_Strict):
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


class ImageHandling(_Strict):
    mode: Literal["pieces", "composite"] = "pieces"
    detail: Literal["auto", "low", "high"] = "auto"
    max_side: Annotated[int, Field(ge=64, le=8192)] = 1600


# ---------------------------------------------------------------- image tokens
# How a provider counts an image's input tokens (for cost estimates and budget reservations
# only: none of this is sent, and none of it enters a model's identity). Each rule follows
# the provider's documentation; see shredfold.models.image_tokens for the arithmetic.


class OpenAITiles(_Strict):
    """OpenAI's tile rule (GPT-4o, GPT-4.1, GPT-5, o-series): ``detail: low`` costs
    ``base_tokens``; otherwise the image is fitted into ``max_side``², its short side cut to
    ``short_side``, and each ``tile``-px square costs ``tile_tokens`` on top of the base."""

    rule: Literal["openai-tiles"]
    base_tokens: Annotated[int, Field(ge=0)] = 85
    tile_tokens: Annotated[int, Field(ge=0)] = 170
    tile: Annotated[int, Field(ge=1)] = 512
    max_side: Annotated[int, Field(ge=1)] = 2048
    short_side: Annotated[int, Field(ge=1)] = 768


class OpenAIPatches(_Strict):
    """OpenAI's patch rule (GPT-4.1-mini/nano, GPT-5-mini/nano, o4-mini): ``patch``-px
    patches, the image shrunk to at most ``max_patches`` of them, times ``multiplier``."""

    rule: Literal["openai-patches"]
    patch: Annotated[int, Field(ge=1)] = 32
    max_patches: Annotated[int, Field(ge=1)] = 1536
    multiplier: Annotated[float, Field(gt=0)] = 1.0


class QwenPatches(_Strict):
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


class GeminiTiles(_Strict):
    """Gemini's rule: an image with both sides at most ``small_side`` costs ``tokens``; a
    larger one ``tokens`` per ``tile``-px tile. ``tile: null``: ``tokens`` per image whatever
    its size (Gemini 3's ``media_resolution``: 280 low, 560 medium, 1120 high)."""

    rule: Literal["gemini"]
    tokens: Annotated[int, Field(ge=0)] = 258
    small_side: Annotated[int, Field(ge=1)] = 384
    tile: Annotated[int, Field(ge=1)] | None = 768


class PerPixel(_Strict):
    """One token per ``pixels_per_token`` pixels (rounded up), plus ``extra_tokens``."""

    rule: Literal["per-pixel"]
    pixels_per_token: Annotated[float, Field(gt=0)] = 784.0
    extra_tokens: Annotated[int, Field(ge=0)] = 0


ImageTokenRule = Annotated[
    OpenAITiles | OpenAIPatches | QwenPatches | GeminiTiles | PerPixel, Field(discriminator="rule")
]


class ModelConfig(_Strict):
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


# ---------------------------------------------------------------- the spec


class KeyOptIn(_Strict):
    """The one variable a model may send to the one host, as ``shredfold plan`` shows them."""

    env: Annotated[str, Field(min_length=1)]
    host: Annotated[str, Field(min_length=1)]


class Spec(_Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    description: str | None = None
    seed: int = 0
    shred: ShredBenchSpec | None = None
    origami: OrigamiBenchSpec | None = None
    models: list[str | ModelConfig] = Field(min_length=1)
    budget_usd: dict[str, Annotated[float, Field(ge=0)]] = Field(
        default_factory=dict,
        description="Model id → a cap in dollars for this spec; the stricter of it and the "
        "model file's budget_usd applies.",
    )
    allow_keys: dict[str, KeyOptIn] = Field(
        default_factory=dict,
        description="Model id → {env, host}: lets that model send that variable to that host "
        "where it would otherwise be refused: a variable not named like an API key (…API_KEY), "
        "or a key sent to a link-local, cloud-metadata or private address. A model file "
        "shared by someone else cannot send a secret anywhere unseen.",
    )

    @model_validator(mode="after")
    def _unique_ids(self) -> Spec:
        ids = [m if isinstance(m, str) else m.id for m in self.models]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"model ids must be unique, repeated: {', '.join(dup)}")
        return self


class ResolvedSpec(BaseModel):
    """A spec with model references resolved and paths made absolute."""

    model_config = ConfigDict(frozen=True)

    path: Path
    spec: Spec
    models: list[ModelConfig]


# ---------------------------------------------------------------- loading


# A spec or model file is a few hundred nodes. YAML's aliases let a few lines stand for
# exponentially many ("billion laughs": nine levels of nine make 10^9), so the size a
# document would have once its aliases are expanded is counted on the composed node graph
# (each node once) before anything is built from it, and refused past this bound.
MAX_YAML_NODES = 100_000


def _expanded_sizes(root: yaml.Node) -> tuple[dict[int, int], yaml.Node | None]:
    """How many nodes each node stands for with every alias expanded (by ``id``, capped
    just past :data:`MAX_YAML_NODES`), counted without expanding: a node's size is computed
    once, however many aliases name it. Also the node that closes a cycle (an alias inside
    its own anchor), if any. Iterative: a deep document must not exhaust the stack."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            on_path.discard(id(node))
            size[id(node)] = min(MAX_YAML_NODES + 1, 1 + sum(size[id(c)] for c in _children(node)))
            continue
        if id(node) in size:
            continue
        if id(node) in on_path:
            return size, node
        on_path.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)
    return size, None


def _largest(root: yaml.Node, sizes: dict[int, int], path: Path) -> str:
    """``file:line: yaml.path`` of the first top-level entry too large once expanded."""
    if isinstance(root, yaml.MappingNode):
        for k, v in root.value:
            if sizes.get(id(v), 0) > MAX_YAML_NODES:
                return f"{path}:{k.start_mark.line + 1}: {k.value}"
    return f"{path}:{root.start_mark.line + 1}: <top>"


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _yaml_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map each YAML path (as a tuple of str keys/indices) to its 1-based line number.

    A node reached again through an alias is not walked again: an alias's paths fall back
    to the line of the alias's parent, and a document of aliases costs its own size."""
    out: dict[tuple[str, ...], int] = {}
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return out
    seen: set[int] = set()
    stack: list[tuple[yaml.Node | None, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if node is None:
            continue
        out[path] = node.start_mark.line + 1
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = str(k.value)
                out[(*path, key)] = k.start_mark.line + 1
                stack.append((v, (*path, key)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((v, (*path, str(i))) for i, v in enumerate(node.value))
    return out


# The tags of discriminated unions, which pydantic puts in error locations like a field.
_UNION_TAGS = frozenset(
    tag for rule in get_args(get_args(ImageTokenRule)[0]) for tag in get_args(rule.model_fields["rule"].annotation)
)


def _format_loc(loc: tuple[Any, ...]) -> tuple[str, tuple[str, ...]]:
    """Render a pydantic error location as a YAML path, dropping union-branch tags."""
    parts: list[str] = []
    raw: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts.append(f"[{p}]")
            raw.append(str(p))
        elif isinstance(p, str) and (
            p in ("str", "ModelConfig") or p in _UNION_TAGS or p.startswith(("function-", "literal["))
        ):
            continue
        else:
            parts.append(("." if parts else "") + str(p))
            raw.append(str(p))
    return "".join(parts) or "<top>", tuple(raw)


def format_validation_error(err: ValidationError, source: str, text: str, prefix: tuple[str, ...] = ()) -> str:
    lines = _yaml_lines(text)
    msgs = []
    seen = set()
    for e in err.errors():
        where, raw = _format_loc(tuple(e["loc"]))
        full = (*prefix, *raw)
        line = None
        for cut in range(len(full), -1, -1):
            if full[:cut] in lines:
                line = lines[full[:cut]]
                break
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown field"
        elif isinstance(e.get("input"), str | int | float | bool) and e["type"] != "missing":
            msg += f" (got {e['input']!r})"
        entry = f"{source}:{line if line else '?'}: {where}: {msg}"
        if entry not in seen:
            seen.add(entry)
            msgs.append(entry)
    return "\n".join(msgs)


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, except that a mapping may not repeat a key (last-wins hides typos)."""


def _no_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
        line = key_node.start_mark.line + 1
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (lines {seen[key]} and {line})", key_node.start_mark
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def read_yaml(path: Path) -> tuple[Any, str]:
    """The parsed YAML of a spec or model file and its text; errors name the file and line."""
    if not path.is_file():
        raise SpecError(f"{path}: file not found")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(f"{path}:{line}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    loader = None
    try:
        loader = _StrictLoader(text)  # its reader refuses characters YAML does not allow
        # Composed first (aliases stay shared references: no expansion yet), bounded, and
        # only then built into Python values.
        root = loader.get_single_node()
        if root is None:
            return None, text
        sizes, cycle = _expanded_sizes(root)
        if cycle is not None:
            raise SpecError(f"{path}:{cycle.start_mark.line + 1}: not valid YAML: an alias refers to a node that contains it")
        if sizes[id(root)] > MAX_YAML_NODES:
            raise SpecError(f"{_largest(root, sizes, path)}: refused: YAML aliases that expand to more "
                            f"than {MAX_YAML_NODES:,} nodes (a spec or model file has a few hundred)")
        return loader.construct_document(root), text
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(f"{where}: not valid YAML: {problem}") from None
    finally:
        if loader is not None:
            loader.dispose()  # type: ignore[no-untyped-call]


def read_model_config(path: Path) -> tuple[ModelConfig, str]:
    """A model file, validated as a :class:`ModelConfig` (adapter rules are checked later)."""
    data, text = read_yaml(path)
    if not isinstance(data, dict):
        raise SpecError(f"{path}:1: <top>: expected a mapping of model settings")
    try:
        return ModelConfig.model_validate(data), text
    except ValidationError as exc:
        raise SpecError(format_validation_error(exc, str(path), text)) from None


def read_spec(path: Path) -> tuple[Spec, str]:
    """A spec file, validated as a :class:`Spec` (references and paths not yet resolved)."""
    data, text = read_yaml(path)
    if not isinstance(data, dict):
        raise SpecError(f"{path}:1: <top>: expected a mapping")
    try:
        return Spec.model_validate(data), text
    except ValidationError as exc:
        raise SpecError(format_validation_error(exc, str(path), text)) from None


def line_of(text: str, *path: str) -> int | str:
    """The line of a YAML path in ``text`` ('?' when it is not there)."""
    return _yaml_lines(text).get(tuple(path), "?")


def spec_error_at(spec_path: str | Path, yaml_path: tuple[str, ...], cause: str) -> SpecError:
    """A problem found past validation (in what the spec names: a corpus folder's
    documents, an outside set, design files), as a spec error naming the spec file, the
    line and the YAML path of the setting that led to it."""
    try:
        text = Path(spec_path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    lines = _yaml_lines(text)
    line = next((lines[yaml_path[:k]] for k in range(len(yaml_path), 0, -1) if yaml_path[:k] in lines), "?")
    return SpecError(f"{spec_path}:{line}: {'.'.join(yaml_path)}: {cause}")


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schemas written to ``schemas/`` (file name → schema)."""
    return {
        "spec.schema.json": Spec.model_json_schema(),
        "model.schema.json": ModelConfig.model_json_schema(),
    }
