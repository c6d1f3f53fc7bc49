from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shredfold.server import ChatServer, serve


@pytest.fixture
def loopback(tmp_path: Path) -> Iterator[Callable[..., ChatServer]]:
    """Start `shredfold serve`'s server on a free loopback port, in a thread of this process."""
    started: list[ChatServer] = []

    def start(model: str = "echo", **kwargs: object) -> ChatServer:
        kwargs.setdefault("log_path", tmp_path / f"requests-{len(started)}.jsonl")
        server = serve(model, port=0, **kwargs)  # type: ignore[arg-type]
        # A short poll, so that shutdown() at teardown returns at once.
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.shutdown()
        server.server_close()
