"""From a model's configuration to an object that answers requests."""

from __future__ import annotations

from shredfold.models.base import Model
from shredfold.spec import ModelConfig
from shredfold.store import Store


def build_model(config: ModelConfig, store: Store) -> Model:
    if config.adapter == "oracle":
        from shredfold.models.builtin.oracle import Oracle

        return Oracle(config, store)
    if config.adapter == "ocr-islands":
        from shredfold.models.builtin.ocr_islands import OcrIslands

        return OcrIslands(config)
    if config.adapter == "jigsaw-ocr":
        from shredfold.models.builtin.jigsaw import JigsawOcr

        return JigsawOcr(config)
    if config.adapter.startswith("origami-"):
        from shredfold.models.builtin.origami_agents import AGENTS

        return AGENTS[config.adapter](config, store)
    if config.adapter == "openai":
        from shredfold.models.openai_compat import OpenAICompatible  # type: ignore[import-not-found]

        return OpenAICompatible(config)
    raise ValueError(f"model {config.id!r}: unknown adapter {config.adapter!r}")


def model_identity(config: ModelConfig, store: Store) -> dict:
    return build_model(config, store).identity()
