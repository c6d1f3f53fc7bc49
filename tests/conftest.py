from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"reference data not found at {SHARED} (../shared beside the project)")
    return SHARED


@pytest.fixture(scope="session")
def small_run(tmp_path_factory, request):
    """The shared small run (:mod:`tests.e2e.small_run`); read it, never change it."""
    from filelock import FileLock

    from tests.e2e.small_run import SmallRun, build

    base = tmp_path_factory.getbasetemp()
    # Under pytest-xdist every worker has its own basetemp inside the session's one.
    shared = base.parent if hasattr(request.config, "workerinput") else base
    folder = shared / "small-run"
    with FileLock(str(shared / "small-run.lock")):
        if not (folder / "results" / "report.html").is_file():
            return build(folder)
    return SmallRun(folder, folder / "spec.yaml")


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory, request):
    """The shared quick in-process run (:mod:`tests.quick_run`): read it, never change it."""
    from filelock import FileLock

    from tests.quick_run import build, load

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if hasattr(request.config, "workerinput") else base
    folder = shared / "quick-run"
    with FileLock(str(shared / "quick-run.lock")):
        if not (folder / "done.json").is_file():
            return build(folder)
    return load(folder)
