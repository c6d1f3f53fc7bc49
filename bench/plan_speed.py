"""Planning cost: the default plan, a 756-document paper plan, `snakemake -n` on it, and a
job's fixed cost from process start to its first item.

Usage: python bench/plan_speed.py [--workdir DIR] [--repeat 5] [--src SRC]

- ``--workdir``: a folder where the default spec already ran (``results/`` present), so a
  job can be timed on a finished, fully cached cell (default: the repository).
- ``--src``: the package source to time (default: this checkout's ``src``); give another
  checkout's ``src`` to time that code the same way (before/after figures).

Every figure is the median wall time of ``--repeat`` fresh processes (after one warm-up, so
the OS file cache is warm). Targets: default plan < 0.3 s; paper plan < 1 s; dry run < 3 s;
job fixed cost < 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd: list[str], env: dict[str, str], cwd: Path, repeat: int) -> tuple[float, float]:
    """Median wall and CPU (user + system) seconds of a command's fresh processes."""
    subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, check=True)  # warm-up
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
    return statistics.median(walls), statistics.median(cpus)


def plan_code(spec: Path, new_api: bool) -> str:
    if new_api:
        return (
            "from pathlib import Path\nfrom shredfold.plan import make_plan\n"
            "from shredfold.resolve import load_spec\nfrom shredfold.store import Store\n"
            f"make_plan(load_spec({str(spec)!r}), Store('results/store'))\n"
        )
    return (
        "from shredfold.plan import make_plan\nfrom shredfold.spec import load_spec\n"
        f"make_plan(load_spec({str(spec)!r}))\n"
    )


def job_command(workdir: Path, src: Path, new_api: bool, out: Path) -> list[str]:
    """`shredfold job query` on the first finished cell of the default run (all cached)."""
    py = sys.executable
    spec = workdir / "specs" / "default.yaml"
    if new_api:
        plans = sorted((workdir / "results" / "plans").glob("*.json"), key=lambda p: p.stat().st_mtime)
        if not plans:
            raise SystemExit(f"no plan file under {workdir}/results/plans: run snakemake there first")
        doc = json.loads(plans[-1].read_text())
        cell = doc["cells"][0]
        return [py, "-m", "shredfold", "job", "query", "--plan", str(plans[-1]), "--key",
                cell["query_key"], "--where", cell["query_where"], "--out", str(out),
                "--results", str(workdir / "results")]
    env = {**os.environ, "PYTHONPATH": str(src)}
    summary = json.loads(subprocess.run([py, "-m", "shredfold", "plan", str(spec), "--json"], env=env,
                                        cwd=workdir, capture_output=True, text=True, check=True).stdout)
    cell = summary["cells"][0]
    return [py, "-m", "shredfold", "job", "query", "--spec", str(spec), "--key", cell["query_key"],
            "--out", str(out), "--results", str(workdir / "results")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", type=Path, default=ROOT)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--src", type=Path, default=ROOT / "src")
    args = ap.parse_args()
    src = args.src.resolve()
    new_api = (src / "shredfold" / "paths.py").is_file()
    env = {**os.environ, "PYTHONPATH": str(src)}
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = work / "corpus.jsonl"
        subprocess.run([py, str(ROOT / "bench" / "make_corpus.py"), str(corpus)], check=True,
                       capture_output=True)
        paper = (ROOT / "specs" / "paper.yaml").read_text()
        spec_text = paper.replace("documents_per_domain: 6", "documents_per_domain: 126").replace(
            "    builtin: true", f"    jsonl: {corpus}", 1
        )
        # ShredBench at scale; OrigamiBench on its built-in designs (Flat-Folder's 366, which the
        # paper spec names, plan as bench/plan_origami.py measures, and need a fetch first)
        spec_text = spec_text.replace("    builtin: false\n    procedural: 0\n    flat_folder: true\n", "    builtin: true\n    procedural: 0\n")
        (work / "specs").mkdir()
        paper_spec = work / "specs" / "paper756.yaml"
        paper_spec.write_text(spec_text)
        (work / "specs" / "models").symlink_to(ROOT / "specs" / "models")
        default_spec = args.workdir / "specs" / "default.yaml"

        default_s = timed([py, "-c", plan_code(default_spec, new_api)], env, args.workdir, args.repeat)
        # The dry run first: it writes the design catalogue the later plans read.
        dry = [py, "-m", "snakemake", "-s", str(ROOT / "Snakefile") if new_api else str(src.parent / "Snakefile"),
               "-d", str(work), "-n", "--quiet", "rules", "--cores", "1", "results/leaderboard.csv",
               "--config", f"spec={paper_spec}"]
        dry_s = timed(dry, env, work, args.repeat)
        paper_s = timed([py, "-c", plan_code(paper_spec, new_api)], env, work, args.repeat)
        job_s = timed(job_command(args.workdir, src, new_api, work / "job-out.json"), env, args.workdir, args.repeat)
    print(f"code: {src}   (median of {args.repeat}: wall s / CPU s)")
    for name, (wall, cpu), target in (
        ("default plan (fresh process)", default_s, "< 0.3 s"),
        ("paper plan, 756 documents", paper_s, "< 1 s"),
        ("snakemake -n on the paper plan", dry_s, "< 3 s"),
        ("job fixed cost (cached query cell)", job_s, "< 0.3 s"),
    ):
        print(f"{name:38s} {wall:6.2f} / {cpu:5.2f}   (target {target})")


if __name__ == "__main__":
    main()
