"""Packages outside shredfold that add to it, found through entry-point groups.

An outside package names a module in a group (``shredfold.adapters`` for model adapters,
``shredfold.tasks`` for benchmarks and their tasks); importing that module registers what it
holds. Every process that needs a registry loads its group here (the plan and each
Snakemake job alike), once.
"""

from __future__ import annotations

import threading
from importlib import metadata

ADAPTERS = "shredfold.adapters"
BENCHMARKS = "shredfold.tasks"

_LOADED: set[str] = set()
_LOADING = threading.RLock()  # a server's threads: none may see a group half loaded


def load(group: str) -> None:
    """Import every module the installed packages name in ``group`` (once per process)."""
    with _LOADING:
        if group in _LOADED:
            return
        _LOADED.add(group)  # first: a module of the group may load the group again
        for ep in metadata.entry_points(group=group):
            ep.load()
