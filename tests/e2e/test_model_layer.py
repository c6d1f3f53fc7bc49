"""The model layer end to end: real Snakemake, an `openai`-adapter model, and `shredfold serve`
answering on loopback — with injected faults, a SIGKILL mid-cell, an added model file, a
replay-only audit and a sentinel API key that must not leak into results or logs.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shredfold.calls import RESPONSE_STAGE, response_key
from shredfold.models.openai_compat import OpenAICompatible
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.serve import FaultPlan, answered_twice, read_log
from shredfold.store import Store, sha256_bytes
from shredfold.tasks.base import JobContext
from shredfold.tasks.shredbench.task import shred_request
from tests.e2e.snake import ROOT, served, tree_hashes
from tests.models.samples import (
    ITEMS,
    http_model,
    new_workdir,
    shared_samples,
    write_model,
    write_spec,
)

pytestmark = pytest.mark.slow

SENTINEL = "sk-SENTINEL-do-not-leak-7f3e91"


@pytest.fixture
def work(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return new_workdir(shared_samples(tmp_path_factory), tmp_path / "work")


def snakemake_cmd(work: Path, spec: Path, *args: str, config: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(work),
            "--config", f"spec={spec}", *config, "--cores", "2", *args]  # fmt: skip


def run(work: Path, spec: Path, *args: str, config: tuple[str, ...] = (), check: bool = True):
    proc = subprocess.run(
        snakemake_cmd(work, spec, *args, config=config), capture_output=True, text=True, cwd=work,
        timeout=600,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def planned_jobs(work: Path, spec: Path, target: str = "results/leaderboard.csv") -> dict[str, int]:
    """Jobs a dry run would execute, by rule (empty when there is nothing to do)."""
    # The target goes before `--quiet`, whose optional values would swallow it.
    out = run(work, spec, target, "-n", "--quiet", "rules").stdout
    counts = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] not in ("total", "count"):
            counts[parts[0]] = int(parts[1])
    return counts


def leaderboard(work: Path) -> dict[str, dict[str, str]]:
    with open(work / "results" / "leaderboard.csv", newline="") as fh:
        return {row["model"]: row for row in csv.DictReader(fh)}


def requests(work: Path, spec: Path) -> list[dict]:
    """Per item of the plan: its cell, response key and the hash of the body the adapter sends."""
    plan = make_plan(load_spec(spec))
    store = Store(work / "results" / "store")
    out = []
    for cell in plan.cells:
        adapter = OpenAICompatible(cell.model)
        for item in cell.item_set.items:
            req = shred_request(cell, item, JobContext(plan.spec, store))
            body = json.dumps(adapter.body(req), ensure_ascii=False).encode("utf-8")
            out.append({"cell": cell, "rkey": response_key(cell.identity, req), "hash": sha256_bytes(body)})
    return out


def faults_failing_some(hashes: list[str]) -> str:
    """A fault schedule where every kind of transient fault may strike and some (not all)
    bodies fail for ever: rules are picked by hash, so try rotations until the split is mixed."""
    rules = ["429,500", "503,truncate", "malformed,reset", "slow,no-choices", "500*"]
    while True:
        for shift in range(len(rules)):
            spec = "|".join(rules[shift:] + rules[:shift])
            failing = [h for h in hashes if FaultPlan.parse(spec).fault(h, 99) == "500"]
            if 0 < len(failing) < len(hashes):
                return spec
        rules.append("ok")


def ok_answers(entries: list[dict]) -> list[dict]:
    return [e for e in entries if e["status"] == 200 and e["fault"] == "ok" and not e.get("client_gone")]


def test_faults_are_survived_and_failed_items_are_retried_on_the_next_run(work, monkeypatch) -> None:
    monkeypatch.setenv("SHREDFOLD_E2E_API_KEY", SENTINEL)
    model = http_model("http://127.0.0.1:9/v1", api_key_env="SHREDFOLD_E2E_API_KEY", timeout_s=3.0, max_attempts=3)
    write_model(work, "oracle-http", **model)
    spec = write_spec(work, ["oracle-http"])
    items = requests(work, spec)
    faults = faults_failing_some([r["hash"] for r in items])
    doomed = {r["hash"] for r in items if FaultPlan.parse(faults).fault(r["hash"], 99) == "500"}

    extra = ("--faults", faults, "--retry-after", "0.2", "--slow", "4", "--api-key-env", "SHREDFOLD_E2E_API_KEY")
    with served(work, "run1.jsonl", *extra) as (url, log1):
        write_model(work, "oracle-http", **{**model, "base_url": url})
        run(work, spec, "results/leaderboard.csv")
    first = leaderboard(work)["oracle-http"]
    assert int(first["items"]) == ITEMS and int(first["errors"]) == len(doomed)
    assert float(first["error_rate"]) == pytest.approx(len(doomed) / ITEMS)
    # The oracle's answers are exact (NED 0); a failed item is scored as an empty answer (NED 1).
    assert float(first["ned"]) == pytest.approx(len(doomed) / ITEMS)
    assert int(first["input_tokens"]) > 0 and float(first["cost_usd"]) > 0
    assert float(first["latency_p95_s"]) >= float(first["latency_p50_s"]) > 0
    entries = read_log(log1)
    assert not answered_twice(entries)
    assert {e["hash"] for e in ok_answers(entries)} == {r["hash"] for r in items} - doomed
    assert {e["fault"] for e in entries} > {"ok", "500"}  # transient faults did strike
    # A cluster job reads the Snakefile again after its cell's query recorded errors (which
    # moves the cell on to attempt 1): the finished score of attempt 0 still reads attempt 0.
    failed_scores = {r["cell"].score_path for r in items if r["hash"] in doomed}
    assert all(planned_jobs(work, spec, path) == {} for path in failed_scores)

    with served(work, "run2.jsonl", "--api-key-env", "SHREDFOLD_E2E_API_KEY") as (url, log2):
        write_model(work, "oracle-http", **{**model, "base_url": url})
        failed_cells = {r["cell"].query_key for r in items if r["hash"] in doomed}
        n = len(failed_cells)
        assert planned_jobs(work, spec) == {"query": n, "score": n, "aggregate": 1}
        run(work, spec, "results/leaderboard.csv")
        assert planned_jobs(work, spec) == {}  # nothing failed this time: a no-op
    second = leaderboard(work)["oracle-http"]
    assert int(second["errors"]) == 0 and float(second["ned"]) == 0.0
    # Only the items that had failed were asked again; the rest came from the cache.
    assert sorted(e["hash"] for e in read_log(log2)) == sorted(doomed)
    assert list((work / "results" / "cells" / "query").rglob("*-r1.json"))

    leaks = [p for p in work.rglob("*") if p.is_file() and SENTINEL.encode() in p.read_bytes()]
    assert leaks == [], f"API key written to {leaks}"


def test_a_sigkill_mid_cell_loses_no_answer_and_repeats_no_request(work) -> None:
    model = http_model("http://127.0.0.1:9/v1", max_concurrency=1)
    write_model(work, "oracle-http", **model)
    spec = write_spec(work, ["oracle-http"])
    items = requests(work, spec)
    store = Store(work / "results" / "store")
    with served(work, "server.jsonl", "--delay", "1.0") as (url, log):
        write_model(work, "oracle-http", **{**model, "base_url": url})
        proc = subprocess.Popen(
            snakemake_cmd(work, spec, "results/leaderboard.csv"), cwd=work, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 300
        while not list(store.keys(RESPONSE_STAGE)) and time.time() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # Snakemake and its job processes, mid-cell
        proc.wait()
        killed_at = time.time()
        stored = set(store.keys(RESPONSE_STAGE))
        assert 0 < len(stored) < ITEMS
        assert not (work / "results" / "leaderboard.csv").exists()

        run(work, spec, "--unlock")
        run(work, spec, "results/leaderboard.csv")
    assert int(leaderboard(work)["oracle-http"]["errors"]) == 0
    answered_before = {r["hash"] for r in items if r["rkey"] in stored}
    after = [e for e in read_log(log) if e["t0"] > killed_at]
    assert len(ok_answers(after)) == ITEMS - len(stored)
    assert not answered_before & {e["hash"] for e in after}


def test_adding_a_model_file_runs_only_its_cells(work) -> None:
    with served(work, "server.jsonl", "--delay", "0.3") as (url, log):
        write_model(work, "model-a", **http_model(url))
        spec = write_spec(work, ["model-a"])
        run(work, spec, "results/leaderboard.csv")
        before = tree_hashes(work / "results", "cells/**/*") | tree_hashes(work / "results", "store/response/**/*")
        asked = len(read_log(log))

        # A researcher drops one file into specs/models/ and names it in the spec.
        b = http_model(url, decoding={"temperature": 0.0, "seed": 1}, max_concurrency=1, endpoint_slots=1)
        write_model(work, "model-b", **b)
        spec = write_spec(work, ["model-a", "model-b"])
        assert planned_jobs(work, spec) == {"query": 2, "score": 2, "aggregate": 1}

        audit = run(work, spec, "results/leaderboard.csv", config=("replay_only=true",), check=False)
        assert audit.returncode != 0
        assert len(read_log(log)) == asked  # the audit paid for nothing
        logs = "".join(p.read_text() for p in (work / "results" / "logs" / "cells" / "query" / "model-b").rglob("*.query.log"))
        assert "replay-only mode forbids calling the model" in logs

        run(work, spec, "results/leaderboard.csv")
    after = tree_hashes(work / "results", "cells/**/*") | tree_hashes(work / "results", "store/response/**/*")
    assert {k: after[k] for k in before} == before  # model-a's cells and responses untouched
    entries = read_log(log)
    assert len(entries) == asked + ITEMS
    assert set(leaderboard(work)) == {"model-a", "model-b"}
    # Two query jobs ran on two cores, but the endpoint resource (endpoint_slots: 1) let only
    # one of them at a time talk to the server.
    assert max(e["in_flight"] for e in entries[asked:]) == 1


def test_the_server_stops_on_sigint_even_when_its_parent_ignored_sigint(tmp_path) -> None:
    # background jobs of a non-interactive shell (`cmd &`, nohup) start with SIGINT ignored,
    # and an ignored signal is inherited through exec
    cmd = [sys.executable, "-m", "shredfold", "serve", "--model", "oracle", "--port", "0",
           "--log", str(tmp_path / "server.jsonl")]  # fmt: skip
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert " at http://127.0.0.1:" in (proc.stdout.readline() if proc.stdout else "")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()


def failing_for_ever(hashes: list[str]) -> str:
    """A schedule under which some, not all, request bodies get HTTP 500 on every attempt."""
    rules = ["500*", "ok"]
    while True:
        for shift in range(len(rules)):
            spec = "|".join(rules[shift:] + rules[:shift])
            failing = [h for h in hashes if FaultPlan.parse(spec).fault(h, 99) == "500"]
            if 0 < len(failing) < len(hashes):
                return spec
        rules.append("ok")


def shredfold(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shredfold", *args], capture_output=True, text=True, cwd=work, timeout=600)


def test_a_run_that_keeps_failing_some_items_is_released_and_verified(work, tmp_path) -> None:
    # With real APIs some items always fail: the audited release must not wait for none.
    model = http_model("http://127.0.0.1:9/v1", max_attempts=2, backoff_s=0.0)
    write_model(work, "oracle-http", **model)
    spec = write_spec(work, ["oracle-http"])
    items = requests(work, spec)
    faults = failing_for_ever([r["hash"] for r in items])
    doomed = sum(FaultPlan.parse(faults).fault(r["hash"], 99) == "500" for r in items)
    said = f"{doomed} of {ITEMS} items failed"
    with served(work, "run.jsonl", "--faults", faults) as (url, _):
        write_model(work, "oracle-http", **{**model, "base_url": url})
        run(work, spec, "results/leaderboard.csv")
        made = shredfold(work, "release", "--spec", str(spec), "--out", str(tmp_path / "r1"))
        assert made.returncode == 0, made.stderr
        assert said in made.stdout and f"{doomed} × HTTP 500: " in made.stdout, made.stdout
        checked = shredfold(work, "verify", str(tmp_path / "r1"))
        assert checked.returncode == 0 and said in checked.stdout and ": verified (" in checked.stdout, checked.stdout

        # The Snakemake target asks the failed items again (they fail again: attempt -r1),
        # then releases what that run made, and says so.
        snake = run(work, spec, "results/release.tar.gz")
        assert said in snake.stdout + snake.stderr, snake.stdout + snake.stderr
    assert list((work / "results" / "cells" / "query").rglob("*-r1.json"))
    checked = shredfold(work, "verify", "results/release.tar.gz")
    assert checked.returncode == 0 and said in checked.stdout, checked.stdout + checked.stderr
    assert int(leaderboard(work)["oracle-http"]["errors"]) == doomed
