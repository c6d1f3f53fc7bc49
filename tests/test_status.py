"""`shredfold status` read from a results folder in every state a run leaves it in."""

import json
import os
import subprocess
import sys

from shredfold import paths
from shredfold.cli import main
from shredfold.models.budget import SpendLedger
from shredfold.plan import make_plan, write_plan
from shredfold.progress import Progress
from shredfold.resolve import load_spec
from shredfold.stages.watch import workdir_of
from shredfold.status import DONE, FAILED, PENDING, RUNNING, cell_status, render, run_status
from shredfold.store import atomic_write_json
from shredfold.tasks.manifest import ManifestRow, QueryManifest, write_manifest

SPEC = """\
name: st
shred:
  domains: [news_en]
  granularities: [1, 8, 16]
  documents_per_domain: 3
models:
  - oracle
  - {id: paid, adapter: openai, base_url: "http://127.0.0.1:9/v1", model: m, price_input_per_mtok: 1.0, budget_usd: 5}
"""


def setup(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    plan = make_plan(load_spec(spec))
    return plan, tmp_path


def manifest(work, cell, errors=0, attempt=0):
    items = [ManifestRow(item=k, error="500" if i < errors else None, cached=i == errors)
             for i, k in enumerate(cell.item_set.item_keys)]  # fmt: skip
    write_manifest(work / cell.at(attempt).query_path, QueryManifest.of(cell, items, requests=errors))


def state(work, cell, stage, **over):
    """A progress state as a job leaves it (running by this very process unless told)."""
    at = cell.at(over.pop("attempt", 0))
    where, key = (at.query_where, at.query_key) if stage == "query" else (at.score_where, at.score_key)
    path = work / paths.progress_path(paths.cell_log_path(stage, where, key, at.attempt))
    with Progress("x", len(cell.item_set.items), state_path=path, quiet=True, interval=60) as p:
        p.advance(over.pop("done", 0))
        p.advance(over.pop("failed", 0), error=True)
        p.snapshot()
    data = json.loads(path.read_text())
    data.update({"state": "running", **over})
    path.write_text(json.dumps(data))


def scored(work, cell):
    """A cell asked and scored, as a finished job leaves it."""
    manifest(work, cell)
    (work / cell.score_path).parent.mkdir(parents=True, exist_ok=True)
    (work / cell.score_path).write_bytes(b"PAR1")


def planned_and_built(tmp_path):
    """A run's plan written and its item sets built, as Snakemake leaves them."""
    plan, work = setup(tmp_path)
    write_plan(plan, work)
    for s in plan.item_sets.values():
        atomic_write_json(work / s.path, {"items": s.item_keys})
    return plan, work


def finish_later(work, cell, *, after_s=0.5):
    """A thread that lets the cell's running job answer, end and be scored while status
    watches (started; join it)."""
    import threading
    import time

    def finish() -> None:
        time.sleep(after_s)
        manifest(work, cell)
        state(work, cell, "query", done=3, state="done")
        scored(work, cell)

    job = threading.Thread(target=finish)
    job.start()
    return job


def test_every_state_of_a_cell(tmp_path):
    plan, work = setup(tmp_path)
    done, answered, running, pending, died, retry = plan.cells[:6]
    manifest(work, done, errors=1)
    (work / done.score_path).parent.mkdir(parents=True, exist_ok=True)
    (work / done.score_path).write_bytes(b"PAR1")
    manifest(work, answered)
    state(work, running, "query", done=2, failed=0)
    state(work, died, "query", done=1, pid=2**22 + 7)  # its process is gone: killed
    manifest(work, retry, errors=2)  # the run after asks again at attempt 1
    state(work, retry, "query", attempt=1, done=1, failed=1)

    d, a, r, p, k, t = (cell_status(c, work) for c in (done, answered, running, pending, died, retry))
    assert (d.state, d.step, d.answered, d.errors, d.cached) == (DONE, "scored", 2, 1, 1)
    assert (a.state, a.step, a.answered) == (PENDING, "answered", 3)
    assert (r.state, r.step, r.answered) == (RUNNING, "query", 2)
    assert (p.state, p.step, p.answered) == (PENDING, "", 0)
    assert k.state == FAILED
    assert (t.state, t.answered, t.errors) == (RUNNING, 1, 1)


def test_one_table_by_model_with_spend_against_budget(tmp_path):
    plan, work = setup(tmp_path)
    oracle = [c for c in plan.cells if c.model.id == "oracle"]
    paid = [c for c in plan.cells if c.model.id == "paid"]
    for c in oracle:
        manifest(work, c)
        (work / c.score_path).parent.mkdir(parents=True, exist_ok=True)
        (work / c.score_path).write_bytes(b"PAR1")
    state(work, paid[0], "query", done=2, failed=1)
    ledger = SpendLedger(work / paths.STORE / ".spend" / "paid.jsonl")
    ticket, _ = ledger.reserve(0.75, 5.0)
    ledger.settle(ticket, 0.5)
    ledger.reserve(0.25, 5.0)  # a call in flight
    with open(ledger.path, "ab") as fh:
        fh.write(b'{"op": "reserve", "id": "torn"')  # a writer mid-line

    status = run_status(plan, work)
    text = render(status, cells=True)
    rows = {line.split()[0]: line.split() for line in text.splitlines()[2:6]}
    assert rows["oracle"][1:9] == ["3", "3", "0", "0", "0", "9/9", "0", "-"]
    assert rows["paid"][1:8] == ["3", "0", "1", "2", "0", "2/9", "1"]
    assert " ".join(rows["paid"][8:]) == "$0.7500 of $5.00"
    assert rows["total"][1:8] == ["6", "3", "1", "2", "0", "11/18", "1"]
    assert "item sets: 0 built, 0 building, 3 pending (of 3)" in text
    assert "paid/shred/news_en/N1" in text and "running" in text
    assert not status.finished


def test_the_command_reads_the_newest_plan_and_watches_until_done(tmp_path, capsys):
    plan, work = planned_and_built(tmp_path)
    for c in plan.cells:
        scored(work, c)
    assert main(["status", str(work / "results"), "--watch", "0.1"]) == 0  # done: stops at once
    out = capsys.readouterr().out
    assert "item sets: 3 built" in out and "18/18" in out
    assert main(["status", str(work)]) == 0  # the working directory works too
    assert "18/18" in capsys.readouterr().out


def test_watch_prints_the_table_again_until_the_last_cell_is_scored(tmp_path, capsys):
    plan, work = planned_and_built(tmp_path)
    last, *rest = plan.cells
    for c in rest:
        scored(work, c)
    state(work, last, "query", done=1)
    job = finish_later(work, last)
    assert main(["status", str(work / "results"), "--watch", "0.1"]) == 0  # returns once done
    job.join()
    tables = [t for t in capsys.readouterr().out.split("\n\n") if "total" in t]
    assert len(tables) >= 3  # printed at each interval, not once
    assert "16/18" in tables[0] and "18/18" in tables[-1]


def test_watch_ends_once_a_job_has_died_and_nothing_runs(tmp_path, capsys):
    plan, work = planned_and_built(tmp_path)
    died, *rest = plan.cells
    for c in rest[:3]:
        scored(work, c)
    state(work, died, "query", done=1, pid=2**22 + 7)  # killed; Snakemake stopped the run
    assert main(["status", str(work / "results"), "--watch", "0.1"]) == 1
    out, err = capsys.readouterr()
    assert "the run stopped with 1 failed job(s)" in err
    assert out.count("total") == 2  # seen twice with nothing running, then it stops


def test_watch_keeps_going_while_a_job_runs_beside_a_failed_one(tmp_path, capsys):
    plan, work = planned_and_built(tmp_path)
    died, running, *rest = plan.cells
    for c in rest:
        scored(work, c)
    state(work, died, "query", done=1, pid=2**22 + 7)
    state(work, running, "query", done=1)
    job = finish_later(work, running)  # snakemake --keep-going: the other job goes on
    assert main(["status", str(work / "results"), "--watch", "0.1"]) == 1
    job.join()
    tables = [t for t in capsys.readouterr().out.split("\n\n") if "total" in t]
    assert len(tables) >= 4 and "15/18" in tables[-1]  # watched until the running job ended


def test_no_plan_is_one_line(tmp_path, capsys):
    assert main(["status", str(tmp_path)]) == 2
    assert "no plan under" in capsys.readouterr().err


def test_status_with_a_spec_and_its_limit(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    out = subprocess.run(
        [sys.executable, "-m", "shredfold", "status", str(tmp_path / "results"), "--spec", str(spec), "--limit", "2"],
        capture_output=True, text=True, cwd=tmp_path, env=os.environ,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "a quick run: shred: first 2 items per cell" in out.stdout
    assert "0/12" in out.stdout  # 2 models × 3 cells × 2 items, none answered


def test_workdir_is_found_from_a_plan_path_only(tmp_path):
    rel = "results/cells/query/m/x/abc.json"
    assert workdir_of(tmp_path / rel, rel) == tmp_path.resolve()
    assert workdir_of(tmp_path / "elsewhere.json", rel) is None
