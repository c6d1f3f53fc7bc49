"""``shredfold …`` commands: plan, status, release, verify, export, report, schema, serve, the
jobs Snakemake runs, and each benchmark's own (its ``commands`` hook: ShredBench's show;
OrigamiBench's designs, weights, clip and serve-env).

Every failure a user can cause (a wrong spec, a missing key, a corrupt store object, a busy
port) ends in one line naming the cause and exit status 2 (1 for a failed verification).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from shredfold import argtypes, paths
from shredfold.errors import UserError
from shredfold.spec import SpecError
from shredfold.store import CorruptObjectError

RESULTS = Path(paths.RESULTS)




def _store(results: Path) -> Any:
    from shredfold.store import Store

    return Store(results / "store")


def _plan(spec: str, results: Path | None = None, write: bool = False, limit: int | None = None) -> Any:
    from shredfold.plan import make_plan, with_limit
    from shredfold.resolve import load_spec

    store = _store(results) if results is not None and (write or (results / "store").is_dir()) else None
    try:
        return make_plan(with_limit(load_spec(spec), limit), store, write=write)
    except (ValueError, FileNotFoundError) as exc:
        if isinstance(exc, SpecError):
            raise
        raise UserError(f"{spec}: {exc}") from None


# ---------------------------------------------------------------- plan


def cmd_plan(args: argparse.Namespace) -> int:
    # what is costly to derive (the origami design catalogue) is kept in the results store,
    # as a Snakemake run keeps it: the same spec plans fast the second time, from either
    plan = _plan(args.spec, Path(args.results), write=not args.no_cache, limit=args.limit)
    if args.cost:
        from shredfold.cost import estimate, render

        results = Path(args.results)
        report = estimate(plan, _store(results) if (results / "store").is_dir() else None)
        print(json.dumps(report.as_json(), indent=1) if args.json else render(report))
        return 0
    if args.json:
        print(json.dumps(plan.summary(), indent=1))
        return 0
    print(f"spec {plan.spec.path}")
    asked = [s for s in plan.item_sets.values() if s.asked]
    print(f"{len(asked)} item sets, {sum(len(s.items) for s in asked)} items")
    for s in asked:
        labels = " ".join(f"{k}={v}" for k, v in s.labels.items())
        needs = f" (after {len(s.needs)} set(s) it needs)" if s.needs else ""
        print(f"  set {s.task:16s} {labels:28s} {s.key[:16]}  {len(s.items)} items{needs}")
    others = len(plan.item_sets) - len(asked)
    if others:
        print(f"{others} set(s) built only for the sets above (e.g. a design validation each, run in parallel)")
    print(f"{len(plan.cells)} cells")
    for c in plan.cells:
        print(f"  cell {c.name:44s} query {c.query_key[:16]} score {c.score_key[:16]}")
    from shredfold.models.endpoints import key_routes

    routes = key_routes(plan.spec.models)
    print(f"{len(routes)} API key(s) sent (variable -> host)")
    for r in routes:
        print(f"  key  {r.line()}")
    for notes in plan.notes.values():
        for note in notes:
            print(f"note: {note}")
    return 0


# ---------------------------------------------------------------- status


def _results_folder(arg: str) -> Path:
    """RESULTS as given: the results folder, or a working directory that holds one."""
    given = Path(arg)
    if not (given / Path(paths.PLANS).name).is_dir() and (given / paths.RESULTS).is_dir():
        return given / paths.RESULTS
    return given


def cmd_status(args: argparse.Namespace) -> int:
    import time

    from shredfold.plan import load_plan
    from shredfold.status import newest_plan, render, run_status

    results = _results_folder(args.results)
    if args.spec:
        plan, plan_file = _plan(args.spec, results if results.is_dir() else None, limit=args.limit), ""
    else:
        if args.limit is not None:
            raise UserError("--limit goes with --spec (a plan file already says whether its run is limited)")
        found = newest_plan(results)
        if found is None:
            raise UserError(f"no plan under {results}/plans: run snakemake first, or give --spec")
        try:
            plan = load_plan(found)
        except (ValueError, KeyError) as exc:
            raise UserError(f"{found}: not a readable plan ({exc}); give --spec") from None
        plan_file = found.name[:16]
    workdir = results.parent
    clear = "\x1b[H\x1b[2J" if sys.stdout.isatty() else ""
    idle_polls = 0
    try:
        while True:
            status = run_status(plan, workdir, plan_file)
            text = render(status, cells=args.cells)
            if args.watch is None:
                print(text)
                return 0
            print(f"{clear}{time.strftime('%H:%M:%S')}  {text}\n", flush=True)
            if status.finished:
                return 0
            # A failed job and nothing running, twice in a row (Snakemake may be between
            # jobs once): the run has stopped, and watching longer shows nothing new.
            stopped = status.failed > 0 and status.running == 0
            if stopped and idle_polls:
                print(f"the run stopped with {status.failed} failed job(s): see their logs, then run snakemake again", file=sys.stderr)
                return 1
            idle_polls = 1 if stopped else 0
            time.sleep(args.watch)
    except KeyboardInterrupt:
        return 0


# ---------------------------------------------------------------- verify


def cmd_release(args: argparse.Namespace) -> int:
    import time

    from shredfold.plan import current_attempts
    from shredfold.release import ReleaseError, make_release

    results = Path(args.results)
    t0 = time.perf_counter()
    # The attempts the last run made, failed items and all: with real APIs some items
    # always fail, and a release says how many and why rather than waiting for none.
    plan = current_attempts(_plan(args.spec, results, limit=args.limit), results.parent)
    try:
        made = make_release(plan, results.parent, args.out, with_samples=args.with_samples, force=args.force)
    except ReleaseError as exc:
        raise UserError(str(exc)) from None
    except CorruptObjectError as exc:
        raise UserError(f"{exc}; run `shredfold verify --store` and snakemake again") from None
    print(f"release {args.out}: sha256 {made.digest} ({time.perf_counter() - t0:.1f} s)")
    print(made.failures.line())
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    if args.path is not None:
        if args.store is not None:
            raise UserError("give a release PATH or --store RESULTS, not both")
        return _verify_release(args.path)
    if args.store is None:
        raise UserError("give a release PATH, or --store [RESULTS] to check a results store")
    store = _store(Path(args.store))
    if not store.root.is_dir():
        raise UserError(f"no store at {store.root}")
    checked = 0
    problems: dict[str, list[str]] = {}
    for stage in store.stages():
        for key in store.all_keys(stage):
            checked += 1
            found = store.verify(stage, key)
            if found:
                problems.setdefault(stage, []).extend(found)
    for found in problems.values():
        for p in found:
            print(f"problem: {p}")
    total = sum(len(v) for v in problems.values())
    by_stage = ", ".join(f"{s}: {len(v)}" for s, v in sorted(problems.items())) or "none"
    print(f"{checked} objects checked under {store.root}; {total} problem(s) ({by_stage})")
    return 1 if total else 0


def _verify_release(path: str) -> int:
    import time

    from shredfold.verify import VerifyError, verify

    t0 = time.perf_counter()
    try:
        report = verify(path)
    except VerifyError as exc:
        raise UserError(str(exc)) from None
    for note in report.notes:
        print(f"note: {note}")
    if report.failures is not None:
        print(report.failures.line())
    for d in report.differences:
        print(f"difference: {d.line()}")
    counts = ", ".join(f"{v} {k}" for k, v in report.counts.items())
    verdict = "verified" if report.ok else f"{len(report.differences)} difference(s)"
    print(f"{path}: {verdict} ({counts}; {time.perf_counter() - t0:.1f} s, no model called)")
    return 0 if report.ok else 1


# ---------------------------------------------------------------- export


def cmd_export(args: argparse.Namespace) -> int:
    import logging
    import time

    from shredfold.export.hf import ExportError, export_hf
    from shredfold.export.rows import MissingItemsError

    results = Path(args.results)
    t0 = time.perf_counter()
    try:
        spec_text = Path(args.spec).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{args.spec}: cannot read the spec ({exc})") from None
    plan = _plan(args.spec, results, write=not args.no_build)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        report = export_hf(plan, _store(results), args.out, spec_text=spec_text, build=not args.no_build, force=args.force)
    except (ExportError, MissingItemsError) as exc:
        raise UserError(str(exc)) from None
    except CorruptObjectError as exc:
        raise UserError(f"{exc}; run `shredfold verify --store` and snakemake again") from None
    print(f"{report.line()} ({time.perf_counter() - t0:.1f} s)")
    return 0


# ---------------------------------------------------------------- schema


def cmd_schema(args: argparse.Namespace) -> int:
    from shredfold.spec import json_schemas

    folder = Path(args.dir)
    drift = []
    for name, schema in json_schemas().items():
        text = json.dumps(schema, indent=2, sort_keys=True) + "\n"
        path = folder / name
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                drift.append(name)
        else:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if drift:
        print(f"schemas out of date: {', '.join(drift)}; run `shredfold schema`", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------- jobs

# Objects a job can make again from the spec (moved aside when corrupt and rebuilt on the
# next run); answers are not among them: they cost money.
def _rebuild_hint(exc: CorruptObjectError, plan: Any, args: argparse.Namespace) -> str:
    from shredfold.calls import RESPONSE_STAGE
    from shredfold.store import Store

    store: Store = _store(Path(args.results))
    if exc.stage == RESPONSE_STAGE:
        return (
            "an answer is never asked again silently (it may have cost money): inspect or "
            "restore it, or run again with `--config reask_corrupt=true` to ask the model again"
        )
    moved = store.quarantine(exc.stage, exc.key) if store.path(exc.stage, exc.key).exists() else None
    if plan is not None and args.key and args.stage in ("query", "score"):
        # Snakemake does not redo a chain whose final outputs exist: the next plan moves this
        # cell on to a new attempt (new paths), whose jobs rebuild what is missing.
        from shredfold.store import atomic_write_json

        cell = plan.cell(args.key, args.where)
        attempt = paths.attempt_of(args.out[0], args.key)
        note = {"attempt": attempt, "object": f"{exc.stage}/{exc.key}/{exc.name}", "why": exc.why}
        atomic_write_json(paths.repair_path(cell.score_where, cell.score_key), note)
    where = f" to {moved}" if moved else ""
    return f"it was moved aside{where} and will be rebuilt: run the same command again"


def cmd_job(args: argparse.Namespace) -> int:
    from shredfold.errors import InputError
    from shredfold.plan import StalePlanError, load_plan

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    plan = load_plan(args.plan)
    store = _store(Path(args.results))
    try:
        _run_job(args, plan, store)
    except MemoryError:
        raise UserError(_out_of_memory(args, "the job ran out of memory (MemoryError)")) from None
    except CorruptObjectError as exc:
        raise UserError(f"{exc}; {_rebuild_hint(exc, plan, args)}") from None
    # a user's file changed or broke since the plan (a sample folder, a design, the cell's
    # manifest since its query, weights that are not what they claim)
    except InputError as exc:
        raise UserError(str(exc)) from None
    except StalePlanError as exc:
        raise UserError(str(exc)) from None
    finally:
        _log_memory(args)
    return 0


def _log_memory(args: argparse.Namespace) -> None:
    """The job's peak memory against what its rule declared (the numbers bench/job_memory.py
    collects; a peak over the declaration is a warning to raise it)."""
    from shredfold.progress import peak_rss_mb

    peak = peak_rss_mb()
    log = logging.getLogger("shredfold.job")
    if args.mem_mb and peak > args.mem_mb:
        log.warning("job %s: peak RSS %.0f MB, over the %d MB its rule declares (mem_mb): "
                    "raise it with --set-resources %s:mem_mb=%d", args.stage, peak, args.mem_mb,
                    _RULES.get(args.stage, args.stage), int(peak * 1.5))  # fmt: skip
    else:
        declared = f" of mem_mb {args.mem_mb} declared" if args.mem_mb else ""
        log.info("job %s: peak RSS %.0f MB%s", args.stage, peak, declared)


# The Snakemake rule of each job stage (for messages that name it).
_RULES = {"set": "item_set", "query": "query", "score": "score", "aggregate": "aggregate", "report": "report"}


def _out_of_memory(args: argparse.Namespace, what: str) -> str:
    rule = _RULES.get(args.stage, args.stage)
    declared = f"declared mem_mb={args.mem_mb}" if args.mem_mb else "no mem_mb declared"
    return (
        f"{what}: rule {rule}, {args.name or args.key or args.stage}, {declared}. Give it more "
        f"with --set-resources {rule}:mem_mb=N, or run fewer jobs at once (--resources mem_mb=N "
        "bounds what they declare together)"
    )


def cmd_job_failed(args: argparse.Namespace) -> int:
    """After a job's process ended with ``status`` (the rule's shell runs this only then):
    one line on stderr, which Snakemake shows, and, for a job killed by a signal, at the end
    of its log (a job that exited on its own has written its cause there last). A job killed
    by SIGKILL that did not say why was, nearly always, killed by the kernel for memory."""
    import signal as sig

    status = args.status
    if status > 128 and status - 128 == sig.SIGKILL:
        why = _out_of_memory(args, "killed by SIGKILL, most likely by the kernel's out-of-memory killer")
        peak = _last_peak(Path(args.log))
        if peak is not None:
            why += f" (its peak RSS was at least {peak:.0f} MB when last recorded)"
    elif status > 128:
        try:
            name = sig.Signals(status - 128).name
        except ValueError:
            name = f"signal {status - 128}"
        why = f"rule {_RULES[args.stage]}, {args.name or args.key}: stopped by {name}"
    else:
        # the job ended on its own and its log ends with its cause (one line): leave it last
        why = f"rule {_RULES[args.stage]}, {args.name or args.key}: failed with exit status {status}; see {args.log}"
        print(f"shredfold: {why}", file=sys.stderr)
        return status if 0 < status < 256 else 1
    print(f"shredfold: {why}", file=sys.stderr)
    try:  # a killed job could not say why: its log says it
        with open(args.log, "a", encoding="utf-8") as fh:
            fh.write(f"shredfold: {why}\n")
    except OSError:
        pass
    return status if 0 < status < 256 else 1


def _last_peak(log: Path) -> float | None:
    """The peak RSS a job's progress state recorded last (it is written every interval)."""
    from shredfold.progress import read_state

    state = read_state(paths.progress_path(str(log)))
    return float(state["peak_rss_mb"]) if state and "peak_rss_mb" in state else None


def _run_job(args: argparse.Namespace, plan: Any, store: Any) -> None:
    """The job of ``args.stage`` (the OOM and error handling is the caller's)."""
    if args.stage == "set":
        from shredfold.stages.build import run_set

        run_set(plan, args.key, args.out[0], store)
    elif args.stage == "query":
        from shredfold.stages.query import run_query

        # None defers to SHREDFOLD_REPLAY_ONLY in the environment.
        run_query(plan, args.key, args.where, args.out[0], store, replay_only=args.replay_only or None)
    elif args.stage == "score":
        from shredfold.stages.score import run_score

        run_score(plan, args.key, args.where, args.input, args.out[0], store)
    elif args.stage == "aggregate":
        from shredfold.aggregate import Grid, write_tables

        grid = Grid.of(plan, store)
        # on screen (the rule shows this job's output): what the plan and the set jobs
        # left out, as the leaderboard's notes say it
        for note in grid.all_notes():
            print(f"note: {note}", file=sys.stderr)
        if grid.nothing_left:
            raise UserError(grid.nothing_left[0])
        # Snakemake passes the tables of the cells' current attempts (see plan.resolve_attempts).
        write_tables(args.tables or plan.score_paths, grid, args.out[0], args.out[1:], args.pairwise)
    elif args.stage == "report":
        from shredfold.report.build import write_report

        made = write_report(plan, Path(args.results).parent, args.out[0], args.tables)
        logging.getLogger("shredfold.report").info("report %s: %d bytes in %.1f s", args.out[0], made["bytes"], made["seconds"])


# ---------------------------------------------------------------- serve


def cmd_serve(args: argparse.Namespace) -> int:

    from shredfold.serve import ServeError, serve

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            print(f"shredfold serve: environment variable {args.api_key_env} is not set", file=sys.stderr)
            return 2
    try:
        server = serve(
            args.model,
            host=args.host,
            port=args.port,
            results=Path(args.results) if args.results else None,
            faults=args.faults,
            log_path=Path(args.log) if args.log else None,
            api_key=api_key,
            retry_after_s=args.retry_after,
            slow_s=args.slow,
            delay_s=args.delay,
            max_body_bytes=int(args.max_body_mb * 2**20),
        )
    except ServeError as exc:
        print(f"shredfold serve: {exc}", file=sys.stderr)
        return 2
    # A parent that ignores SIGINT hands that on through exec, and Ctrl-C (or a test's
    # SIGINT) would then never reach the drain below; take the default handler back. Before
    # the readiness line: a caller may signal the moment it reads it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # Tests and scripts wait for this line (and read the port from it when --port 0);
        # printed inside the try, so a SIGINT the moment it is read still drains and exits 0.
        print(f"serving {args.model} at {server.url}", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        # Let requests in progress finish and log their lines before the log is closed.
        server.wait_idle(timeout=10)
        server.server_close()
    return 0


# ---------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="shredfold", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    sp = sub.add_parser("plan", help="print the grid of a spec and its content keys")
    sp.add_argument("spec")
    sp.add_argument("--json", action="store_true")
    sp.add_argument(
        "--cost", action="store_true",
        help="per model: requests, images, pixels, input tokens and the dollar estimate (no call made)",
    )  # fmt: skip
    sp.add_argument("--results", default=str(RESULTS), help="results folder whose store keeps costly plan inputs (the design catalogue)")
    sp.add_argument("--no-cache", action="store_true", help="write nothing: read the results store only if it exists")
    sp.add_argument("--limit", type=argtypes.count, help="a quick run's plan: the first N items of every cell (as --config limit=N)")
    sp.set_defaults(func=cmd_plan)

    sp = sub.add_parser(
        "status", help="where a run stands (cells done, running, pending; items answered; errors; "
        "spend against budgets), read from the results while Snakemake runs",
    )  # fmt: skip
    sp.add_argument("results", nargs="?", default=str(RESULTS), help="the results folder (default results)")
    sp.add_argument("--spec", help="the run of this spec (default: the plan Snakemake wrote or used last)")
    sp.add_argument("--limit", type=argtypes.count, help="with --spec: its quick run (--config limit=N)")
    sp.add_argument("--cells", action="store_true", help="also a row per cell begun")
    sp.add_argument(
        "--watch", nargs="?", type=argtypes.positive, const=5.0, metavar="SECONDS",
        help="print it again every SECONDS (default 5) until the run is done (Ctrl-C stops)",
    )  # fmt: skip
    sp.set_defaults(func=cmd_status)

    sp = sub.add_parser("release", help="write a release (folder or .tar.gz) that `verify` can check")
    sp.add_argument("--spec", default="specs/default.yaml", help="the spec whose results to release")
    sp.add_argument("--out", required=True, help="a new folder, or a file ending in .tar.gz")
    sp.add_argument("--with-samples", action="store_true", help="add every sample's images")
    sp.add_argument("--force", action="store_true", help="replace an earlier release at --out")
    sp.add_argument("--results", default=str(RESULTS))
    sp.add_argument("--limit", type=argtypes.count, help="release a quick run (snakemake --config limit=N)")
    sp.set_defaults(func=cmd_release)

    sp = sub.add_parser("verify", help="check a release (re-score it offline), or a results store")
    sp.add_argument("path", nargs="?", help="a release folder or .tar.gz")
    sp.add_argument("--store", nargs="?", const=str(RESULTS), metavar="RESULTS", help="check every object of RESULTS/store (default results)")
    sp.set_defaults(func=cmd_verify)

    sp = sub.add_parser("export", help="write a spec's benchmark items as a data set (Hugging Face datasets folder)")
    sp.add_argument("out", help="a new (or empty) folder; --force replaces an earlier export there")
    sp.add_argument("--format", choices=["hf"], default="hf", help="hf: Parquet with image features and a dataset card")
    sp.add_argument("--spec", default="specs/default.yaml", help="the spec whose items to export")
    sp.add_argument("--results", default=str(RESULTS), help="the results folder whose store holds (and receives) the items")
    sp.add_argument("--no-build", action="store_true",
                    help="refuse, naming Snakemake, when an item is not in the store (default: build it as the set jobs do)")
    sp.add_argument("--force", action="store_true", help="replace an earlier export at OUT")
    sp.set_defaults(func=cmd_export)

    sp = sub.add_parser("schema", help="write (or --check) the JSON Schemas in schemas/")
    sp.add_argument("--dir", default="schemas")
    sp.add_argument("--check", action="store_true")
    sp.set_defaults(func=cmd_schema)

    sp = sub.add_parser(
        "serve", help="serve a built-in model as an OpenAI-compatible /v1/chat/completions"
    )
    sp.add_argument("--model", required=True, help="a built-in model (oracle, ocr-islands, jigsaw-ocr, origami-…) or echo")
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", type=argtypes.port, default=8000, help="0 picks a free port (printed)")
    sp.add_argument("--results", help="results folder whose store holds the samples (oracle)")
    sp.add_argument("--faults", help="fault schedule, e.g. '429,500|ok' (see shredfold.serve.faults)")
    sp.add_argument("--retry-after", type=float, default=1.0, help="Retry-After of 429/503 (s)")
    sp.add_argument("--slow", type=float, default=5.0, help="delay of the 'slow' fault (s)")
    sp.add_argument("--delay", type=float, default=0.0, help="delay before every answer (s)")
    sp.add_argument("--log", help="append a JSON line per request to this file")
    sp.add_argument("--api-key-env", help="require 'Bearer $VAR' in the Authorization header")
    sp.add_argument(
        "--max-body-mb", type=argtypes.positive, default=64.0,
        help="refuse request bodies larger than this with 413 (default 64)",
    )  # fmt: skip
    sp.set_defaults(func=cmd_serve)

    from shredfold.tasks.registry import benchmarks

    for bench in benchmarks():  # a benchmark's own commands (show, designs, weights, clip, serve-env)
        if bench.commands is not None:
            bench.commands(sub)

    sp = sub.add_parser("job", help="run one pipeline job (called by Snakemake rules)")
    sp.add_argument("stage", choices=["set", "query", "score", "aggregate", "report"])
    sp.add_argument("--plan", required=True, help="the plan file Snakemake wrote")
    sp.add_argument("--key", default="")
    sp.add_argument("--where", default="", help="query/score: the cell's path part")
    sp.add_argument("--input", default="")
    sp.add_argument("--out", nargs="+", required=True)
    sp.add_argument("--results", default=str(RESULTS))
    sp.add_argument(
        "--replay-only", action="store_true", help="query: fail if any model call would be made"
    )
    sp.add_argument("--tables", nargs="*", help="aggregate, report: the cell tables (default: the plan's)")
    sp.add_argument("--pairwise", help="aggregate: also write the pairwise tests here")
    sp.add_argument("--mem-mb", type=int, default=0, help="the memory its rule declared (for messages)")
    sp.add_argument("--name", default="", help="the set or cell it works on (for messages)")
    sp.set_defaults(func=cmd_job)

    sp = sub.add_parser("job-failed", help="say why a pipeline job failed (called by the Snakemake rules)")
    sp.add_argument("stage", choices=list(_RULES))
    sp.add_argument("--status", type=int, required=True, help="the job's exit status as the shell saw it")
    sp.add_argument("--log", required=True, help="the job's log (the reason is added to it)")
    sp.add_argument("--mem-mb", type=int, default=0)
    sp.add_argument("--name", default="")
    sp.add_argument("--key", default="")
    sp.set_defaults(func=cmd_job_failed)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SpecError as exc:
        print(f"spec error: {exc}", file=sys.stderr)
        return 2
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
