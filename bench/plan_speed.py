"""Time `snakemake -n` on a paper-scale plan: 756 documents × N ∈ {1,8,12,16} × 15 models.

Usage: python bench/plan_speed.py [--repeat 3]
Generates the corpus with bench/make_corpus.py into a scratch folder, writes a spec pointing
at it (the paper's 14 API models + the oracle), and times the dry run (target: under 5 s).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = work / "corpus.jsonl"
        subprocess.run([sys.executable, str(ROOT / "bench" / "make_corpus.py"), str(corpus)], check=True)
        paper = (ROOT / "specs" / "paper.yaml").read_text()
        spec_text = paper.replace("documents_per_domain: 6", "documents_per_domain: 126").replace(
            "    builtin: true", f"    jsonl: {corpus}", 1
        )
        spec = work / "specs" / "paper756.yaml"
        spec.parent.mkdir()
        spec.write_text(spec_text)
        (work / "specs" / "models").symlink_to(ROOT / "specs" / "models")
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(work),
                 "-n", "--quiet", "rules", "--cores", "1", "results/leaderboard.csv",
                 "--config", f"spec={spec}"],
                capture_output=True, text=True,
            )
            times.append(time.perf_counter() - t0)
            if proc.returncode != 0:
                print(proc.stdout, proc.stderr, file=sys.stderr)
                raise SystemExit(1)
        print(proc.stdout.strip().splitlines()[-8:] and "\n".join(proc.stdout.strip().splitlines()[-8:]))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "shredfold", "plan", str(spec), "--json"],
                       capture_output=True, check=True)
        plan_s = time.perf_counter() - t0
        print(f"snakemake -n (756 docs x 4 N x 15 models): median {statistics.median(times):.2f} s "
              f"over {len(times)} runs (min {min(times):.2f}, max {max(times):.2f}); "
              f"`shredfold plan` alone {plan_s:.2f} s")


if __name__ == "__main__":
    main()
