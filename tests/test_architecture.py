"""The import contracts of the whole package (``[tool.importlinter]`` in pyproject.toml),
checked by import-linter: no cycles anywhere, the origami engine stands alone, layers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(src: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        capture_output=True, text=True, env=env, timeout=300, cwd=ROOT,
    )


@pytest.fixture
def copy_of_src(tmp_path: Path) -> Path:
    dest = tmp_path / "src"
    shutil.copytree(ROOT / "src", dest, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dest


def test_the_package_keeps_its_import_contracts() -> None:
    out = lint(ROOT / "src")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 kept, 0 broken" in out.stdout


# The contract names no module of the harness: any import of shredfold outside the engine
# breaks it, a light value module (versions) as much as the spec.
@pytest.mark.parametrize(("line", "imported"), [
    ("from shredfold.spec import ModelConfig", "shredfold.spec"),
    ("from shredfold import versions", "shredfold.versions"),
])  # fmt: skip
def test_the_engine_importing_the_harness_breaks_a_contract(copy_of_src: Path, line: str, imported: str) -> None:
    local = copy_of_src / "shredfold" / "origami" / "local.py"
    local.write_text(local.read_text() + f"\n{line}  # noqa\n")
    out = lint(copy_of_src)
    assert out.returncode != 0
    assert "The origami engine stands alone BROKEN" in out.stdout
    assert f"shredfold.origami.local -> {imported}" in out.stdout


def test_a_cycle_breaks_a_contract(copy_of_src: Path) -> None:
    store = copy_of_src / "shredfold" / "store.py"
    store.write_text(store.read_text() + "\n\ndef _plan():\n    from shredfold import plan  # noqa\n    return plan\n")
    out = lint(copy_of_src)
    assert out.returncode != 0
    assert "BROKEN" in out.stdout and "shredfold.store -> shredfold.plan" in out.stdout
