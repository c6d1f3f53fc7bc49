"""OrigamiBench's section of a spec: its tasks, where designs come from, tiers and the CLIP
model behind SS.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from shredfold.spec.base import Strict
from shredfold.spec.root import register_section

OrigamiTask = Literal["mcq_assoc", "mcq_causal", "fullstep"]


class DesignSources(Strict):
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
        description="A design file that does not parse (found by the plan) or does not fold "
        "flat (found by its validation job): stop (the plan lists every file that does not "
        "parse; a validation job names its design), or leave it out.",
    )
    validate_timeout_s: Annotated[float, Field(gt=0, le=3600)] = Field(
        default=60.0,
        description="Time the layer solver may take to find one flat-folded state of a folder "
        "design the package does not know, in that design's validation job (one job per "
        "design, in parallel; the result is stored). Flat-Folder's designs are known ahead.",
    )

    @model_validator(mode="after")
    def _order(self) -> DesignSources:
        if self.procedural_folds[0] > self.procedural_folds[1]:
            raise ValueError("procedural_folds: fewest must not exceed most")
        return self


class TierThresholds(Strict):
    """A design is hard when either count reaches its hard threshold, medium when either
    reaches its medium threshold, else easy. Creases: edges that are not the boundary."""

    medium_vertices: Annotated[int, Field(ge=1)] = 10
    medium_creases: Annotated[int, Field(ge=1)] = 10
    hard_vertices: Annotated[int, Field(ge=1)] = 20
    hard_creases: Annotated[int, Field(ge=1)] = 24


class ClipSettings(Strict):
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


class OrigamiBenchSpec(Strict):
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
    limit: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="A quick run: ask and score only the first N items of every cell, in plan "
        "order. The items keep their keys, so a later full run reuses every answer; the "
        "leaderboard marks the run as limited. `--config limit=N` sets it for both benchmarks.",
    )

    @field_validator("tasks")
    @classmethod
    def _unique(cls, v: list[Any]) -> list[Any]:
        if len(set(v)) != len(v):
            raise ValueError("entries must be unique")
        return v




# The section is the spec's from import on (a spec is read in processes that load no task).
register_section(
    "origami",
    OrigamiBenchSpec,
    order=10,
    paths=(("designs", "folder"), ("designs", "categories"), ("clip", "checkpoint")),
)
