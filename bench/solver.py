"""Time the origami layer-order solver over a folder of FOLD / .cp files.

    python bench/solver.py FOLDER [--limit N] [--timeout S]

Prints CSV on stdout (file,vertices,faces,variables,states,seconds,status,cpu_seconds) and a closing
note on stderr: median and p90 seconds, and how many finished within 30 s. Files run one
at a time in a worker process, killed and replaced when a file overruns its budget.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import os
import statistics
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path


def solve_file(path: str, limit: int | None, timeout: float | None) -> dict[str, object]:
    from shredfold.origami.layers import solve_layers
    from shredfold.origami.pattern import read_pattern

    t0, c0 = time.perf_counter(), time.process_time()
    row: dict[str, object] = {"file": Path(path).name}
    try:
        text = Path(path).read_text()
        cp = read_pattern(text, "cp" if path.endswith(".cp") else "fold")
        row.update(vertices=len(cp.vertices), faces=cp.n_faces)
        res = solve_layers(cp, limit=limit, timeout=timeout)
        row.update(variables=res.variables, states=res.states if res.satisfiable else 0)
        row["status"] = res.status if res.status != "unsatisfiable" else f"unsatisfiable ({res.reason})"
    except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not stop
        row["status"] = f"error: {type(exc).__name__}: {exc}".replace(",", ";")
    row["seconds"] = round(time.perf_counter() - t0, 4)
    row["cpu_seconds"] = round(time.process_time() - c0, 4)
    return row


def _serve(conn: Connection) -> None:
    while True:
        job = conn.recv()
        if job is None:
            return
        conn.send(solve_file(*job))


class _Worker:
    """A long-lived solver process, replaced when it overruns its budget."""

    def __init__(self) -> None:
        self.conn, child = mp.get_context("spawn").Pipe()
        self.proc = mp.get_context("spawn").Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()

    def run(
        self, job: tuple[str, int | None, float | None], wait: float, cpu: float | None = None
    ) -> dict[str, object] | None:
        """The job's row, or None when it ran past ``wait`` seconds (or ``cpu`` seconds of
        the worker's processor time: on a loaded machine the wall clock says little)."""
        self.conn.send(job)
        start, used = time.monotonic(), cpu_seconds(self.proc.pid)
        while time.monotonic() - start < wait:
            if self.conn.poll(0.2):
                return self.conn.recv()
            if cpu is not None and cpu_seconds(self.proc.pid) - used > cpu:
                break
        self.proc.kill()
        self.proc.join()
        return None


def cpu_seconds(pid: int) -> float:
    """User + system processor seconds of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--limit", type=int, default=None, help="states per component (default: all)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per design")
    args = ap.parse_args(argv)
    files = sorted(str(p) for p in args.folder.iterdir() if p.suffix in (".fold", ".cp"))
    fields = ["file", "vertices", "faces", "variables", "states", "seconds", "status", "cpu_seconds"]
    out = csv.DictWriter(sys.stdout, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    out.writeheader()
    rows = []
    worker = _Worker()
    for f in files:
        # the solver watches its own deadline; the margin covers setup it cannot interrupt
        row = worker.run((f, args.limit, args.timeout), args.timeout + 10)
        if row is None:
            row = {"file": Path(f).name, "seconds": args.timeout, "status": "timeout"}
            worker = _Worker()
        rows.append(row)
        out.writerow(row)
        sys.stdout.flush()
    worker.conn.send(None)
    secs = sorted(float(r["seconds"]) for r in rows)
    if secs:
        p90 = secs[min(len(secs) - 1, int(round(0.9 * (len(secs) - 1))))]
        done = [r for r in rows if r["status"] == "ok" or str(r["status"]).startswith("unsat")]
        within = sum(1 for r in done if float(r["seconds"]) <= 30)
        print(
            f"# {len(rows)} files: median {statistics.median(secs):.3f} s, p90 {p90:.3f} s, "
            f"{within} finished within 30 s",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
