"""A work folder over the shared test samples, and oracle servers on loopback to ask."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shredfold.plan import Plan
from shredfold.server import ChatServer, serve
from shredfold.stages.query import run_query
from shredfold.store import Store
from tests.models.samples import new_workdir, shared_samples


@pytest.fixture
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_samples(tmp_path_factory)


@pytest.fixture
def work(samples: Path, tmp_path: Path) -> Path:
    return new_workdir(samples, tmp_path / "work")


@pytest.fixture
def oracle(work: Path) -> Iterator[Callable[..., ChatServer]]:
    """Starts ``shredfold serve --model oracle`` servers (keyword arguments go to ``serve``),
    each logging to its own file in ``work``; all are shut down after the test."""
    servers: list[ChatServer] = []

    def start(**kwargs: object) -> ChatServer:
        log = work / f"server-{len(servers)}.jsonl"
        server = serve("oracle", port=0, results=work / "results", log_path=log, **kwargs)  # type: ignore[arg-type]
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def query_all(plan: Plan, work: Path) -> list[dict]:
    """Runs every cell's query job of ``plan`` in ``work`` and returns their manifests."""
    store = Store(work / "results" / "store")
    out = []
    for cell in plan.cells:
        path = work / cell.query_path
        run_query(plan, cell.query_key, cell.query_where, str(path), store)
        out.append(json.loads(path.read_text()))
    return out
