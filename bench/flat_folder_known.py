"""Make ``src/shredfold/origami_bench/data/flat_folder/known.json``: what the package knows
about each of Flat-Folder's design files ahead of time (see :mod:`shredfold.origami_bench.known`).

    nice -n 10 python bench/flat_folder_known.py --repo FLAT_FOLDER_GIT [--workers 2]
        [--validate-timeout 300] [--count-timeout 60] [--memory-gb 5] [--only 001,360]

``--repo`` is a git clone of origamimagiro/flat-folder (any later commit will do: the pinned
files, their later revisions and the pinned ``instagram_data.csv`` are read from its history
by commit and checked against the manifest's SHA-256). Each file runs in a worker process
(``facts.facts_of``) under an address-space cap, the solver under its time limits; a file
the budget does not decide (the solver's timeout, or the worker out of memory) takes
Flat-Folder's own result from the pinned csv where it has one (``decided_by: flat-folder``;
its layer order is then not known to this engine, and its target is drawn without one).
``--only`` recomputes some files and keeps the others' records; an interrupted run resumes
from ``OUT.partial.jsonl``. Prints a summary on stderr; about 50 minutes on two busy cores.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import multiprocessing as mp
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from tqdm import tqdm

from shredfold.origami import ENGINE_VERSION
from shredfold.origami_bench import flat_folder as ff
from shredfold.origami_bench.known import KNOWN_FILE, KNOWN_FORMAT, Known, KnownFile
from shredfold.store import atomic_write_bytes, sha256_bytes

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "shredfold" / "origami_bench" / "data" / "flat_folder" / KNOWN_FILE
ABOUT = (
    "What shredfold knows ahead of time about each of Flat-Folder's design files (by "
    "SHA-256): whether it folds flat and who decided it, its flat-folded states (each "
    "component counted up to 10,000, as Flat-Folder's instagram_data.csv), and a crease "
    "order or why there is none. Made by bench/flat_folder_known.py; see "
    "shredfold.origami_bench.known."
)


def git_show(repo: Path, commit: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, check=True).stdout


def design_files(repo: Path) -> list[tuple[str, str | None, bytes]]:
    """(file name, later revision commit or None, bytes) of every manifest file, checked."""
    m = ff.manifest()
    out = []
    for e in m.entries:
        for commit, sha in ((m.commit, e.sha256), *e.later):
            data = git_show(repo, commit, e.path)
            if sha256_bytes(data) != sha:
                raise SystemExit(f"{e.path} at {commit[:7]}: SHA-256 {sha256_bytes(data)} is not the manifest's {sha}")
            out.append((e.name, None if commit == m.commit else commit, data))
    return out


def reference_rows(repo: Path) -> dict[str, dict[str, str]]:
    """Flat-Folder's instagram_data.csv at the pinned commit, by design number."""
    raw = json.loads((ROOT / "src" / "shredfold" / "origami_bench" / "data" / "flat_folder" / "manifest.json").read_text())
    ref = raw["reference_csv"]
    data = git_show(repo, raw["commit"], ref["path"])
    if sha256_bytes(data) != ref["sha256"]:
        raise SystemExit(f"{ref['path']}: SHA-256 {sha256_bytes(data)} is not the manifest's {ref['sha256']}")
    return {row["number"]: row for row in csv.DictReader(io.StringIO(data.decode("utf-8")))}


def _limit_memory(gb: float) -> None:
    cap = int(gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _facts(name: str, data: bytes, validate_timeout: float, count_timeout: float) -> dict[str, Any]:
    from shredfold.origami_bench.facts import facts_of

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        try:
            return facts_of(path, validate_timeout, count_timeout)
        except MemoryError:
            return {"over": "memory"}


def with_reference(name: str, revision: str | None, data: bytes, got: dict[str, Any], row: dict[str, str] | None,
                   budget: str) -> dict[str, Any]:  # fmt: skip
    """A record from this engine's facts, with Flat-Folder's results where the budget left
    a question open (only for pinned files: the csv describes those)."""
    rec = {"file": name, "revision": revision, **got}
    over = rec.pop("over", None)
    if over is not None:
        rec.update(folds_flat="undecided", layer_order=False,
                   why_not=f"undecided: the layer solver ran past its budget ({budget}: {over})")  # fmt: skip
    if "vertices" not in rec:  # the worker died before it counted
        rec["vertices"], rec["creases"] = ff.fold_counts(json.loads(data))
    ref_states = int(row["states"]) if row is not None and row["states"].isdigit() else None
    if revision is None and ref_states is not None:
        limited = row is not None and row["limited"] != "no limit"
        if rec["folds_flat"] == "undecided" and ref_states > 0:
            rec.update(folds_flat="yes", decided_by="flat-folder", why_not="", layer_order=False)
        if rec["folds_flat"] == "yes" and rec.get("states") is None:
            rec.update(states=ref_states, states_limited=limited, states_by="flat-folder")
    return rec


Job = tuple[str, str | None, bytes, int]  # file name, revision, bytes, attempts so far


def partial_path(out: Path) -> Path:
    """Finished records, one JSON line each, until the file is written (then removed)."""
    return out.with_name(out.name + ".partial.jsonl")


def run_pool(queue: list[Job], args: argparse.Namespace, label: str, records: dict[str, dict[str, Any]],
             bar: tqdm) -> list[Job]:  # fmt: skip
    """Run the queue in one pool of reused workers; when a worker dies (the memory cap can
    kill one outright), every file the pool was running is returned to try again, alone in
    a pool of one worker, and a file that takes that pool down is recorded as over budget."""
    rows = reference_rows(args.repo)
    ctx = mp.get_context("spawn")
    running: dict[Future[dict[str, Any]], Job] = {}
    again: list[Job] = []
    workers = args.workers if all(job[3] == 0 for job in queue) else 1
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_limit_memory, initargs=(args.memory_gb,)) as pool:
        while queue or running:
            while queue and len(running) < workers:
                job = queue.pop(0)
                running[pool.submit(_facts, job[0], job[2], args.validate_timeout, args.count_timeout)] = job
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                n, r, d, tries = job = running.pop(fut)
                try:
                    got = fut.result()
                except BrokenProcessPool:
                    if tries < 1:
                        again.append((n, r, d, tries + 1))
                        continue
                    got = {"over": "the worker died"}
                rec = Known.model_validate(with_reference(n, r, d, got, rows.get(n[:3]), label)).model_dump(mode="json")
                records[sha256_bytes(d)] = rec
                with open(partial_path(args.out), "a", encoding="utf-8") as fh:  # a crash loses no finished file
                    fh.write(json.dumps({"sha256": sha256_bytes(d), "record": rec}) + "\n")
                bar.update(1)
                bar.set_postfix_str(n[:28])
            if again:  # the pool is broken: the rest waits for a new one
                return again + [j for j in running.values()] + queue
    return again


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="a git clone of origamimagiro/flat-folder")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--validate-timeout", type=float, default=300.0)
    ap.add_argument("--count-timeout", type=float, default=60.0)
    ap.add_argument("--memory-gb", type=float, default=5.0)
    ap.add_argument("--only", default="", help="comma-separated design numbers to recompute (keep the others)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    files = design_files(args.repo)
    old: dict[str, Known] = {}
    if args.only and args.out.is_file():
        old = dict(KnownFile.model_validate_json(args.out.read_text()).designs)
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    todo = [(n, r, d) for n, r, d in files if not only or n[:3] in only]
    budget = {"validate_s": args.validate_timeout, "count_s": args.count_timeout, "memory_gb": args.memory_gb}
    label = f"{args.memory_gb:g} GB, {args.validate_timeout + args.count_timeout:g} s"
    records: dict[str, dict[str, Any]] = {}
    if partial_path(args.out).is_file():  # resume: what an interrupted run finished
        for line in partial_path(args.out).read_text().splitlines():
            got = json.loads(line)
            records[got["sha256"]] = got["record"]
    t0 = time.monotonic()
    queue = [(n, r, d, 0) for n, r, d in todo if sha256_bytes(d) not in records]
    bar = tqdm(total=len(queue), desc="designs", unit="file", dynamic_ncols=True)
    while queue:
        retry = [job for job in queue if job[3]]  # alone, so a worker that dies names its file
        if retry:
            queue = run_pool(retry, args, label, records, bar) + [job for job in queue if not job[3]]
        else:
            queue = run_pool(queue, args, label, records, bar)
    bar.close()
    merged = {**{k: v.model_dump(mode="json", exclude_none=False) for k, v in old.items()}, **records}
    out = KnownFile(
        format=KNOWN_FORMAT, about=ABOUT, commit=ff.manifest().commit, engine=ENGINE_VERSION,
        budget=budget, designs={k: Known.model_validate(v) for k, v in merged.items()},
    )  # fmt: skip
    missing = {sha256_bytes(d) for _, _, d in files} - set(out.designs)
    if missing and not args.only:
        raise SystemExit(f"{len(missing)} design files have no record (run without --only)")
    text = json.dumps(out.model_dump(mode="json"), indent=1, sort_keys=True) + "\n"
    atomic_write_bytes(args.out, text.encode("utf-8"))
    partial_path(args.out).unlink(missing_ok=True)
    by = {}
    for k in out.designs.values():
        key = f"{k.folds_flat} by {k.decided_by}"
        by[key] = by.get(key, 0) + 1
    found = sum(1 for k in out.designs.values() if k.crease_order is not None and k.crease_order.steps)
    print(f"{len(out.designs)} files in {time.monotonic() - t0:.0f} s: {by}; crease orders found: {found}; wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
