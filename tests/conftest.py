from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from shredfold.serve import ChatServer

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
S = TypeVar("S", bound=socketserver.BaseServer)


class Loopback:
    """Servers on free loopback ports, each answering from a thread of this process, all shut
    down on :meth:`close`. Calling it starts ``shredfold serve``'s server; :meth:`run` serves
    any other server (a folder of files, a hand-written HTTP peer)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started: list[socketserver.BaseServer] = []

    def __call__(self, model: str = "echo", **kwargs: Any) -> ChatServer:
        """``shredfold serve --model MODEL --port 0``; keyword arguments go to ``serve``, and
        each server logs its requests to a file of its own in ``folder`` unless told."""
        from shredfold.serve import serve

        kwargs.setdefault("log_path", self.folder / f"requests-{len(self.started)}.jsonl")
        return self.run(serve(model, port=0, **kwargs))

    def run(self, server: S) -> S:
        # A short poll, so that shutdown() at the end returns at once.
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        self.started.append(server)
        return server

    def close(self) -> None:
        while self.started:
            server = self.started.pop()
            server.shutdown()
            server.server_close()

    def __enter__(self) -> Loopback:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@pytest.fixture
def loopback(tmp_path: Path) -> Iterator[Loopback]:
    """Start servers on loopback for this test (see :class:`Loopback`)."""
    with Loopback(tmp_path) as servers:
        yield servers


@pytest.fixture
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"reference data not found at {SHARED} (../shared beside the project)")
    return SHARED


@contextmanager
def session_folder(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, name: str
) -> Iterator[Path]:
    """A folder the whole session shares (every pytest-xdist worker too), held under a file
    lock while the caller builds it or finds it built."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    # Under pytest-xdist every worker has its own basetemp inside the session's one.
    shared = base.parent if hasattr(request.config, "workerinput") else base
    with FileLock(str(shared / f"{name}.lock")):
        yield shared / name


@pytest.fixture(scope="session")
def small_run(tmp_path_factory, request):
    """The shared small run (:mod:`tests.e2e.small_run`); read it, never change it."""
    from tests.e2e.small_run import SmallRun, build

    with session_folder(tmp_path_factory, request, "small-run") as folder:
        if not (folder / "results" / "report.html").is_file():
            return build(folder)
    return SmallRun(folder, folder / "spec.yaml")


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory, request):
    """The shared quick in-process run (:mod:`tests.quick_run`): read it, never change it."""
    from tests.quick_run import build, load

    with session_folder(tmp_path_factory, request, "quick-run") as folder:
        if not (folder / "done.json").is_file():
            with Loopback(folder) as servers:
                return build(folder, servers)
    return load(folder)
