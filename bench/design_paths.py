"""One pattern, whatever the path, over a whole folder (all 366 of Flat-Folder's designs).

    nice -n 10 python bench/design_paths.py FOLDER [--count-vertices 400] [--timeout 20]

For every ``.fold`` file: the benchmark's pattern (``design_from_file`` then
``Design.pattern()``) against the engine's (``read_pattern(text)``):
vertices, edges, assignments and snapping distance compared exactly, and on designs of at
most ``--count-vertices`` vertices the states counted both ways (limit 10,000 per component,
``--timeout`` seconds each). Beside them, the conversion the benchmark used before (segments
moved to the origin and rounded to 1e-12, re-arranged without the file's vertices) is
counted the same way, to show what it changed. Prints CSV on stdout and a summary on stderr.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

from shredfold.origami import CreasePattern, read_fold, read_pattern, solve_layers
from shredfold.origami_bench.designs import design_files, design_from_file


def old_conversion(text: str) -> CreasePattern:
    """What ``design_from_file`` and ``Design.pattern()`` did up to this change."""
    frame = read_fold(text).key_frame
    v = np.asarray(frame.vertices_coords, float)
    segs = v[np.asarray(frame.edges_vertices, int)]
    lo = segs.reshape(-1, 2).min(axis=0)
    span = float((segs.reshape(-1, 2).max(axis=0) - lo).max()) or 1.0
    return CreasePattern.from_segments(np.round((segs - lo) / span, 12), list(frame.edges_assignment))


def same(a: CreasePattern, b: CreasePattern) -> bool:
    return (np.array_equal(a.vertices, b.vertices) and np.array_equal(a.edges, b.edges)
            and np.array_equal(a.assignments, b.assignments) and a.eps == b.eps)  # fmt: skip


def states(p: CreasePattern, timeout: float) -> str:
    r = solve_layers(p, limit=10_000, timeout=timeout)
    return str(r.states) if r.status == "ok" else r.status if r.status == "timeout" else f"no ({r.reason})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--count-vertices", type=int, default=400)
    ap.add_argument("--timeout", type=float, default=20.0)
    args = ap.parse_args()
    out = csv.writer(sys.stdout)
    out.writerow(["file", "vertices", "same_pattern", "states_engine", "states_benchmark", "states_old", "old_same_pattern"])
    files = design_files(args.folder)
    t0 = time.monotonic()
    differ = counted = count_differ = old_differ = old_count_differ = 0
    for path in files:
        text = path.read_text()
        engine = read_pattern(text)
        bench = design_from_file(path, "folder").pattern()
        old = old_conversion(text)
        ok, old_ok = same(bench, engine), same(old, engine)
        differ += not ok
        old_differ += not old_ok
        row = [path.name, len(engine.vertices), int(ok), "", "", "", int(old_ok)]
        if len(engine.vertices) <= args.count_vertices:
            row[3:6] = [states(engine, args.timeout), states(bench, args.timeout), states(old, args.timeout)]
            if "timeout" not in (row[3], row[4]):  # a count that ran out of time compares nothing
                counted += 1
                count_differ += row[3] != row[4]
                old_count_differ += row[5] != "timeout" and row[3] != row[5]
        out.writerow(row)
        sys.stdout.flush()
    print(
        f"{len(files)} designs in {time.monotonic() - t0:.0f} s: the benchmark's pattern differs from the engine's "
        f"on {differ}; states counted both ways within {args.timeout:g} s on {counted} (<= {args.count_vertices} "
        f"vertices): differ on {count_differ}. "
        f"The old conversion: pattern differs on {old_differ}, states on {old_count_differ} of the {counted}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
