"""Crease orders over a folder of designs: how many get one, and how long the search takes.

    nice -n 10 python bench/crease_orders.py FOLDER [--limit N] [--max-lines L] [--group G]

For each ``.fold`` file (sorted by name; Flat-Folder's recognised with their tier) runs
:func:`shredfold.origami_bench.crease_order.find_crease_order` with the default budget
(``--max-lines`` / ``--group`` override it) and prints CSV on stdout (file, tier, vertices,
lines, found, steps, largest step, nodes, solves, seconds, reason). A closing note on stderr:
found / not found, the reasons by kind, and p50 / p95 seconds per design (search and replay).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from shredfold.origami_bench.crease_order import DEFAULT_BUDGET, find_crease_order
from shredfold.origami_bench.designs import folder_designs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--limit", type=int, default=None, help="only the first N designs")
    ap.add_argument("--max-lines", type=int, default=DEFAULT_BUDGET.max_lines)
    ap.add_argument("--group", type=int, default=DEFAULT_BUDGET.group)
    args = ap.parse_args()
    budget = dataclasses.replace(DEFAULT_BUDGET, max_lines=args.max_lines, group=args.group)
    designs, errors = folder_designs(args.folder, None)
    for e in errors:
        print(f"skipped: {e}", file=sys.stderr)
    designs = designs[: args.limit] if args.limit else designs
    out = csv.writer(sys.stdout)
    out.writerow(["file", "tier", "vertices", "lines", "found", "steps", "largest_step", "nodes", "solves", "seconds", "reason"])
    seconds, reasons, found = [], Counter(), 0
    for d in designs:
        o = find_crease_order(d, budget)
        steps = o.steps or ()
        out.writerow([d.id, d.tier, d.vertices, o.lines, int(o.found), len(steps),
                      max((len(s) for s in steps), default=0), o.nodes, o.solves, o.seconds, o.reason])  # fmt: skip
        sys.stdout.flush()
        seconds.append(o.seconds)
        found += o.found
        if not o.found:
            reasons[o.reason.split(":")[0]] += 1
    n = len(designs)
    print(f"{n} designs, budget {budget}: found {found}, not found {n - found} {dict(reasons)}", file=sys.stderr)
    if seconds:
        p50, p95 = np.percentile(seconds, [50, 95])
        print(f"seconds per design: p50 {p50:.2f}, p95 {p95:.2f}, max {max(seconds):.2f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
