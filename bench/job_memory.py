"""Peak memory of every pipeline job, by rule and kind: what the rules' ``mem_mb`` rest on.

Runs the real workflow (Snakemake, this checkout's Snakefile) on a spec in a scratch folder,
then reads each job's peak resident memory from its log: every ``shredfold job`` ends by
logging ``job STAGE: peak RSS X MB`` (``ru_maxrss`` of the job's process and of the
children it waited for, the number ``/usr/bin/time -v`` prints as "Maximum resident set
size"). While the run goes it also samples, every half second, the resident memory of the
whole process tree (Snakemake and the jobs it runs at once): the peak of that sum is what
the machine had to hold.

    python bench/job_memory.py [SPEC ...] [--cores 2] [--mem-mb N] [--work /tmp/job-memory]
        [--json OUT] [--config KEY=VALUE ...] [--keep]
    python bench/job_memory.py --again FOLDER     # a kept run's peaks against the rules now

Each SPEC (default ``specs/default.yaml``) runs in its own folder under ``--work``. Rows are
grouped by rule and kind: a set by its task (ShredBench: synthesis mode and N), a query by
the model's adapter (and N), a score by its task (SS or not). For each group: jobs, the
largest peak, the median, and the ``mem_mb`` the rules declared for it. The notes in
``bench/job_memory_notes.md`` keep the numbers measured on this project's machine.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import psutil

from shredfold import paths
from shredfold.plan import load_plan
from shredfold.stages import resources as res
from shredfold.status import newest_plan

ROOT = Path(__file__).resolve().parents[1]
_PEAK = re.compile(r"job (\w+): peak RSS (\d+) MB(?:, over the (\d+) MB| of mem_mb (\d+) declared)?")


class TreeSampler:
    """The summed RSS of a process and its descendants, sampled on a thread."""

    def __init__(self, pid: int, every: float = 0.5) -> None:
        self.root = psutil.Process(pid)
        self.every = every
        self.peak_total = self.peak_jobs = 0.0
        self.peak_snakemake = 0.0
        self.most_jobs = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                own = self.root.memory_info().rss
                kids = self.root.children(recursive=True)
            except psutil.Error:
                return
            jobs = 0.0
            running = 0
            for k in kids:
                try:
                    jobs += k.memory_info().rss
                    running += "shredfold" in " ".join(k.cmdline()) and "job" in k.cmdline()
                except psutil.Error:
                    continue
            self.peak_snakemake = max(self.peak_snakemake, own / 2**20)
            self.peak_jobs = max(self.peak_jobs, jobs / 2**20)
            self.peak_total = max(self.peak_total, (own + jobs) / 2**20)
            self.most_jobs = max(self.most_jobs, running)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def peak_of(log: Path) -> tuple[float | None, int | None]:
    """The peak RSS a job's log reports, and the mem_mb it was declared with."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None, None
    found = _PEAK.findall(text)
    if not found:
        return None, None
    _, peak, over, declared = found[-1]
    mem = over or declared
    return float(peak), int(mem) if mem else None


def kinds(workdir: Path) -> list[dict[str, Any]]:
    """A row per job of the run: rule, kind, labels, peak RSS and declared mem_mb."""
    plan_file = newest_plan(workdir / paths.RESULTS)
    assert plan_file is not None, f"no plan under {workdir}"
    plan = load_plan(plan_file)
    spec = plan.spec.spec
    rows: list[dict[str, Any]] = []
    mode = spec.shred.synthesis.mode if spec.shred is not None and spec.shred.samples is None else "outside"
    for s in plan.item_sets.values():
        if s.task == "shred":
            kind = f"shred {mode} N={s.labels['n']}"
        else:
            kind = f"{s.task} {s.labels.get('task', '')}"
        peak, declared = peak_of(workdir / paths.set_log_path(s.where, s.key))
        rows.append({"rule": "item_set", "kind": kind, "where": s.where, "items": len(s.items),
                     "peak_mb": peak, "mem_mb": declared, "now_mb": res.set_mem_mb(s, plan.spec)})  # fmt: skip
    ss = spec.origami is not None and (spec.origami.clip.checkpoint or spec.origami.clip.pretrained)
    for c in plan.cells:
        n = f" N={c.labels['n']}" if c.task == "shred" else ""
        for stage in ("query", "score"):
            where, key = (c.query_where, c.query_key) if stage == "query" else (c.score_where, c.score_key)
            if stage == "query":
                kind = f"{c.model.adapter} {c.task}{n}"
            else:
                kind = f"{c.task}{' SS' if ss and c.task == 'origami_fullstep' else ''}{n}"
            peak, declared = peak_of(workdir / paths.cell_log_path(stage, where, key))
            now = (res.query_mem_mb if stage == "query" else res.score_mem_mb)(c, plan.spec)
            rows.append({"rule": stage, "kind": kind, "where": where, "items": len(c.item_set.items),
                         "peak_mb": peak, "mem_mb": declared, "now_mb": now})  # fmt: skip
    for rule, log, now in (("aggregate", paths.AGGREGATE_LOG, res.AGGREGATE_MB), ("report", paths.REPORT_LOG, res.REPORT_MB)):
        peak, declared = peak_of(workdir / log)
        rows.append({"rule": rule, "kind": rule, "where": "", "items": 0, "peak_mb": peak, "mem_mb": declared,
                     "now_mb": now})  # fmt: skip
    return rows


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["peak_mb"] is not None:
            groups[r["rule"], r["kind"]].append(r)
    out = []
    for (rule, kind), rs in sorted(groups.items()):
        peaks = [r["peak_mb"] for r in rs]
        now = [r["now_mb"] for r in rs]
        out.append({"rule": rule, "kind": kind, "jobs": len(rs), "max_mb": max(peaks),
                    "median_mb": statistics.median(peaks), "declared_mb": f"{min(now)}-{max(now)}",
                    "headroom": round(min(r["now_mb"] / r["peak_mb"] for r in rs), 2),
                    "over": sum(1 for r in rs if r["peak_mb"] > r["now_mb"])})  # fmt: skip
    return out


def run(spec: Path, work: Path, cores: int, config: list[str], mem_mb: int | None = None) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    bound = ["--resources", f"mem_mb={mem_mb}"] if mem_mb else []
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(work),
           "--cores", str(cores), "results/leaderboard.csv", "results/report.html", *bound,
           "--config", f"spec={spec.resolve()}", *config]  # fmt: skip
    t0 = time.perf_counter()
    with open(work / "snakemake.out", "w") as out:
        proc = subprocess.Popen(cmd, cwd=work, stdout=out, stderr=subprocess.STDOUT)
        with TreeSampler(proc.pid) as sampler:
            code = proc.wait()
    if code != 0:
        raise SystemExit(f"snakemake failed ({code}): see {work / 'snakemake.out'}")
    rows = kinds(work)
    return {
        "spec": str(spec),
        "cores": cores,
        "mem_mb": mem_mb,
        "wall_s": round(time.perf_counter() - t0, 1),
        "peak_tree_mb": round(sampler.peak_total),
        "peak_jobs_mb": round(sampler.peak_jobs),
        "peak_snakemake_mb": round(sampler.peak_snakemake),
        "most_jobs_at_once": sampler.most_jobs,
        "jobs": rows,
        "summary": summary(rows),
    }


def report(r: dict[str, Any]) -> None:
    """The groups' peaks beside what the rules declare now (and the least declared/peak)."""
    print(f"{'rule':10s} {'kind':34s} {'jobs':>5s} {'max MB':>7s} {'median':>7s}  {'mem_mb now':>11s} {'least ratio':>11s}")
    for g in r["summary"]:
        flag = f"  ({g['over']} over)" if g["over"] else ""
        print(f"{g['rule']:10s} {g['kind']:34s} {g['jobs']:5d} {g['max_mb']:7.0f} {g['median_mb']:7.0f}  "
              f"{g['declared_mb']:>11s} {g['headroom']:11.2f}{flag}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("specs", nargs="*", default=[str(ROOT / "specs" / "default.yaml")])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--work", default="/tmp/job-memory")
    ap.add_argument("--config", nargs="*", default=[], help="more --config KEY=VALUE for Snakemake")
    ap.add_argument("--mem-mb", type=int, help="--resources mem_mb=N (default: the bound the Snakefile takes from the machine)")
    ap.add_argument("--json", help="write every job's numbers here")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folders")
    ap.add_argument("--again", metavar="FOLDER", help="no run: read a kept run's logs again, against the rules now")
    args = ap.parse_args()
    if args.again:
        rows = kinds(Path(args.again))
        report({"summary": summary(rows)})
        return
    results = []
    for spec in map(Path, args.specs):
        work = Path(args.work) / spec.stem
        shutil.rmtree(work, ignore_errors=True)
        r = run(spec, work, args.cores, args.config, args.mem_mb)
        results.append(r)
        bound = f" --resources mem_mb={r['mem_mb']}" if r["mem_mb"] else ""
        print(f"\n{spec}: {r['wall_s']} s on --cores {r['cores']}{bound}; peak of the process tree "
              f"{r['peak_tree_mb']} MB (jobs {r['peak_jobs_mb']} MB, Snakemake {r['peak_snakemake_mb']} MB), "
              f"at most {r['most_jobs_at_once']} jobs at once")  # fmt: skip
        report(r)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
