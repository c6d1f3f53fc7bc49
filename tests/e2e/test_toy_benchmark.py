"""A third benchmark added from this module alone: a package written into a folder on
PYTHONPATH with a ``*.dist-info/entry_points.txt`` (real entry-point discovery, inherited by
every Snakemake job) declares its spec section, one task, its items, a metric (one
``Metric`` declaration), a report section and a model adapter. Planned and run end to end
through the real Snakefile, it is found on the leaderboard, in the report and in a release
that ``shredfold verify`` passes. Nothing outside this module was edited to add it."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.e2e.snake import ROOT, snakemake, write_spec

TOY = '''
"""A toy benchmark: a model is asked to repeat a word; "exact" is 1 when it does."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from shredfold.calls import Message, Request, Response
from shredfold.errors import UserError
from shredfold.models.adapter import AdapterBase, adapter
from shredfold.store import content_key
from shredfold.tasks.base import ItemSet, Layout, Row, Stage, build_each, fill
from shredfold.tasks.benchmark import Benchmark, ReportSection
from shredfold.tasks.manifest import ManifestRow
from shredfold.tasks.metric import ERRORS, ITEMS, Board, Breakdown, Metric, row_type
from shredfold.tasks.registry import register, register_benchmark


class ToySpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    words: list[str]
    limit: int | None = None


class ToyItem(BaseModel):
    key: str
    word: str


class ToyKeys(Row):
    item: str
    doc: str
    model: str
    reference: bool
    benchmark: str


class ToyTail(BaseModel):
    latency_s: float = 0.0
    response: str | None = None
    error: str | None = None


EXACT = Metric.score("exact")
ToyRow = row_type("ToyRow", ToyKeys, (EXACT,), ToyTail, __name__, "A toy row.")
ITEM_STAGE = "toy_items"


def _words(inp: Any) -> dict[str, Any] | None:
    _, rows = inp.rows("SELECT model, item, exact FROM rows WHERE benchmark = 'toy' ORDER BY model, item")
    if not rows:
        return None
    return {"exact": sum(r[2] for r in rows), "total": len(rows)}


def _toy_words(args: Any) -> int:
    from shredfold.resolve import load_spec

    section = load_spec(args.spec).spec.toy
    if section is None:
        raise UserError(f"{args.spec}: the spec has no toy section")
    print(" ".join(section.words))
    return 0


def _commands(sub: Any) -> None:
    sp = sub.add_parser("toy-words", help="the words a spec's toy section repeats")
    sp.add_argument("spec")
    sp.set_defaults(func=_toy_words)


register_benchmark(Benchmark(
    name="toy", title="Toy", section=ToySpec, order=50,
    report=(ReportSection("toy-words", "Toy: words repeated",
                          '<p id="toy-count">{% if section %}{{ section.exact | int }} of {{ section.total }} repeated exactly{% else %}no toy cells{% endif %}</p>',
                          _words),),
    commands=_commands,
))


@register(order=50)
class ToyTask:
    name = "toy_repeat"
    benchmark = "toy"
    layout = Layout(set="toy", query="toy/{model}", score="toy/{model}", name="toy {model}")
    item_type = ToyItem
    row_type = ToyRow
    query_stage = Stage("toy_query", 1)
    score_stage = Stage("toy_score", 1)
    board = Board((ITEMS, ERRORS, EXACT), prefix="toy_")
    breakdown = Breakdown("breakdown_toy.csv", ("benchmark",), (EXACT,), lead=(ITEMS,))
    headlines = ()

    def item_sets(self, ctx):
        section = ctx.spec.spec.toy
        if section is None:
            return []
        items = tuple(ToyItem(key=content_key(ITEM_STAGE, 1, {"word": w}), word=w) for w in section.words)
        key = content_key("toy_set", 1, {}, [i.key for i in items])
        return [ItemSet(self.name, key, {}, items, fill(self.layout.set, {}))]

    def query_params(self, spec):
        return {}

    def score_params(self, spec):
        return {}

    def build(self, item_set, job):
        def make(item, tmp):
            (tmp / "item.json").write_text(json.dumps({"word": item.word}))

        return build_each(item_set.items, ITEM_STAGE, job.store, make)

    def ask(self, cell, asker, job):
        rows = []
        for item in cell.item_set.items:
            word = job.store.get_json(ITEM_STAGE, item.key, "item.json")["word"]
            request = Request(template="toy/v1", messages=(Message(role="user", text=f"repeat: {word}"),), item=item.key)
            answer = asker.ask(request)
            rows.append(ManifestRow(item=item.key, error=None, **answer.meta))
        return rows

    def score(self, cell, answers, job):
        from shredfold.models.envelope import load_response

        rows = []
        for item in cell.item_set.items:
            q = answers.get(item.key) or ManifestRow.not_run(item.key)
            text = load_response(job.store, q.response).text if q.answered and q.response else ""
            rows.append(ToyRow(item=item.key, doc=item.word, model=cell.model.id, reference=cell.model.reference,
                               benchmark=self.benchmark, exact=float(text == item.word), response=q.response,
                               error=q.error))
        return rows

    def response_keys(self, cell, answers, store):
        return [q.response for q in answers.values() if q.answered and q.response]

    def signatures(self, spec, item_sets):
        return {"toy_exact": "exact/v1"}


@adapter("toy-parrot", benchmarks=("toy",))
class Parrot(AdapterBase):
    """Repeats the word, except a word with an "x" in it, which it cannot say."""

    @classmethod
    def identity_of(cls, config):
        return {"adapter": "toy-parrot", "version": 1}

    def complete(self, request: Request) -> Response:
        word = request.messages[-1].text.removeprefix("repeat: ")
        return Response(text="?" if "x" in word else word)
'''

ENTRY_POINTS = """\
[shredfold.tasks]
toy = toy_bench

[shredfold.adapters]
toy = toy_bench
"""


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "shredfold", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)  # fmt: skip
    assert proc.returncode == 0, f"shredfold {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_a_toy_benchmark_from_one_module_runs_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = tmp_path / "plugin"
    (plugin / "toy_bench-1.0.dist-info").mkdir(parents=True)
    (plugin / "toy_bench.py").write_text(textwrap.dedent(TOY))
    (plugin / "toy_bench-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-bench\nVersion: 1.0\n")
    (plugin / "toy_bench-1.0.dist-info" / "entry_points.txt").write_text(ENTRY_POINTS)
    path = os.pathsep.join(p for p in (str(plugin), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p)
    monkeypatch.setenv("PYTHONPATH", path)  # every subprocess (and Snakemake job) finds the plugin

    work = tmp_path / "work"
    work.mkdir()
    spec = write_spec(work, """\
        name: toy-run
        seed: 1
        toy:
          words: [paper, fox, shred, box, fold, pixel]
        models: [toy-parrot]
        """)
    snakemake(work, spec, "results/leaderboard.csv", "results/report.html")

    # the toy metric's column on the leaderboard: 3 of 6 words have no "x"
    board = list(csv.DictReader((work / "results" / "leaderboard.csv").read_text().splitlines()))
    (row,) = board
    assert row["model"] == "toy-parrot"
    assert (float(row["toy_exact"]), int(row["toy_items"])) == (0.5, 6)

    # its section in the report
    report = (work / "results" / "report.html").read_text()
    assert '<section id="toy-words">' in report and "3 of 6 repeated exactly" in report

    # its cell in a release, and verify passes on it
    out = tmp_path / "release"
    _run("release", "--spec", str(spec), "--results", str(work / "results"), "--out", str(out), cwd=work)
    released = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert any("toy" in p for p in released), released
    verified = _run("verify", str(out), cwd=work)
    assert ": verified (" in verified.stdout, verified.stdout

    # its own command, beside shredfold's; a problem the user can fix is one line, exit 2
    assert _run("toy-words", str(spec), cwd=work).stdout.split() == ["paper", "fox", "shred", "box", "fold", "pixel"]
    other = write_spec(work, "name: other\nmodels: [toy-parrot]\n", "other.yaml")
    proc = subprocess.run([sys.executable, "-m", "shredfold", "toy-words", str(other)], capture_output=True, text=True, cwd=work)
    assert proc.returncode == 2 and proc.stderr.strip() == f"error: {other}: the spec has no toy section", proc.stderr

    # an unknown section is refused in one line naming it
    bad = write_spec(work, "name: bad\ntoys:\n  words: [a]\nmodels: [toy-parrot]\n", "bad.yaml")
    proc = subprocess.run([sys.executable, "-m", "shredfold", "plan", str(bad)], capture_output=True, text=True, cwd=work)
    assert proc.returncode != 0 and "unknown section 'toys'" in proc.stderr and "toy" in proc.stderr, proc.stderr
