"""The spec itself (each benchmark's section, the models, budgets, key opt-ins), the spec
once its model references are resolved, and the JSON Schemas generated from both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shredfold.spec.base import Strict
from shredfold.spec.model import ModelConfig
from shredfold.spec.origami import OrigamiBenchSpec
from shredfold.spec.shred import ShredBenchSpec


class KeyOptIn(Strict):
    """The one variable a model may send to the one host, as ``shredfold plan`` shows them."""

    env: Annotated[str, Field(min_length=1)]
    host: Annotated[str, Field(min_length=1)]


class Spec(Strict):
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




def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schemas written to ``schemas/`` (file name → schema)."""
    return {
        "spec.schema.json": Spec.model_json_schema(),
        "model.schema.json": ModelConfig.model_json_schema(),
    }
