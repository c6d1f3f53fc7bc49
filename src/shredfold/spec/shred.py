"""ShredBench's section of a spec: rendering, synthesis, where documents or outside samples
come from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from shredfold.corpus.document import Domain
from shredfold.spec.base import Strict
from shredfold.spec.root import register_section


class RenderSettings(Strict):
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
    return create_model(name, __base__=Strict, __doc__=doc, **fields)  # type: ignore[call-overload, no-any-return]


RenderOverrides = _overrides_of(
    RenderSettings,
    "RenderOverrides",
    "Per-domain changes to :class:`RenderSettings`; unset fields keep the shared value.",
)


class FlatSettings(Strict):
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


class BlenderSettings(Strict):
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


class SynthesisSettings(Strict):
    """How pieces are cut, turned into scraps and scattered. Every field enters the key."""

    mode: Literal["flat", "blender"] = "flat"
    jagged: Annotated[float, Field(ge=0.0, le=20.0)] = 3.0
    max_rotation: Annotated[float, Field(ge=0.0, le=180.0)] = 180.0
    table: tuple[int, int, int] = (92, 74, 58)
    composite_gap: Annotated[int, Field(ge=0, le=400)] = 24
    flat: FlatSettings = FlatSettings()
    blender: BlenderSettings = BlenderSettings()


class CorpusSource(Strict):
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


class SampleSource(Strict):
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


class ShredBenchSpec(Strict):
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
    limit: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="A quick run: ask and score only the first N items of every cell, in plan "
        "order. The items keep their keys, so a later full run reuses every answer; the "
        "leaderboard marks the run as limited. `--config limit=N` sets it for both benchmarks.",
    )

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




# The section is the spec's from import on (a spec is read in processes that load no task).
register_section(
    "shred",
    ShredBenchSpec,
    order=0,
    paths=(("corpus", "folder"), ("corpus", "jsonl"), ("samples", "folder"), ("samples", "manifest")),
)
