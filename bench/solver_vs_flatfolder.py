"""This engine's layer solver side by side with Flat-Folder's JavaScript solver (node).

    git clone https://github.com/origamimagiro/flat-folder ff
    git -C ff checkout COMMIT   # "commit" in src/shredfold/origami_bench/data/flat_folder/manifest.json
    python bench/solver_vs_flatfolder.py ff/examples/instagram --ff-src ff/src \\
        [--ff-driver bench/flat_folder_driver.mjs] [--limit 10000] [--timeout 30] \\
        [--ff-timeout 120] [--warm 8] [--only 001,059] [--out CSV [--resume]] [--ff-from EARLIER_CSV]

DESIGNS is a folder of ``.fold`` files (Flat-Folder's ``examples/instagram`` at the commit
pinned in ``src/shredfold/origami_bench/data/flat_folder/manifest.json``). Flat-Folder
itself is not part of this project: ``--ff-src`` is the ``src`` folder of a checkout, and
``--ff-driver`` a node script (ES module, by default ``bench/flat_folder_driver.mjs``)
serving its batch solver, warm like its batch page: ``node DRIVER SRC_DIR`` prints
``{"ready": true}``, then reads lines ``FILE<TAB>LIMIT`` (LIMIT a number or ``all``) and
answers each with one JSON line, what ``BATCH.process_file(fold, limit)`` returns
(``states`` as a string: it is a BigInt) and ``cpu_sec``, or ``{"error": "..."}``.

Designs run one at a time, each solver on one core: ours in a worker process
(``bench/solver.py``) killed past ``--timeout`` + 10 s, Flat-Folder in its node process,
killed (and started again) past ``--ff-timeout``. Each new process of either first solves
the folder's first ``--warm`` designs, untimed (node's compiler warms up over them). The
two alternate design by design so that the machine's load weighs on both alike (keep the
machine otherwise idle: load slows Flat-Folder more than this engine, see
``bench/solver_notes.md``). Then (``--retime``, the default) Flat-Folder solves the designs
it finished once more, in one new process that no timeout interrupts, and those times are
the ones compared: after each start node takes up to twice as long on its next ten or so
designs, and the first pass restarts it after every design it does not finish. Times are
each solver's own: Flat-Folder's from its parsed JSON to the count (``cpu_sec``: the node process's
processor time, every thread), ours from the file's text to the count. One CSV row per
design on stdout (or ``--out``), the summary on stderr.
"""

from __future__ import annotations

import argparse
import csv
import json
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TextIO

from solver import _Worker, cpu_seconds  # bench/solver.py: the solver benchmark's worker

# a budget is processor seconds; on a loaded machine a solver may wait this many times as
# long on the clock before it is stopped all the same
WALL_FACTOR = 2.5

FIELDS = [
    "file",
    "vertices",
    "faces",
    "ours_status",
    "ours_states",
    "ours_variables",
    "ours_sec",
    "ff_status",
    "ff_states",
    "ff_variables",
    "ff_sec",
    "ours_cpu",
    "ff_cpu",
    "match",
    "ff_cpu_first",
]


class _FlatFolder:
    """The node driver, started once and again after a design overruns its time."""

    def __init__(self, driver: Path, src: Path, warm: list[Path], limit: int | None) -> None:
        self.cmd = ["node", "--max-old-space-size=8192", str(driver), str(src)]
        self.proc: subprocess.Popen[str] | None = None
        self.warm, self.limit = warm, limit

    def _start(self) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        assert proc.stdout is not None
        if json.loads(proc.stdout.readline() or "{}").get("ready") is not True:
            raise RuntimeError(f"the Flat-Folder driver did not start: {' '.join(self.cmd)}")
        # V8 compiles Flat-Folder's hot functions over its first designs: a new process
        # takes up to 20x as long on its first few (001: 0.085 s cold, 0.004 s warm). What
        # is left after these (~1.8x on the next ten) is why the times are retaken
        assert proc.stdin is not None
        for path in self.warm:
            proc.stdin.write(f"{path}\t{'all' if self.limit is None else self.limit}\n")
            proc.stdin.flush()
            proc.stdout.readline()
        return proc

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, path: Path, limit: int | None, budget: float) -> dict[str, object]:
        """One design; past ``budget`` processor seconds (or WALL_FACTOR times that on the
        clock) the process is killed and the design recorded as a timeout."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{path}\t{'all' if limit is None else limit}\n")
        self.proc.stdin.flush()
        start, used = time.monotonic(), cpu_seconds(self.proc.pid)
        line = None
        while time.monotonic() - start < WALL_FACTOR * budget:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if ready:
                line = self.proc.stdout.readline()
                break
            if cpu_seconds(self.proc.pid) - used > budget:
                break
        if line is None:
            self.stop()
            return {"ff_status": "timeout", "ff_sec": "", "ff_cpu": round(budget, 4)}
        if not line:  # the process died (out of memory, say)
            code = self.proc.wait()
            self.proc = None
            return {"ff_status": f"error: node exited {code}"}
        out = json.loads(line)
        if "error" in out:
            return {"ff_status": f"error: {str(out['error'])[:120]}".replace(",", ";")}
        return {
            "ff_status": "ok",
            "ff_states": str(out["states"]),
            "ff_variables": out.get("variables", ""),
            "ff_sec": round(float(out["setup_sec"]) + float(out["solve_sec"]), 4),
            "ff_cpu": round(float(out["cpu_sec"]), 4),
        }


def summarise(rows: list[dict[str, object]], timeout: float) -> str:
    n = len(rows)
    ours_ok = [r for r in rows if r["ours_status"] == "ok"]
    ff_ok = [r for r in rows if r["ff_status"] == "ok"]
    both = [r for r in rows if r["ours_status"] == "ok" and r["ff_status"] == "ok"]
    within = sum(1 for r in ours_ok if float(r["ours_cpu"]) <= timeout)
    missed = [r["file"] for r in ff_ok if r["ours_status"] != "ok"]
    mismatched = [r["file"] for r in both if r["match"] != "yes"]

    def count(key: str, value: str) -> int:
        return sum(1 for r in rows if str(r[key]).startswith(value))

    def ratios(ours: str, ff: str) -> str:
        x = sorted(float(r[ours]) / max(float(r[ff]), 1e-4) for r in both)
        p90 = x[min(len(x) - 1, int(round(0.9 * (len(x) - 1))))]
        return f"median {statistics.median(x):.3f}, p90 {p90:.3f}"

    lines = [
        f"# {n} designs",
        f"# ours: {len(ours_ok)} solved, {count('ours_status', 'timeout')} timeouts, "
        f"{count('ours_status', 'unsatisfiable')} rejected, {count('ours_status', 'error')} errors; "
        f"{within} ({100 * within / max(n, 1):.1f}%) within {timeout:.0f} s of processor time",
        f"# Flat-Folder: {len(ff_ok)} solved, {count('ff_status', 'timeout')} timeouts, "
        f"{count('ff_status', 'error')} errors",
    ]
    if both:
        lines.append(f"# time ours/Flat-Folder on the {len(both)} both solve, processor: {ratios('ours_cpu', 'ff_cpu')}")
        lines.append(f"# time ours/Flat-Folder on the {len(both)} both solve, wall clock: {ratios('ours_sec', 'ff_sec')}")
    lines.append(f"# solved by Flat-Folder, not by us: {missed or 'none'}")
    lines.append(f"# state counts that differ: {mismatched or 'none'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("designs", type=Path)
    ap.add_argument("--ff-src", type=Path, required=True)
    ap.add_argument("--ff-driver", type=Path, default=Path(__file__).with_name("flat_folder_driver.mjs"))
    ap.add_argument("--limit", type=int, default=10000, help="states per component (0: all)")
    ap.add_argument("--timeout", type=float, default=30.0, help="our processor seconds per design")
    ap.add_argument("--ff-timeout", type=float, default=120.0, help="Flat-Folder's processor seconds per design")
    ap.add_argument(
        "--warm",
        type=int,
        default=8,
        help="designs (the folder's first, by name) each new process of either solver solves untimed first",
    )
    ap.add_argument(
        "--retime",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="time Flat-Folder again on the designs it solved, in one process no timeout restarts",
    )
    ap.add_argument("--only", default="", help="comma-separated design numbers (the file names' first 3 characters)")
    ap.add_argument("--out", type=Path, help="CSV file (default: stdout)")
    ap.add_argument("--resume", action="store_true", help="keep the rows already in --out and add the rest")
    ap.add_argument(
        "--ff-from",
        type=Path,
        help="take Flat-Folder's columns from this earlier output instead of running it again "
        "(its results do not depend on this engine; the times were measured then)",
    )
    args = ap.parse_args(argv)
    limit = args.limit or None
    only = set(filter(None, args.only.split(",")))
    every = sorted(p for p in args.designs.iterdir() if p.suffix == ".fold")
    files = [p for p in every if not only or p.name[:3] in only]
    warm = every[: args.warm]
    rows: list[dict[str, object]] = []
    if args.resume and args.out and args.out.exists():
        with args.out.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        done = {r["file"] for r in rows}
        files = [p for p in files if p.name not in done]
    sink = args.out.open("a" if rows else "w", newline="") if args.out else sys.stdout
    out = _writer(sink)
    if not rows:
        out.writeheader()
    # with --retime and no --out the rows come at the end, retimed
    progress = args.out is not None or not args.retime

    def warm_worker() -> _Worker:
        # a new worker first solves the warm-up designs, untimed: imports and the compiled
        # kernels' load are the process's cost, not a design's (node, alike, solves them
        # after building Flat-Folder's tables)
        fresh = _Worker()
        for path in warm:
            if fresh.run((str(path), limit, None), WALL_FACTOR * args.timeout, cpu=args.timeout) is None:
                return _Worker()  # a warm-up design overran its budget: go on unwarmed
        return fresh

    worker = warm_worker()
    flat_folder = _FlatFolder(args.ff_driver, args.ff_src, warm, limit)
    earlier: dict[str, dict[str, str]] = {}
    if args.ff_from:
        with args.ff_from.open(newline="") as fh:
            earlier = {r["file"]: r for r in csv.DictReader(fh)}
    for path in files:
        # the solver runs without its own deadline: the budget is processor time
        got = worker.run((str(path), limit, None), WALL_FACTOR * args.timeout, cpu=args.timeout)
        if got is None:
            got = {"file": path.name, "seconds": "", "cpu_seconds": args.timeout, "status": "timeout"}
            worker = warm_worker()
        row: dict[str, object] = {
            "file": path.name,
            "vertices": got.get("vertices", ""),
            "faces": got.get("faces", ""),
            "ours_status": got["status"],
            "ours_states": got.get("states", ""),
            "ours_variables": got.get("variables", ""),
            "ours_sec": got["seconds"],
            "ours_cpu": got["cpu_seconds"],
            "ff_states": "",
            "ff_variables": "",
        }
        if path.name in earlier:
            row.update({k: v for k, v in earlier[path.name].items() if k.startswith("ff_")})
        else:
            row.update(flat_folder.run(path, limit, args.ff_timeout))
        if row["ours_status"] == "ok" and row["ff_status"] == "ok":
            row["match"] = "yes" if str(row["ours_states"]) == row["ff_states"] else "no"
        else:
            row["match"] = ""
        rows.append(row)
        if progress:
            out.writerow(row)
            sink.flush()
    worker.conn.send(None)
    flat_folder.stop()
    if args.out:
        sink.close()
    if args.retime:
        retime(rows, args, warm, limit, set(earlier))
        if args.out:
            tmp = args.out.with_name(args.out.name + ".tmp")
            with tmp.open("w", newline="") as fh:
                final = _writer(fh)
                final.writeheader()
                final.writerows(rows)
            tmp.replace(args.out)
    if args.retime and not args.out:
        out.writerows(rows)
    print(summarise(rows, args.timeout), file=sys.stderr)
    return 0


def _writer(sink: TextIO) -> csv.DictWriter[str]:
    return csv.DictWriter(sink, fieldnames=FIELDS, extrasaction="ignore", lineterminator="\n")


def retime(
    rows: list[dict[str, object]], args: argparse.Namespace, warm: list[Path], limit: int | None, kept: set[str]
) -> None:
    """Flat-Folder's times again, for the designs it solved, in one new process that no
    timeout restarts: node takes up to twice as long on the ten or so designs after each
    start, warm-up or not, and the first pass restarts it after every design it does not
    finish (bench/solver_notes.md, fourth session). The first pass's time stays in
    ``ff_cpu_first``; a design that overruns its budget this time keeps it."""
    flat_folder = _FlatFolder(args.ff_driver, args.ff_src, warm, limit)
    for row in rows:
        row.setdefault("ff_cpu_first", "")
        if row["ff_status"] != "ok" or row["file"] in kept or row["ff_cpu_first"]:
            continue  # not solved, taken from --ff-from, or retimed already (--resume)
        got = flat_folder.run(args.designs / str(row["file"]), limit, args.ff_timeout)
        if got.get("ff_status") != "ok" or got.get("ff_states") != str(row["ff_states"]):
            continue
        row["ff_cpu_first"] = row["ff_cpu"]
        row.update(ff_sec=got["ff_sec"], ff_cpu=got["ff_cpu"])
    flat_folder.stop()


if __name__ == "__main__":
    raise SystemExit(main())
