"""A work folder over the shared test samples, and oracle servers on loopback to ask."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from shredfold.plan import Plan
from shredfold.serve import ChatServer
from shredfold.stages.query import run_query
from shredfold.store import Store
from tests.models.samples import new_workdir, shared_samples

if TYPE_CHECKING:
    from tests.conftest import Loopback


@pytest.fixture
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_samples(tmp_path_factory)


@pytest.fixture
def work(samples: Path, tmp_path: Path) -> Path:
    return new_workdir(samples, tmp_path / "work")


@pytest.fixture
def oracle(work: Path, loopback: Loopback) -> Callable[..., ChatServer]:
    """Starts ``shredfold serve --model oracle`` servers (keyword arguments go to ``serve``),
    each logging to its own file in ``work``; all are shut down after the test."""

    def start(**kwargs: object) -> ChatServer:
        log = work / f"server-{len(loopback.started)}.jsonl"
        return loopback("oracle", results=work / "results", log_path=log, **kwargs)

    return start


def query_all(plan: Plan, work: Path) -> list[dict]:
    """Runs every cell's query job of ``plan`` in ``work`` and returns their manifests."""
    store = Store(work / "results" / "store")
    out = []
    for cell in plan.cells:
        path = work / cell.query_path
        run_query(plan, cell.query_key, cell.query_where, str(path), store)
        out.append(json.loads(path.read_text()))
    return out
