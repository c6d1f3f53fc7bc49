"""The spec itself (the models, budgets, key opt-ins, and a section per registered
benchmark), the spec once its model references are resolved, and the JSON Schemas generated
from both.

The spec names no benchmark: a benchmark registers its section (:func:`register_section`),
which becomes an optional field of :class:`Spec` named after the benchmark. The built-in
sections register where they are defined (:mod:`.shred`, :mod:`.origami`); an outside
benchmark's package registers its own when the ``shredfold.tasks`` entry-point group is
loaded (:func:`load_sections`, called before any spec is read).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.fields import FieldInfo

from shredfold import plugins
from shredfold.spec.base import Strict
from shredfold.spec.model import ModelConfig


class KeyOptIn(Strict):
    """The one variable a model may send to the one host, as ``shredfold plan`` shows them."""

    env: Annotated[str, Field(min_length=1)]
    host: Annotated[str, Field(min_length=1)]


class Spec(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    description: str | None = None
    seed: int = 0
    # here: an optional field per registered benchmark section (register_section)
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

    @model_validator(mode="before")
    @classmethod
    def _known_sections(cls, data: Any) -> Any:
        # An unknown top-level key is most often a benchmark whose package is not installed
        # (or a typo of one): say so in one line, naming the sections there are.
        if isinstance(data, dict):
            unknown = [k for k in data if isinstance(k, str) and k not in cls.model_fields]
            if unknown:
                known = ", ".join(_SECTIONS) or "none"
                raise ValueError(
                    f"unknown section {unknown[0]!r}: not a spec field nor a registered benchmark's "
                    f"section (registered: {known})"
                )
        return data

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




# benchmark name → (order, section model); the fields of Spec follow it
_SECTIONS: dict[str, tuple[int, type[BaseModel]]] = {}
# benchmark name → the fields of its section that name a file or folder (paths within it)
_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {}
# Spec's own fields before the sections (the rest follow them, as they always have)
_HEAD = ("name", "description", "seed")


def register_section(name: str, model: type[BaseModel], order: int, paths: tuple[tuple[str, ...], ...] = ()) -> None:
    """Make ``model`` the spec's optional section ``name`` (sections sit in ``order``);
    ``paths``: its fields that name a file or folder relative to the spec's own folder.
    Registering the same model again is a no-op; another model under a taken name, or a name
    that is a field of the spec, is refused."""
    old = _SECTIONS.get(name)
    if old is not None:
        if old[1] is model:
            return
        raise ValueError(f"spec section {name!r} is already registered (by {old[1].__qualname__})")
    if name in Spec.model_fields:
        raise ValueError(f"spec section {name!r} would hide the spec's own field of that name")
    _SECTIONS[name] = (order, model)
    _PATHS[name] = paths
    own = {k: v for k, v in Spec.model_fields.items() if k not in _SECTIONS}
    head = {k: v for k, v in own.items() if k in _HEAD}
    tail = {k: v for k, v in own.items() if k not in _HEAD}
    added = {k: FieldInfo.from_annotated_attribute(m | None, None) for k, m in sections(load=False).items()}
    Spec.model_fields.clear()
    Spec.model_fields.update({**head, **added, **tail})
    # The schemas of Spec and of the model that holds one are built anew with the field.
    Spec.model_rebuild(force=True)
    ResolvedSpec.model_rebuild(force=True)


def sections(load: bool = True) -> dict[str, type[BaseModel]]:
    """Every registered section (benchmark name → its model), in order; ``load``: the outside
    benchmarks' too."""
    if load:
        load_sections()
    return {k: m for k, (_, m) in sorted(_SECTIONS.items(), key=lambda kv: (kv[1][0], kv[0]))}


def path_fields() -> tuple[tuple[str, ...], ...]:
    """Every registered section's fields that name a file or folder, as YAML paths."""
    return tuple((name, *p) for name in sections() for p in _PATHS.get(name, ()))


def load_sections() -> None:
    """Load the outside benchmarks (their packages register their sections)."""
    plugins.load(plugins.BENCHMARKS)


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schemas written to ``schemas/`` (file name → schema)."""
    load_sections()
    return {
        "spec.schema.json": Spec.model_json_schema(),
        "model.schema.json": ModelConfig.model_json_schema(),
    }
