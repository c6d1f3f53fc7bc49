"""The task and benchmark registry: every module under :mod:`shredfold.tasks` registers its
task(s) or its benchmark, and so does every module an installed package names in the
``shredfold.tasks`` entry-point group (:mod:`shredfold.plugins`).

Adding a task is adding one module to its benchmark's package (and its tests); adding a
benchmark is adding one package (its :class:`~shredfold.tasks.benchmark.Benchmark`, which
imports its tasks). The plan, the stages, the
rules, the aggregator, the bill, the report and a release find them here.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from typing import TypeVar

from shredfold import plugins
from shredfold.spec import register_section
from shredfold.tasks.base import Task
from shredfold.tasks.benchmark import Benchmark
from shredfold.tasks.metric import check

_TASKS: dict[str, Task] = {}
_BENCHMARKS: dict[str, Benchmark] = {}
_LOADED = False
_LOADING = threading.RLock()
_NOT_TASKS = frozenset({"base", "benchmark", "registry", "manifest", "metric"})
T = TypeVar("T")


def register(order: int):  # noqa: ANN201 - a class decorator
    """Class decorator: instantiate and register a task; ``order`` sets its place in plans
    and on the leaderboard (lower first). Its metric declarations are checked here (a
    headline naming no metric of its leaderboard stops the import: :func:`metric.check`)."""

    def deco(cls: type[T]) -> type[T]:
        task = cls()
        check(task)
        task.order = order  # type: ignore[attr-defined]
        old = _TASKS.get(task.name)  # type: ignore[attr-defined]
        if old is not None and type(old).__qualname__ != cls.__qualname__:
            raise ValueError(f"task {task.name!r} is already registered")  # type: ignore[attr-defined]
        _TASKS[task.name] = task  # type: ignore[attr-defined]
        return cls

    return deco


def register_benchmark(benchmark: Benchmark) -> Benchmark:
    """Register a benchmark and its spec section (the same declaration again is a no-op)."""
    old = _BENCHMARKS.get(benchmark.name)
    if old is not None and old != benchmark:
        raise ValueError(f"benchmark {benchmark.name!r} is already registered")
    register_section(benchmark.name, benchmark.section, benchmark.order)
    _BENCHMARKS[benchmark.name] = benchmark
    return benchmark


def _load() -> None:
    global _LOADED
    # ``shredfold serve`` asks from many threads: none may see the registry half loaded. The
    # flag is set first because a module being loaded may ask the registry again (re-entrant).
    with _LOADING:
        if _LOADED:
            return
        _LOADED = True
        import shredfold.tasks as pkg

        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name not in _NOT_TASKS:
                importlib.import_module(f"{pkg.__name__}.{info.name}")
        plugins.load(plugins.BENCHMARKS)
    orphans = sorted(f"{t.name} ({t.benchmark})" for t in _TASKS.values() if t.benchmark not in _BENCHMARKS)
    if orphans:
        raise ValueError(f"tasks of no registered benchmark: {', '.join(orphans)}")


def benchmarks() -> list[Benchmark]:
    """Every registered benchmark, in order."""
    _load()
    return sorted(_BENCHMARKS.values(), key=lambda b: (b.order, b.name))


def benchmark(name: str) -> Benchmark:
    _load()
    try:
        return _BENCHMARKS[name]
    except KeyError:
        raise KeyError(f"unknown benchmark {name!r}; known: {', '.join(sorted(_BENCHMARKS))}") from None


def tasks() -> list[Task]:
    """Every registered task, in plan order."""
    _load()
    return sorted(_TASKS.values(), key=lambda t: (t.order, t.name))  # type: ignore[attr-defined]


def get(name: str) -> Task:
    _load()
    try:
        return _TASKS[name]
    except KeyError:
        raise KeyError(f"unknown task {name!r}; known: {', '.join(sorted(_TASKS))}") from None
