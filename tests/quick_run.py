"""A quick real run for the release and verify tests of the fast suite: the pipeline's own
jobs (set, query, score, aggregate) called in-process on two tiny documents, with the oracle
and an ``openai``-adapter model asking ``shredfold serve --model oracle`` on loopback, whose
fault schedule fails some items for ever (HTTP 500). No Snakemake (the slow tests drive that
path): built once per session (a file lock lets parallel workers share it), never changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from tests.conftest import Loopback

DOCS = [
    {"id": "tide", "domain": "news_en", "text": "# Harbor Tides\n\nHarbor cranes lifted record cargo on Monday while gulls circled the piers."},
    {"id": "gulls", "domain": "news_en", "text": "Gulls counted\n\nThe western piers held more gulls than the eastern ones, again."},
    {"id": "rain", "domain": "table", "text": "<table><thead><tr><th>City</th><th>Rain</th></tr></thead><tbody><tr><td>Oslo</td><td>12</td></tr></tbody></table>"},
]

SPEC = """\
name: quick
seed: 3
shred:
  domains: [news_en, table]
  granularities: [1, 2]
  documents_per_domain: 1
  corpus:
    jsonl: corpus.jsonl
  render:
    width: 400
    margin: 16
    prose_font_size: 14
    table_font_size: 14
models:
  - oracle
  - flaky
"""
FLAKY_MODEL = "flaky"


@dataclass(frozen=True)
class QuickRun:
    workdir: Path
    spec: Path
    failing: int  # items of the flaky model that failed (HTTP 500 on every attempt)
    items: int  # items of all cells

    @property
    def results(self) -> Path:
        return self.workdir / "results"


def _model_file(url: str) -> dict[str, object]:
    return {
        "id": FLAKY_MODEL, "adapter": "openai", "base_url": url, "model": "oracle",
        "cache_scope": "quick-oracle", "api_key_env": None, "timeout_s": 60.0, "max_attempts": 2,
        "backoff_s": 0.0, "price_input_per_mtok": 1.0, "price_output_per_mtok": 2.0,
        "images": {"max_side": 8192},
    }  # fmt: skip


def _faults(workdir: Path, spec: Path) -> str:
    """A schedule under which some, not all, of the flaky model's requests fail for ever:
    rules are picked by body hash, so rotate them until the split is mixed."""
    from shredfold.models.openai_compat import OpenAICompatible
    from shredfold.plan import make_plan
    from shredfold.resolve import load_spec
    from shredfold.serve import FaultPlan
    from shredfold.store import Store, sha256_bytes
    from shredfold.tasks.base import JobContext
    from shredfold.tasks.shredbench.task import shred_request

    plan = make_plan(load_spec(spec))
    store = Store(workdir / "results" / "store")
    hashes = []
    for cell in plan.cells:
        if cell.model.id == FLAKY_MODEL:
            adapter = OpenAICompatible(cell.model)
            for item in cell.item_set.items:
                body = adapter.body(shred_request(cell, item, JobContext(plan.spec, store)))
                hashes.append(sha256_bytes(json.dumps(body, ensure_ascii=False).encode("utf-8")))
    rules = ["500*", "ok"]
    while True:
        for shift in range(len(rules)):
            schedule = "|".join(rules[shift:] + rules[:shift])
            failing = sum(FaultPlan.parse(schedule).fault(h, 99) == "500" for h in hashes)
            if 0 < failing < len(hashes):
                return schedule
        rules.append("ok")


def build(workdir: Path, loopback: Loopback) -> QuickRun:
    from shredfold.aggregate import Grid, write_tables
    from shredfold.plan import make_plan
    from shredfold.resolve import load_spec
    from shredfold.stages.build import run_set
    from shredfold.stages.query import run_query
    from shredfold.stages.score import run_score
    from shredfold.store import Store

    (workdir / "models").mkdir(parents=True, exist_ok=True)
    (workdir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    spec = workdir / "spec.yaml"
    spec.write_text(SPEC)
    model_file = workdir / "models" / f"{FLAKY_MODEL}.yaml"
    model_file.write_text(yaml.safe_dump(_model_file("http://127.0.0.1:9/v1"), sort_keys=False))
    store = Store(workdir / "results" / "store")
    plan = make_plan(load_spec(spec))
    for s in plan.item_sets.values():
        run_set(plan, s.key, str(workdir / s.path), store)

    server = loopback("oracle", results=workdir / "results", faults=_faults(workdir, spec), log_path=None)
    model_file.write_text(yaml.safe_dump(_model_file(server.url), sort_keys=False))
    plan = make_plan(load_spec(spec))
    failing = items = 0
    for cell in plan.cells:
        counts = run_query(plan, cell.query_key, cell.query_where, str(workdir / cell.query_path), store)
        failing += counts["errors"]
        items += len(cell.item_set.items)
        run_score(plan, cell.score_key, cell.score_where, str(workdir / cell.query_path),
                  str(workdir / cell.score_path), store)  # fmt: skip
    results = workdir / "results"
    write_tables([str(workdir / c.score_path) for c in plan.cells], Grid.of(plan), str(results / "leaderboard.csv"),
                 [str(results / "breakdown.csv")], str(results / "pairwise.csv"))  # fmt: skip
    run = QuickRun(workdir, spec, failing, items)
    (workdir / "done.json").write_text(json.dumps({"failing": failing, "items": items}))
    return run


def load(workdir: Path) -> QuickRun:
    done = json.loads((workdir / "done.json").read_text())
    return QuickRun(workdir, workdir / "spec.yaml", done["failing"], done["items"])
