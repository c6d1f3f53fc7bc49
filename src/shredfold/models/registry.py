"""The adapter registry: from a model's configuration to what it can answer, who it is, and
an object that answers.

An adapter is a class that registers itself with :func:`adapter` and declares its
capabilities: the benchmarks it can answer, whether it is a reference row, whether it can be
named in a spec without a model file (a built-in), and whether its calls wait on the network
(then a cell asks ``max_concurrency`` of them at a time). Its identity — what makes two of
its answers interchangeable, hashed into every response key — is computed from the
configuration alone (``identity_of``), so planning never builds a model.

Adapter modules keep their top level light (heavy libraries are imported where a model is
built or called): the registry imports them all to know their names. Built-ins live in
:mod:`shredfold.models.builtin`, one module each; other packages can add adapters through
the ``shredfold.adapters`` entry-point group. Adding an adapter is adding one module.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib import metadata
from typing import Any

from shredfold.models.adapter import Adapter, registered
from shredfold.spec import ModelConfig
from shredfold.store import Store

ENTRY_POINTS = "shredfold.adapters"
# Modules outside the built-in package that hold adapters.
_EXTRA_MODULES = ("shredfold.models.openai_compat",)
_LOADED = False


def _load() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from shredfold.models import builtin

    for info in sorted(pkgutil.iter_modules(builtin.__path__), key=lambda m: m.name):
        importlib.import_module(f"{builtin.__name__}.{info.name}")
    for module in _EXTRA_MODULES:
        importlib.import_module(module)
    for ep in metadata.entry_points(group=ENTRY_POINTS):
        ep.load()


def adapters() -> dict[str, Adapter]:
    _load()
    return registered()


def builtin_names() -> list[str]:
    return [a.name for a in adapters().values() if a.builtin]


def get(name: str) -> Adapter:
    found = adapters().get(name)
    if found is None:
        raise KeyError(f"unknown adapter {name!r}; known: {', '.join(sorted(adapters()))}")
    return found


def builtin_config(name: str) -> ModelConfig:
    """The configuration a spec gets when it names a built-in without a model file."""
    a = get(name)
    if not a.builtin:
        raise KeyError(f"adapter {name!r} needs a model file (it is not a built-in)")
    return ModelConfig(id=name, adapter=name, reference=a.reference)


def config_problems(config: ModelConfig) -> list[tuple[str, str]]:
    """(field, what is wrong) with a configuration for its adapter (empty when usable)."""
    try:
        a = get(config.adapter)
    except KeyError as exc:
        return [("adapter", str(exc.args[0]))]
    return a.problems(config)


def identity(config: ModelConfig) -> dict[str, Any]:
    return get(config.adapter).identity(config)


def answers(config: ModelConfig, benchmark: str) -> bool:
    """Whether a model has cells in a benchmark."""
    declared = get(config.adapter).benchmarks
    return declared is None or benchmark in declared


def concurrent(config: ModelConfig) -> bool:
    return get(config.adapter).concurrent


def build_model(config: ModelConfig, store: Store) -> Any:
    """An object that answers requests (a :class:`~shredfold.models.base.Model`)."""
    return get(config.adapter).build(config, store)
