"""One tiny spec exported once per test session (a file lock lets parallel workers share it):
two documents (prose and a table) at N = 1 and 3, and OrigamiBench's three tasks on four
procedural designs at 64 px. Tests read it and never change it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from shredfold.cli import main

DOCS = [
    {"id": "tide", "domain": "news_en", "text": "# Harbor Tides\n\nHarbor cranes lifted record cargo on Monday while gulls circled above the western piers. Engineers measured every tide gauge before dawn."},
    {"id": "rain", "domain": "table", "text": "<table><thead><tr><th>City</th><th>Rain</th></tr></thead><tbody><tr><td>Oslo</td><td>12</td></tr><tr><td>Lima</td><td>3</td></tr></tbody></table>"},
]

SPEC = """\
name: tiny
description: Two tiny documents and a small OrigamiBench, exported for the tests.
seed: 2
shred:
  domains: [news_en, table]
  granularities: [1, 3]
  documents_per_domain: 1
  corpus:
    jsonl: corpus.jsonl
  render:
    width: 480
    margin: 24
    prose_font_size: 16
    table_font_size: 15
origami:
  designs:
    builtin: false
    procedural: 4
    procedural_folds: [2, 2]
  tasks: [mcq_assoc, mcq_causal, fullstep]
  mcq_items: 3
  step_limit: 2
  fullstep_targets: 2
  image_size: 64
models:
  - oracle
  - origami-random
"""


@dataclass(frozen=True)
class TinyExport:
    workdir: Path

    @property
    def spec(self) -> Path:
        return self.workdir / "spec.yaml"

    @property
    def results(self) -> Path:
        return self.workdir / "results"

    @property
    def out(self) -> Path:
        return self.workdir / "export"


def write_inputs(workdir: Path) -> Path:
    """The spec and its corpus in ``workdir``; returns the spec's path."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    (workdir / "spec.yaml").write_text(SPEC)
    return workdir / "spec.yaml"


def build(workdir: Path) -> TinyExport:
    """Export the spec into a fresh results folder: every item is built by the export."""
    tiny = TinyExport(workdir)
    write_inputs(workdir)
    rc = main(["export", str(tiny.out), "--spec", str(tiny.spec), "--results", str(tiny.results)])
    assert rc == 0
    return tiny


@pytest.fixture(scope="session")
def tiny_export(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> TinyExport:
    from tests.conftest import session_folder

    with session_folder(tmp_path_factory, request, "tiny-export") as folder:
        if not (folder / "export" / "shredfold.json").is_file():
            return build(folder)
    return TinyExport(folder)
