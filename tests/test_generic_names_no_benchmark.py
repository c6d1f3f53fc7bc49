"""The generic code names no benchmark: the modules that plan, run, score, price, report,
release and verify every benchmark hold no literal naming a registered benchmark or task
(the spec's sections included) and import none of a benchmark's own modules; they reach a
benchmark through the registry's declarations (:mod:`shredfold.tasks.benchmark`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from shredfold.tasks.registry import benchmarks, tasks

SRC = Path(__file__).resolve().parents[1] / "src" / "shredfold"
GENERIC = (
    "aggregate.py", "cost.py", "plan.py", "release.py", "verify.py", "status.py",
    "report/build.py", "stages/build.py", "stages/query.py", "stages/score.py", "stages/resources.py",
    "spec/base.py", "spec/model.py", "spec/reading.py", "spec/root.py",
    "tasks/base.py", "tasks/benchmark.py", "tasks/manifest.py", "tasks/metric.py", "tasks/registry.py",
    "models/adapter.py", "models/registry.py", "resolve.py", "chat_api.py", "cli.py", "errors.py", "argtypes.py", "serve/models.py", "serve/server.py", "serve/templates.py",
)  # fmt: skip
# A benchmark's own modules: its package, its tasks, its prompts and its building blocks.
OWN = ("shredfold.shred", "shredfold.origami", "shredfold.origami_bench",
       "shredfold.tasks.shredbench", "shredfold.tasks.origamibench", "shredfold.spec.shred", "shredfold.spec.origami")  # fmt: skip


def named(source: str, names: set[str]) -> list[str]:
    """Where ``source`` names one of ``names``: a string literal equal to it, an attribute of
    that name (``spec.spec.shred``), or an import of a benchmark's own module."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            out.append(f"line {node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Attribute) and node.attr in names:
            out.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(OWN):
            out.append(f"line {node.lineno}: from {node.module}")
        elif isinstance(node, ast.Import):
            out += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.startswith(OWN)]
    return out


def registered_names() -> set[str]:
    return {b.name for b in benchmarks()} | {t.name for t in tasks()}


@pytest.mark.parametrize("module", GENERIC)
def test_a_generic_module_names_no_benchmark(module: str) -> None:
    found = named((SRC / module).read_text(encoding="utf-8"), registered_names())
    assert not found, f"{module} names a benchmark: {', '.join(found)}"


def test_the_check_sees_a_benchmark_named() -> None:
    names = registered_names()
    assert {"shred", "origami", "origami_mcq", "origami_fullstep"} <= names
    assert named('if cell.task == "shred":\n    pass\n', names) == ["line 1: 'shred'"]
    assert named("x = plan.spec.spec.origami\n", names) == ["line 1: .origami"]
    assert named("from shredfold.shred.prompts import build_request\n", names) == [
        "line 1: from shredfold.shred.prompts"
    ]
    assert named('"""The shred benchmark, in prose, is fine."""\n', names) == []
