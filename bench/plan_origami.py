"""Planning the paper's OrigamiBench at the paper's scale, as a new user would.

    nice -n 10 python bench/plan_origami.py --archive FF.tar.gz [--src SRC] [--folder-designs 6]

``--archive`` is a tarball of Flat-Folder at the manifest's commit (``git archive
--prefix=flat-folder/ -o ff.tar.gz 191aaa9`` in a clone). In a fresh folder, with a fresh
design cache:

1. ``shredfold designs fetch --url file://ARCHIVE`` (wall seconds);
2. the paper's OrigamiBench spec — ``specs/paper.yaml``'s ``origami`` section (Flat-Folder's
   366 designs, the three tasks) with the three reference agents — planned by ``shredfold
   plan`` in a new process, cold (no results folder) and warm (again);
3. ``snakemake -n`` on it, and whether its plan file has the keys ``shredfold plan --json``
   printed (sets, query and score keys);
4. a user's folder of ``--folder-designs`` designs the package does not know (Flat-Folder
   designs re-serialised, so their bytes are new): their validation jobs alone, run by
   Snakemake with ``--cores 1`` and ``--cores 2``, wall seconds of each and how many jobs
   overlapped in time (from the jobs' own log timestamps).

Targets (issue 30): cold < 60 s, warm < 2 s, equal keys, validation jobs in parallel.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ["origami-oracle", "origami-random", "origami-search"]
# medium designs whose validation takes a few seconds each
FOLDER_DESIGNS = (
    "005_ku_Kitten.fold", "008_ku_Robot.fold", "012_ku_4x4_Grid_Unassigned.fold", "021_chan_Simple_Dragon.fold",
    "030_tanakaoripa_fish_base.fold", "044_kei_Angel.fold", "050_ku_Ryu_Zin_Jr.fold", "060_ku_1-Piece_Star_Atarbus.fold",
)  # fmt: skip


def run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 3600) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return wall, proc


def snakemake(work: Path, spec: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(work), *args, "--config", f"spec={spec}"]


def plan_keys(doc: dict) -> tuple[set[str], set[tuple[str, str]]]:  # type: ignore[type-arg]
    return {s["key"] for s in doc["sets"]}, {(c["query_key"], c["score_key"]) for c in doc["cells"]}


def overlap(logs: list[Path]) -> tuple[int, float]:
    """The most jobs running at once, and their summed seconds, from the first and last
    timestamp of each job's log (a set job logs when it starts and when it ends)."""
    stamp = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})")
    spans = []
    for log in logs:
        times = [datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f") for line in log.read_text().splitlines() if (m := stamp.match(line))]
        if times:
            spans.append((min(times), max(times)))
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    most = now = 0
    for _, d in events:
        now += d
        most = max(most, now)
    return most, sum((b - a).total_seconds() for a, b in spans)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archive", type=Path, required=True)
    ap.add_argument("--src", type=Path, default=ROOT / "src")
    ap.add_argument("--folder-designs", type=int, default=6)
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="plan-origami-") as tmp:
        base = Path(tmp)
        env = {**os.environ, "PYTHONPATH": str(args.src.resolve()), "SHREDFOLD_CACHE": str(base / "cache")}
        fetch_s, _ = run([py, "-m", "shredfold", "designs", "fetch", "--url", args.archive.resolve().as_uri()], env, base)
        paper = yaml.safe_load((ROOT / "specs" / "paper.yaml").read_text())
        work = base / "work"
        (work / "specs").mkdir(parents=True)
        (work / "specs" / "models").symlink_to(ROOT / "specs" / "models")
        spec = work / "specs" / "paper-origami.yaml"
        spec.write_text(yaml.safe_dump({"name": "paper-origami", "origami": paper["origami"], "models": AGENTS}))
        plan = [py, "-m", "shredfold", "plan", str(spec), "--json"]
        cold_s, cold = run(plan, env, work)
        warm_s, warm = run(plan, env, work)
        dry_s, _ = run(snakemake(work, spec, "-n", "--quiet", "rules", "--cores", "1"), env, work)
        summary = json.loads(warm.stdout)
        plan_files = sorted((work / "results" / "plans").glob("*.json"), key=lambda p: p.stat().st_mtime)
        doc = json.loads(plan_files[-1].read_text())
        same_keys = plan_keys(summary) == plan_keys(doc) and json.loads(cold.stdout) == summary
        n_sets, n_items = len(summary["sets"]), sum(len(s["items"]) for s in summary["sets"])

        # a user's folder: the same designs with new bytes, validated by jobs
        ff_folder = next((base / "cache" / "flat-folder").iterdir())
        folder = base / "mine"
        folder.mkdir()
        for name in FOLDER_DESIGNS[: args.folder_designs]:
            data = json.loads((ff_folder / name).read_text())
            (folder / name).write_text(json.dumps(data))  # compact: not the manifest's bytes
        cores = {}
        for n in (1, 2):
            w = base / f"user{n}"
            (w / "specs").mkdir(parents=True)
            (w / "specs" / "models").symlink_to(ROOT / "specs" / "models")
            s = w / "specs" / "mine.yaml"
            s.write_text(yaml.safe_dump({"name": "mine", "origami": {"designs": {"builtin": False, "procedural": 0, "folder": str(folder)},
                                                                    "tasks": ["fullstep"]}, "models": ["origami-random"]}))  # fmt: skip
            _, out = run([py, "-m", "shredfold", "plan", str(s), "--json", "--no-cache"], env, w)
            checks = [x for x in json.loads(out.stdout)["sets"] if not x["asked"]]
            wall, _ = run(snakemake(w, s, "--cores", str(n), *(x["path"] for x in checks)), env, w)
            logs = [w / x["path"].replace("results/sets/", "results/logs/sets/").replace(".json", ".log") for x in checks]
            cores[n] = (wall, *overlap(logs), len(checks))
    print(f"code: {args.src}")
    print(f"designs fetch (366 designs, file:// archive)      {fetch_s:7.1f} s")
    print(f"shredfold plan, cold (no results folder)           {cold_s:7.1f} s   (target < 60 s)  {n_sets} sets, {n_items} items")
    print(f"shredfold plan, warm                               {warm_s:7.1f} s   (target < 2 s)")
    print(f"snakemake -n                                       {dry_s:7.1f} s")
    print(f"shredfold plan and the Snakefile's plan: same keys  {same_keys}")
    for n, (wall, most, busy, count) in cores.items():
        print(f"validation of {count} unknown designs, --cores {n}      {wall:7.1f} s   "
              f"(at most {most} jobs at once; the jobs' own seconds summed: {busy:.1f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
