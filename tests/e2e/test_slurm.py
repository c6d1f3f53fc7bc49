"""The workflow on a real Slurm cluster (`snakemake --executor slurm` with the shipped profile,
workflow/profiles/slurm): the same leaderboard and breakdowns as a local run of the same spec,
an API limit that holds across cluster jobs, an API key that reaches the jobs through the
environment and is written nowhere, and a second run with nothing to do.

CI brings up a single-node cluster first (.ci/slurm-up.sh, as root); elsewhere the test skips
with the reason, unless SHREDFOLD_REQUIRE_SLURM=1 (set by .ci/run once a cluster is up).
"""

from __future__ import annotations

import csv
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from shredfold.serve import read_log
from tests.e2e.snake import ROOT, served, snakemake
from tests.models.samples import http_model, write_model

pytestmark = pytest.mark.slow

KEY_ENV = "SHREDFOLD_SLURM_E2E_API_KEY"
SENTINEL = "sk-SENTINEL-slurm-4b9d0c2e"
SPEC = """\
name: slurm-e2e
seed: 5
shred:
  domains: [news_en]
  granularities: [1, 2]
  documents_per_domain: 1
models:
  - oracle
  - oracle-http
"""
# Jobs the cluster runs: 2 item sets, then a query and a score per cell (2 models × 2 N); the
# aggregation is a local rule.
CLUSTER_JOBS = 2 + 4 + 4
TABLES = ("leaderboard.csv", "breakdown.csv")
MEASURED = {"latency_p50_s", "latency_p95_s"}
# Every answer of the served oracle takes this long, so that two query jobs running at once
# against its endpoint would overlap on the server.
DELAY_S = "3"
RUN_TIMEOUT_S = 900


def slurm_unavailable() -> str | None:
    """Why no Slurm cluster can run the test here, or None."""
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install -e '.[slurm]')"
    if shutil.which("sinfo") is None:
        return "no Slurm here: sinfo not found (CI starts a cluster with .ci/slurm-up.sh as root)"
    try:
        states = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%t"], capture_output=True, text=True, timeout=20
        ).stdout.split()
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 20 s"
    if not {"idle", "mix"} & set(states):
        return f"no idle Slurm node (sinfo node states: {' '.join(states) or 'none'})"
    return None


@pytest.fixture(scope="module")
def cluster() -> None:
    reason = slurm_unavailable()
    if reason is None:
        return
    if os.environ.get("SHREDFOLD_REQUIRE_SLURM") == "1":
        pytest.fail(f"SHREDFOLD_REQUIRE_SLURM=1 but {reason}")
    pytest.skip(reason)


def prepare(work: Path, url: str) -> Path:
    """A working directory with the spec and the served oracle's model file."""
    (work / "specs" / "models").mkdir(parents=True)
    model = http_model(url, api_key_env=KEY_ENV, endpoint_slots=1, max_concurrency=1)
    write_model(work, "oracle-http", **model)
    spec = work / "specs" / "spec.yaml"
    spec.write_text(SPEC)
    return spec


def slurm_snakemake(work: Path, spec: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Snakemake with the shipped Slurm profile. Past the timeout it is interrupted like a
    user would (SIGINT, so that it cancels its queued jobs) before anything is killed."""
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(work),
        "--workflow-profile", str(ROOT / "workflow" / "profiles" / "slurm"),
        # CI speed: the first status check 5 s after a submission (40 s by default). Keep
        # the jobs' Slurm logs, so that they too are searched for the API key.
        "--slurm-init-seconds-before-status-checks", "5", "--slurm-keep-successful-logs",
        *args, "--config", f"spec={spec}",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=work, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        raise AssertionError(f"Slurm run past {RUN_TIMEOUT_S} s, interrupted:\n{out}") from None
    if proc.returncode != 0:
        raise AssertionError(f"Slurm run failed ({proc.returncode}):\n{out}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, "")


def submitted(output: str) -> int:
    return output.count("has been submitted with SLURM jobid")


def slurm_jobs(output: str) -> list[dict[str, str]]:
    """The Slurm jobs of the run whose output this is, as squeue still lists them (finished
    jobs stay for MinJobAge): Slurm job id, comment (rule and wildcards), submit and end
    time, state, memory and time limit."""
    run_id = re.search(r"SLURM run ID: (\S+)", output)
    assert run_id, output
    lines = subprocess.run(
        ["squeue", "--states=all", "--noheader", "--name", run_id[1], "--format=%i|%k|%V|%e|%T|%m|%l"],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout.splitlines()  # fmt: skip
    fields = ("slurm_id", "comment", "submit", "end", "state", "memory", "time_limit")
    return [dict(zip(fields, line.split("|"), strict=True)) for line in lines]


def declared_mem_mb(work: Path, spec: Path) -> dict[str, int]:
    """The mem_mb shredfold declares for each job of the spec (shredfold.stages.resources,
    which the rules call), by the key its Slurm comment names: an item set's, a cell's query
    or score."""
    from shredfold.plan import make_plan
    from shredfold.resolve import load_spec
    from shredfold.stages import resources as res
    from shredfold.store import Store

    plan = make_plan(load_spec(spec), Store(work / "results" / "store"))
    key = re.compile(r"[0-9a-f]{64}")
    out = {key.findall(s.path)[-1]: res.set_mem_mb(s, plan.spec) for s in plan.item_sets.values()}
    for cell in plan.cells:
        out[key.findall(cell.query_path)[-1]] = res.query_mem_mb(cell, plan.spec)
        out[key.findall(cell.score_path)[-1]] = res.score_mem_mb(cell, plan.spec)
    return out


def tables(work: Path) -> dict[str, list[dict[str, str]]]:
    """The leaderboard and breakdowns, without the measured wall-clock latencies."""
    out = {}
    for name in TABLES:
        with open(work / "results" / name, newline="") as fh:
            out[name] = [{k: v for k, v in row.items() if k not in MEASURED} for row in csv.DictReader(fh)]
    return out


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    local = tmp_path_factory.mktemp("local")
    work = tmp_path_factory.mktemp("slurm")
    serve = ("--delay", DELAY_S, "--api-key-env", KEY_ENV)
    with pytest.MonkeyPatch.context() as mp:
        # The key is in the environment of whoever runs Snakemake, as a user's would be.
        mp.setenv(KEY_ENV, SENTINEL)
        with served(local, "server.jsonl", *serve) as (url, _):
            profile = str(ROOT / "workflow" / "profiles" / "default")
            snakemake(local, prepare(local, url), "--workflow-profile", profile, timeout=RUN_TIMEOUT_S)
        with served(work, "server.jsonl", *serve) as (url, log):
            spec = prepare(work, url)
            first = slurm_snakemake(work, spec)
        jobs = slurm_jobs(first.stdout)
        second = slurm_snakemake(work, spec)
    return {"local": local, "work": work, "log": log, "jobs": jobs,
            "first": first.stdout, "second": second.stdout}  # fmt: skip


def test_the_slurm_run_gives_the_local_runs_leaderboard_and_breakdowns(runs) -> None:
    assert submitted(runs["first"]) == CLUSTER_JOBS, runs["first"]
    slurm, local = tables(runs["work"]), tables(runs["local"])
    assert {r["model"] for r in slurm["leaderboard.csv"]} == {"oracle", "oracle-http"}
    assert slurm == local
    http = next(r for r in slurm["leaderboard.csv"] if r["model"] == "oracle-http")
    # The key reached the cluster jobs (the server refuses a request without it): no errors.
    assert http["errors"] == "0" and float(http["ned"]) == 0.0


def test_slurm_allocated_each_job_what_its_rule_and_the_shipped_profile_ask(runs) -> None:
    profile = yaml.safe_load((ROOT / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())
    assert {j["state"] for j in runs["jobs"]} == {"COMPLETED"} and len(runs["jobs"]) == CLUSTER_JOBS
    declared = declared_mem_mb(runs["work"], runs["work"] / "specs" / "spec.yaml")
    for job in runs["jobs"]:
        rule = re.match(r"rule_(item_set|query|score)_wildcards_.*_([0-9a-f]{64})_?$", job["comment"])
        assert rule, job
        # memory: the job's own mem_mb, declared per job from measured peaks scaled by its
        # set or cell (not a flat number in the profile); time: the profile's, per rule
        assert "mem_mb" not in profile["set-resources"][rule[1]]
        hours, minutes = divmod(profile["set-resources"][rule[1]]["runtime"], 60)
        assert (job["memory"], job["time_limit"]) == (f"{declared[rule[2]]}M", f"{hours}:{minutes:02d}:00")
    # the declarations differ by job kind (an oracle's query is small, a page's set is not)
    assert len({j["memory"] for j in runs["jobs"]}) > 1


def test_the_endpoint_limit_holds_across_cluster_jobs(runs) -> None:
    # endpoint_slots: 1 for the served oracle, whose two query cells are two Slurm jobs. The
    # Snakemake that submits them holds the second back until the first has finished (a
    # limit counted per job would have both in the queue at once).
    http = sorted(
        (j for j in runs["jobs"] if j["comment"].startswith("rule_query_wildcards_query_oracle-http_")),
        key=lambda j: j["submit"],
    )  # fmt: skip
    assert len(http) == 2
    assert http[1]["submit"] >= http[0]["end"], http
    entries = read_log(runs["log"])
    assert [e["status"] for e in entries] == [200, 200]  # one request per cell, each once
    assert max(e["in_flight"] for e in entries) == 1


def test_the_api_key_is_written_nowhere(runs) -> None:
    work = runs["work"]
    assert list((work / ".snakemake" / "slurm_logs").rglob("*.log"))  # kept, and searched
    leaks = [p for p in work.rglob("*") if p.is_file() and SENTINEL.encode() in p.read_bytes()]
    assert leaks == [], f"API key written to {leaks}"


def test_a_second_slurm_run_has_nothing_to_do(runs) -> None:
    assert "Nothing to be done" in runs["second"], runs["second"]
    assert submitted(runs["second"]) == 0
