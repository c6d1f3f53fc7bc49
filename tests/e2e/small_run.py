"""One small run of the real pipeline (Snakemake, the store, OCR on tiny pages, origami
agents), shared by the release, verify and report tests: built once per test session (a
file lock lets parallel workers share it) and never changed by a test."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.snake import snakemake, write_spec

DOCS = [
    {"id": "tide", "domain": "news_en", "text": "# Harbor Tides\n\nHarbor cranes lifted record cargo on Monday while gulls circled above the western piers. Engineers measured every tide gauge before dawn."},
    {"id": "fib", "domain": "code_python", "text": "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\nprint(fib(10))\n"},
    {"id": "rain", "domain": "table", "text": "<table><thead><tr><th>City</th><th>Rain</th></tr></thead><tbody><tr><td>Oslo</td><td>12</td></tr><tr><td>Lima</td><td>3</td></tr></tbody></table>"},
]

SPEC = """\
name: small
description: Three tiny documents and a small OrigamiBench, for the tests.
seed: 2
shred:
  domains: [news_en, code_python, table]
  granularities: [1, 3]
  documents_per_domain: 1
  corpus:
    jsonl: corpus.jsonl
  render:
    width: 480
    margin: 24
    prose_font_size: 16
    code_font_size: 14
    table_font_size: 15
origami:
  designs:
    builtin: true
    procedural: 1
    procedural_folds: [2, 2]
  tasks: [mcq_assoc, fullstep]
  mcq_items: 3
  step_limit: 2
  fullstep_targets: 2
  image_size: 64
models:
  - oracle
  - ocr-islands
  - origami-oracle
  - origami-random
"""
MODELS = ("oracle", "ocr-islands", "origami-oracle", "origami-random")


@dataclass(frozen=True)
class SmallRun:
    workdir: Path
    spec: Path

    @property
    def results(self) -> Path:
        return self.workdir / "results"


def build(workdir: Path) -> SmallRun:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    spec = write_spec(workdir, SPEC)
    snakemake(workdir, spec, "results/leaderboard.csv", "results/report.html")
    return SmallRun(workdir, spec)
