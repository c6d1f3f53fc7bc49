"""Running the pipeline as a user does, end to end: progress read from a running job's log
and from `shredfold status` mid-run, a quick run (`--config limit=3`) that a full run then
completes without asking any answer twice, `--cores 32` within a memory bound, and a job
killed for memory named as such. Real Snakemake, a real `shredfold serve` on loopback
(slowed down with --delay) and the `openai` adapter."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
import yaml

from shredfold import paths
from shredfold.plan import make_plan, with_limit
from shredfold.progress import read_state
from shredfold.report.build import build_report
from shredfold.resolve import load_spec
from shredfold.serve import answered_twice, read_log
from shredfold.stages import resources as res
from tests.e2e.snake import ROOT, served
from tests.models.samples import http_model

pytestmark = pytest.mark.slow

DOCS = 5
SPEC = f"""\
name: ux
shred:
  domains: [news_en]
  granularities: [1]
  documents_per_domain: {DOCS}
  render: {{width: 480, margin: 24, prose_font_size: 16}}
models: [{{models}}]
"""


def workdir(tmp_path: Path, models: str, **model: object) -> tuple[Path, Path]:
    work = tmp_path / "work"
    (work / "specs" / "models").mkdir(parents=True)
    if model:
        fields = {"id": "oracle-http", **http_model("http://127.0.0.1:9/v1", max_concurrency=1), **model}
        (work / "specs" / "models" / "oracle-http.yaml").write_text(yaml.safe_dump(fields))
    spec = work / "specs" / "spec.yaml"
    spec.write_text(SPEC.replace("{models}", models))
    return work, spec


def snakemake(work: Path, spec: Path, *args: str, cores: int = 2, config: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(work),
            "--cores", str(cores), "results/leaderboard.csv", *args, "--config", f"spec={spec}", *config]  # fmt: skip


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "SHREDFOLD_PROGRESS_S": "0.2", **extra}


def status(work: Path, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "shredfold", "status", str(work / "results"), *args],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout


def leaderboard(work: Path) -> list[dict[str, str]]:
    with open(work / "results" / "leaderboard.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def wait_for(what, timeout: float = 600, every: float = 0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def test_progress_mid_run_then_a_quick_run_that_the_full_run_reuses(tmp_path: Path) -> None:
    work, spec = workdir(tmp_path, "oracle-http", budget_usd=5.0)
    quick = next(c for c in make_plan(with_limit(load_spec(spec), 3)).cells)
    log = work / paths.cell_log_path("query", quick.query_where, quick.query_key)
    progress_line = re.compile(r"progress query oracle-http/shred/news_en/N1 \(first 3\): (\d)/3 items")

    with served(work, "run1.jsonl", "--delay", "4") as (url, log1):
        (work / "specs" / "models" / "oracle-http.yaml").write_text(
            yaml.safe_dump({"id": "oracle-http", **http_model(url, max_concurrency=1), "budget_usd": 5.0}))
        run = subprocess.Popen(snakemake(work, spec, config=("limit=3",)), cwd=work, env=env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        try:
            # mid-run: the job's log says how far it is, and so does `shredfold status`
            def midway() -> int:
                text = log.read_text() if log.is_file() else ""
                done = [int(m.group(1)) for m in progress_line.finditer(text)]
                return next((d for d in done if 0 < d < 3), 0)

            seen = wait_for(midway)
            table = status(work, "--cells")
            out = run.communicate(timeout=600)[0]
        finally:
            run.kill()
    assert run.returncode == 0, out
    assert 1 <= seen <= 2
    model_row = next(line.split() for line in table.splitlines() if line.startswith("oracle-http "))
    # cells, done, running, pending, failed, answered, errors, spent ("$x of $5.00")
    assert model_row[1:5] == ["1", "0", "1", "0"], table
    answered = int(model_row[6].split("/")[0])
    assert model_row[6].endswith("/3") and seen <= answered < 3, table
    assert " ".join(model_row[8:]).endswith("of $5.00"), table
    assert "a quick run: shred: first 3 items per cell" in table
    assert re.search(r"oracle-http/shred/news_en/N1 \(first 3\)\s+running\s+query", table), table
    # the end: the log's last line, the status table and the leaderboard agree
    final = [m for m in progress_line.finditer(log.read_text())][-1]
    assert final.group(1) == "3" and "3/3 items (100.0%), 0 errors, 0 cached" in log.read_text()
    done = status(work)
    row = next(line.split() for line in done.splitlines() if line.startswith("oracle-http "))
    assert row[1:8] == ["1", "1", "0", "0", "0", "3/3", "0"], done
    (board,) = leaderboard(work)
    assert board["limited"] == "shred: first 3 items per cell, not the full run" and board["items"] == "3"
    assert len([e for e in read_log(log1) if e["status"] == 200]) == 3
    quick_plan = make_plan(with_limit(load_spec(spec), 3))
    assert 'id="limited"' in build_report(quick_plan, work)  # the report says so at its top

    # the full run asks only the two documents the quick run did not
    with served(work, "run2.jsonl") as (url, log2):
        (work / "specs" / "models" / "oracle-http.yaml").write_text(
            yaml.safe_dump({"id": "oracle-http", **http_model(url, max_concurrency=1), "budget_usd": 5.0}))
        full = subprocess.run(snakemake(work, spec), cwd=work, env=env(), capture_output=True, text=True, timeout=600)
    assert full.returncode == 0, full.stdout + full.stderr
    entries = read_log(log1) + read_log(log2)
    assert answered_twice(entries) == []
    assert len([e for e in read_log(log2) if e["status"] == 200]) == DOCS - 3
    assert len({e["hash"] for e in entries if e["status"] == 200}) == DOCS
    (board,) = leaderboard(work)
    assert "limited" not in board and board["items"] == str(DOCS) and board["errors"] == "0"
    full_plan = make_plan(load_spec(spec))
    assert 'id="limited"' not in build_report(full_plan, work)
    cell = next(c for c in full_plan.cells)
    manifest = json.loads((work / cell.query_path).read_text())
    assert (manifest["cached"], manifest["called"]) == (3, DOCS - 3)
    full_log = (work / paths.cell_log_path("query", cell.query_where, cell.query_key)).read_text()
    assert f"{DOCS}/{DOCS} items (100.0%), 0 errors, 3 cached" in full_log
    # the quick run's tables stay apart from the full run's
    assert (work / quick.score_path).is_file() and "/first-3/" in quick.score_path
    assert not list((work / "results" / "cells" / "score").rglob("*first*"))


def test_a_job_killed_for_memory_is_named_with_its_rule_cell_and_mem_mb(tmp_path: Path) -> None:
    work, spec = workdir(tmp_path, "oracle-http", budget_usd=5.0)
    cell = next(c for c in make_plan(load_spec(spec)).cells)
    state_file = work / paths.progress_path(paths.cell_log_path("query", cell.query_where, cell.query_key))
    with served(work, "run.jsonl", "--delay", "3") as (url, _):
        (work / "specs" / "models" / "oracle-http.yaml").write_text(
            yaml.safe_dump({"id": "oracle-http", **http_model(url, max_concurrency=1)}))
        run = subprocess.Popen(snakemake(work, spec), cwd=work, env=env(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
        try:
            state = wait_for(lambda: read_state(state_file))
            os.kill(int(state["pid"]), signal.SIGKILL)  # as the kernel's OOM killer does
            out = run.communicate(timeout=600)[0]
        finally:
            run.kill()
    assert run.returncode != 0
    declared = res.query_mem_mb(cell, load_spec(spec))
    line = next(x for x in out.splitlines() if x.startswith("shredfold: killed by SIGKILL"))
    assert "out-of-memory" in line and "rule query" in line and "oracle-http/shred/news_en/N1" in line
    assert f"declared mem_mb={declared}" in line and "--set-resources query:mem_mb=" in line
    log = (work / paths.cell_log_path("query", cell.query_where, cell.query_key)).read_text()
    assert log.splitlines()[-1] == line  # and in the job's log
    row = next(x.split() for x in status(work).splitlines() if x.startswith("oracle-http "))
    assert row[1:6] == ["1", "0", "0", "0", "1"]  # the cell's job died: failed, not running


class TreeRss:
    """The summed RSS of the jobs Snakemake runs (its child processes), sampled."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.peak_mb = 0.0
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            try:
                kids = self.root.children(recursive=True)
            except psutil.Error:
                return
            total, jobs = 0, 0
            for k in kids:
                try:
                    total += k.memory_info().rss
                    jobs += "job" in k.cmdline()[3:5]
                except psutil.Error:
                    continue
            self.peak_mb = max(self.peak_mb, total / 2**20)
            self.most = max(self.most, jobs)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def test_cores_32_stays_within_the_memory_bound(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    spec = work / "spec.yaml"
    spec.write_text(SPEC.replace("{models}", "oracle").replace("[news_en]", "[news_en, table]")
                    .replace("[1]", "[1, 4]").replace(f"documents_per_domain: {DOCS}", "documents_per_domain: 1"))

    # the plain command (here for one item set) bounds the jobs by what the machine has free
    first = next(iter(make_plan(load_spec(spec)).item_sets.values()))
    plain = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(work), "--cores", "32",
             first.path, "--config", f"spec={spec}"]  # fmt: skip
    one = subprocess.run(plain, cwd=work, capture_output=True, text=True, timeout=600)
    assert one.returncode == 0, one.stdout + one.stderr
    bound = re.search(r'Provided resources: .*mem_mb=Resource\("mem_mb", (\d+)\)', one.stdout + one.stderr)
    assert bound, one.stdout + one.stderr
    assert 512 <= int(bound.group(1)) <= psutil.virtual_memory().total / 2**20

    limit = 900
    run = subprocess.Popen(snakemake(work, spec, "--resources", f"mem_mb={limit}", cores=32), cwd=work,
                           env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    tree = TreeRss(run.pid)
    out = run.communicate(timeout=900)[0]
    tree.stop()
    assert run.returncode == 0, out
    # Snakemake's own count: the declared mem_mb of the jobs running at once stayed in bounds
    spans = []
    for f in (work / "results" / "logs").rglob("*.progress.json"):
        s = json.loads(f.read_text())
        declared = int(re.search(r"of mem_mb (\d+) declared", f.with_name(f.name.replace(".progress.json", ".log")).read_text()).group(1))
        spans.append((s["started"], s["updated"], declared))
    assert len(spans) == 2 * 2 * 3  # sets, queries, scores (one set came from the plain run)
    most = max(sum(d for a, b, d in spans if a <= t < b) for t, _, _ in spans)
    assert most <= limit
    assert tree.most >= 2  # jobs did run side by side: the bound was not met by running one at a time
    # what the jobs really held together, measured, stayed within the bound too
    assert 0 < tree.peak_mb <= limit, (tree.peak_mb, tree.most)
