"""Two versions of the layer solver timed design by design, interleaved.

    python bench/solver_ab.py DESIGNS --a SRC_A --b SRC_B [--files LIST] [--reps 2] [--limit 10000]
        [--out CSV]

SRC_A and SRC_B are ``src`` folders of two checkouts (say main's and a branch's). Each runs
in its own long-lived worker process (``PYTHONPATH=SRC``) timing ``bench/solver.py``'s
path, from the file's text to the count (``time.process_time``). For every design the two
run in turn, ``--reps`` times each, alternating which goes first, so that a shared
machine's load weighs on both alike; the faster of each side's runs is kept (each side
first solves the first design once, untimed). ``--files`` is a file of design names, one
a line (default: every ``.fold`` in DESIGNS).

One CSV row per design (``file,a_cpu,b_cpu,ratio,same``; ``same``: faces, variables and
states agree) on stdout or ``--out``; on stderr the median ratio b/a and the designs
whose counts differ.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

_SERVE = """
import json, sys
sys.path.insert(0, {bench!r})
from solver import solve_file
for line in sys.stdin:
    print(json.dumps(solve_file(line.strip(), {limit!r}, None)), flush=True)
"""


class _Side:
    def __init__(self, src: Path, limit: int | None) -> None:
        code = _SERVE.format(bench=str(Path(__file__).resolve().parent), limit=limit)
        env = dict(os.environ, PYTHONPATH=str(src.resolve()))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )

    def solve(self, path: Path) -> dict[str, object]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{path}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("designs", type=Path)
    ap.add_argument("--a", type=Path, required=True, help="src folder of the first version")
    ap.add_argument("--b", type=Path, required=True, help="src folder of the second version")
    ap.add_argument("--files", type=Path, help="design names, one a line")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--limit", type=int, default=10000, help="states per component (0: all)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.files:
        names = [n.strip() for n in args.files.read_text().splitlines() if n.strip()]
    else:
        names = sorted(p.name for p in args.designs.iterdir() if p.suffix == ".fold")
    sides = {"a": _Side(args.a, args.limit or None), "b": _Side(args.b, args.limit or None)}
    sink = args.out.open("w", newline="") if args.out else sys.stdout
    out = csv.writer(sink, lineterminator="\n")
    out.writerow(["file", "a_cpu", "b_cpu", "ratio", "same"])
    ratios, differ = [], []
    try:
        for side in sides.values():  # warm: imports and cached tables out of the first timing
            if names:
                side.solve(args.designs / names[0])
        for i, name in enumerate(names):
            best: dict[str, float] = {}
            rows: dict[str, dict[str, object]] = {}
            for r in range(args.reps):
                for key in ("ab" if (i + r) % 2 == 0 else "ba"):
                    rows[key] = sides[key].solve(args.designs / name)
                    best[key] = min(best.get(key, float("inf")), float(rows[key]["cpu_seconds"]))
            same = all(rows["a"].get(k) == rows["b"].get(k) for k in ("faces", "variables", "states", "status"))
            if not same:
                differ.append(name)
            ratio = best["b"] / max(best["a"], 1e-4)
            ratios.append(ratio)
            out.writerow([name, best["a"], best["b"], round(ratio, 4), "yes" if same else "no"])
            sink.flush()
    finally:
        for side in sides.values():
            side.close()
        if args.out:
            sink.close()
    if ratios:
        print(f"# {len(ratios)} designs: median ratio b/a {statistics.median(ratios):.3f}", file=sys.stderr)
    print(f"# counts that differ: {differ or 'none'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
