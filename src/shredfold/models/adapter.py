"""How an adapter declares itself: the :func:`adapter` class decorator and its record.

Kept apart from :mod:`shredfold.models.registry` (which finds and imports the adapter
modules) so that an adapter module imports only this small one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from shredfold.spec import ModelConfig
from shredfold.store import Store


class AdapterClass(Protocol):
    """What a registered class provides (an instance is a :class:`~shredfold.models.base.Model`)."""

    @classmethod
    def identity_of(cls, config: ModelConfig) -> dict[str, Any]: ...

    @classmethod
    def config_problems(cls, config: ModelConfig) -> list[tuple[str, str]]:
        """(field, what is wrong) for each of the adapter's own rules the config breaks."""
        ...

    @classmethod
    def build(cls, config: ModelConfig, store: Store) -> Any: ...


@dataclass(frozen=True)
class Adapter:
    name: str
    cls: type
    benchmarks: frozenset[str] | None  # None: every benchmark (a model that reads the prompt)
    reference: bool
    builtin: bool
    concurrent: bool

    def identity(self, config: ModelConfig) -> dict[str, Any]:
        return dict(self.cls.identity_of(config))  # type: ignore[attr-defined]

    def problems(self, config: ModelConfig) -> list[tuple[str, str]]:
        check = getattr(self.cls, "config_problems", None)
        found = list(check(config)) if check is not None else []
        if config.cache_scope is not None and not self.concurrent:
            found.append(("cache_scope", f"cache_scope applies to endpoint adapters, not {self.name!r}"))
        return found

    def build(self, config: ModelConfig, store: Store) -> Any:
        return self.cls.build(config, store)  # type: ignore[attr-defined]


_ADAPTERS: dict[str, Adapter] = {}
T = TypeVar("T", bound=type)


def adapter(
    name: str,
    *,
    benchmarks: tuple[str, ...] | None = None,
    reference: bool = False,
    builtin: bool = True,
    concurrent: bool = False,
) -> Callable[[T], T]:
    """Class decorator: register an adapter under ``name`` with its capabilities. ``benchmarks``
    names those it answers (a solver's); None, every benchmark a task registers (a model
    behind an endpoint reads any prompt). The names are checked against the registered tasks
    when a plan is made (this layer knows no benchmark)."""

    def deco(cls: T) -> T:
        entry = Adapter(name, cls, None if benchmarks is None else frozenset(benchmarks), reference, builtin, concurrent)
        old = _ADAPTERS.get(name)
        if old is not None and old.cls.__qualname__ != cls.__qualname__:
            raise ValueError(f"adapter {name!r} is already registered by {old.cls.__module__}")
        _ADAPTERS[name] = entry
        return cls

    return deco


class AdapterBase:
    """The plumbing every adapter class shares: built from its configuration alone (override
    :meth:`build` to take the store), its instance's identity is the class's ``identity_of``."""

    config: ModelConfig

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    @classmethod
    def identity_of(cls, config: ModelConfig) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def build(cls, config: ModelConfig, store: Store) -> Any:
        return cls(config)

    def identity(self) -> dict[str, Any]:
        return self.identity_of(self.config)


def registered() -> dict[str, Adapter]:
    return dict(_ADAPTERS)
