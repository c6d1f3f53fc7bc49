"""Where a Snakemake run's time went: job seconds by kind, read from the run's own log.

    python bench/run_times.py [LOG ...] [--by model|rule] [--json OUT]

LOG is a Snakemake log (default: the newest in ``.snakemake/log/``; give two to set runs
side by side, e.g. before and after a change). A job's seconds run from the line that starts
it to the line that says it finished, so they are wall seconds at Snakemake's one-second
resolution, including the job's interpreter start and imports; on a machine with C cores
busy throughout, the run's wall time is about the sum over C. Rows group jobs by what they
do: ``Ask <model>`` (query), ``Score``, ``Build shred`` / ``Build origami`` (item sets) and
the rest by rule (``--by rule`` groups queries by rule alone).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
_START = re.compile(r"^(?:local)?[Jj]ob (\d+): (.+)$")
_DONE = re.compile(r"^Finished job(?:id:)? (\d+)")
_ELAPSED = re.compile(r"^Elapsed time: (\d+):(\d\d):(\d\d(?:\.\d+)?)")


def job_kind(message: str, by: str) -> str:
    """The group of a job, from the one-line ``message:`` its rule prints."""
    verb, _, rest = message.partition(" ")
    if verb == "Ask":
        return "Ask" if by == "rule" else f"Ask {rest.split('/')[0]}"
    if verb == "Build":
        return f"Build {rest.split('/')[0]}"
    return verb


def read_log(path: Path, by: str) -> dict[str, object]:
    """Per-kind job count and seconds (sum, max) of one run, and its elapsed time."""
    stamp: datetime | None = None
    started: dict[str, tuple[datetime, str]] = {}
    seconds: dict[str, list[float]] = defaultdict(list)
    elapsed = None
    for line in path.read_text(errors="replace").splitlines():
        if m := _STAMP.match(line):
            stamp = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
        elif (m := _START.match(line)) and stamp is not None:
            started[m.group(1)] = (stamp, job_kind(m.group(2), by))
        elif (m := _DONE.match(line)) and stamp is not None and m.group(1) in started:
            began, kind = started.pop(m.group(1))
            seconds[kind].append((stamp - began).total_seconds())
        elif m := _ELAPSED.match(line):
            h, mnt, s = m.groups()
            elapsed = int(h) * 3600 + int(mnt) * 60 + float(s)
    kinds = {
        kind: {"jobs": len(v), "seconds": sum(v), "max": max(v)}
        for kind, v in sorted(seconds.items(), key=lambda kv: -sum(kv[1]))
    }
    return {"log": str(path), "elapsed_s": elapsed, "unfinished": len(started), "kinds": kinds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="*", type=Path)
    parser.add_argument("--by", choices=("model", "rule"), default="model")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    logs = args.logs or sorted(Path(".snakemake/log").glob("*.snakemake.log"))[-1:]
    if not logs:
        print("no Snakemake log given or found in .snakemake/log/", file=sys.stderr)
        return 2
    runs = [read_log(p, args.by) for p in logs]
    kinds = list(dict.fromkeys(k for run in runs for k in run["kinds"]))  # type: ignore[attr-defined]
    head = "".join(f" | {Path(str(r['log'])).name[:26]:>26}" for r in runs)
    print(f"{'jobs':24s}{head}")
    for kind in kinds:
        cells = []
        for run in runs:
            k = run["kinds"].get(kind)  # type: ignore[attr-defined]
            cells.append(f"{k['jobs']:4d} jobs {k['seconds']:6.0f} s (max {k['max']:3.0f})" if k else " " * 26)
        print(f"{kind:24s}" + "".join(f" | {c:>26}" for c in cells))
    totals = [sum(k["seconds"] for k in r["kinds"].values()) for r in runs]  # type: ignore[attr-defined]
    print(f"{'all jobs':24s}" + "".join(f" | {t:20.0f} s    " for t in totals))
    print(f"{'elapsed (Snakemake)':24s}" + "".join(
        f" | {r['elapsed_s'] or float('nan'):20.0f} s    " for r in runs
    ))
    for r in runs:
        if r["unfinished"]:
            print(f"note: {r['log']}: {r['unfinished']} jobs started but never finished", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
