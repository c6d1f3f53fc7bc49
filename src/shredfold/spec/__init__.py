"""Experiment specs: pydantic models, and strict YAML reading with errors that name the
file, the line, the YAML path and the cause.

The spec is the single source of truth for an experiment. JSON Schema in ``schemas/`` is
generated from these models (``shredfold schema``); a test fails when the two drift. What a
model reference or an adapter name means is the adapter registry's business
(:mod:`shredfold.resolve` puts the two together), so this package knows no adapter.

One module per concern: :mod:`.shred` and :mod:`.origami` hold each benchmark's section,
:mod:`.model` a model's configuration, :mod:`.root` the spec that holds them (a section per
registered benchmark: :func:`register_section`), and
:mod:`.reading` the YAML reading. The names below are the package's public face.
"""

from shredfold.spec.base import SpecError, Strict
from shredfold.spec.model import (
    Decoding,
    GeminiTiles,
    ImageHandling,
    ImageTokenRule,
    ModelConfig,
    OpenAIPatches,
    OpenAITiles,
    PerPixel,
    QwenPatches,
)
from shredfold.spec.origami import (
    ClipSettings,
    DesignSources,
    OrigamiBenchSpec,
    OrigamiTask,
    TierThresholds,
)
from shredfold.spec.reading import (
    MAX_YAML_NODES,
    format_validation_error,
    line_of,
    read_model_config,
    read_spec,
    read_yaml,
    spec_error_at,
)
from shredfold.spec.root import (
    KeyOptIn,
    ResolvedSpec,
    Spec,
    json_schemas,
    load_sections,
    path_fields,
    register_section,
    sections,
)
from shredfold.spec.shred import (
    BLENDER_PRESETS,
    PAPER_FIXED,
    BlenderSettings,
    CorpusSource,
    FlatSettings,
    RenderOverrides,
    RenderSettings,
    SampleSource,
    ShredBenchSpec,
    SynthesisSettings,
)

__all__ = [
    "BLENDER_PRESETS", "MAX_YAML_NODES", "PAPER_FIXED", "BlenderSettings", "ClipSettings", "CorpusSource",
    "Decoding", "DesignSources", "FlatSettings", "GeminiTiles", "ImageHandling", "ImageTokenRule", "KeyOptIn",
    "ModelConfig", "OpenAIPatches", "OpenAITiles", "OrigamiBenchSpec", "OrigamiTask", "PerPixel", "QwenPatches",
    "RenderOverrides", "RenderSettings", "ResolvedSpec", "SampleSource", "ShredBenchSpec", "Spec", "SpecError",
    "Strict", "SynthesisSettings", "TierThresholds", "format_validation_error", "json_schemas", "line_of",
    "load_sections", "path_fields", "read_model_config", "read_spec", "read_yaml", "register_section", "sections",
    "spec_error_at",
]
