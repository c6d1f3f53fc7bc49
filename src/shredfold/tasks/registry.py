"""The task registry: every task module under :mod:`shredfold.tasks` registers its task.

Adding a task is adding one module (and its tests): the plan, the stages, the rules and the
aggregator find it here.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TypeVar

from shredfold.tasks.base import Task
from shredfold.tasks.metric import check

_TASKS: dict[str, Task] = {}
_LOADED = False
_NOT_TASKS = frozenset({"base", "registry", "metric"})
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


def _load() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import shredfold.tasks as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name not in _NOT_TASKS:
            importlib.import_module(f"{pkg.__name__}.{info.name}")


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
