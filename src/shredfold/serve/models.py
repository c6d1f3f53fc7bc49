"""What ``shredfold serve`` serves: a built-in model, or the echo transport check; and the
index by which a served model that reads its item (the oracle) finds the item a request
shows (each benchmark's own: :attr:`shredfold.tasks.benchmark.Benchmark.item_index`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shredfold.calls import Request, Response
from shredfold.models.base import Model
from shredfold.serve.errors import ServeError
from shredfold.spec import ModelConfig
from shredfold.store import Store


class Echo:
    """A server-only transport check: answers with the prompt's last line and image count.

    Not a benchmark contestant (it is not in the registry); used by ``bench/adapter_speed.py``
    to measure the HTTP path without a model's own cost.
    """

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    def identity(self) -> dict[str, Any]:
        return {"adapter": "echo", "version": 1}

    def complete(self, request: Request) -> Response:
        last = request.text.strip().splitlines()[-1] if request.text.strip() else ""
        return Response(text=f"{last} [{len(request.images)} images]", served_model="echo")


class ItemIndex:
    """The item a request shows, for a served model that reads its item (the oracle): asked of
    each benchmark it answers that can tell (:attr:`Benchmark.item_index`), first answer wins."""

    def __init__(self, indexes: list[Any]) -> None:
        self.indexes = indexes

    def item_for(self, images: list[bytes]) -> str | None:
        for index in self.indexes:
            key = index.item_for(images)
            if key is not None:
                return key
        return None


def served_index(name: str, results: Path | None) -> ItemIndex | None:
    """The item index a served built-in needs (None: its benchmarks tell no item, or there
    is no results folder to read)."""
    if results is None or name == "echo":
        return None
    from shredfold.models import registry
    from shredfold.tasks.registry import benchmarks

    config = registry.builtin_config(name)
    store = Store(results / "store")
    found = [b.item_index(store) for b in benchmarks() if b.item_index is not None and registry.answers(config, b.name)]
    return ItemIndex(found) if found else None


def build_served_model(name: str, results: Path | None) -> Model:
    if name == "echo":
        return Echo(ModelConfig(id="echo", adapter="oracle"))
    from shredfold.models import registry

    if name not in registry.builtin_names():
        raise ServeError(f"unknown model {name!r}; serve one of: echo, {', '.join(registry.builtin_names())}")
    store = Store((results or Path("results")) / "store")
    return registry.build_model(registry.builtin_config(name), store)

