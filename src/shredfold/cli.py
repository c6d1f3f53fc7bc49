"""``shredfold …`` commands: plan, show, schema, and the job entry points Snakemake calls."""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import signal
import sys
from pathlib import Path

from shredfold.spec import SpecError

RESULTS = Path("results")


def _store(results: Path):
    from shredfold.store import Store

    return Store(results / "store")


def _plan(spec: str):
    from shredfold.plan import make_plan
    from shredfold.spec import load_spec

    return make_plan(load_spec(spec))


def cmd_plan(args: argparse.Namespace) -> int:
    plan = _plan(args.spec)
    if args.json:
        print(json.dumps(plan.summary(), indent=1))
        return 0
    print(f"spec {plan.spec.path}")
    print(f"{len(plan.sets)} sample sets, {sum(len(s.items) for s in plan.sets.values())} samples")
    for s in plan.sets.values():
        print(f"  set {s.domain:12s} N={s.n:<3d} {s.key[:16]}  {len(s.items)} items")
        for it in s.items:
            print(f"    sample {it.key}  {it.doc.doc_id}")
    print(f"{len(plan.cells)} cells")
    for c in plan.cells:
        print(f"  cell {c.name:40s} query {c.query_key[:16]} score {c.score_key[:16]}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from shredfold.shred.sample import SAMPLE_STAGE

    store = _store(Path(args.results))
    matches = [k for k in store.keys(SAMPLE_STAGE) if k.startswith(args.key)]
    if not matches:
        print(f"no sample with key starting {args.key!r} under {store.root}", file=sys.stderr)
        return 2
    if len(matches) > 1:
        print(f"key prefix {args.key!r} is ambiguous: {len(matches)} samples", file=sys.stderr)
        return 2
    src = store.path(SAMPLE_STAGE, matches[0])
    out = Path(args.out or f"show-{matches[0][:12]}")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(src, out, ignore=shutil.ignore_patterns("_manifest.json"))
    print(f"sample {matches[0]} written to {out}/ (pieces/, composite.png, page.png, truth.txt)")
    return 0


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


def cmd_job(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    plan = _plan(args.spec)
    store = _store(Path(args.results))
    if args.stage == "shred":
        from shredfold.stages.shred import run_sample_set

        run_sample_set(plan, args.key, args.out[0], store)
    elif args.stage == "query":
        from shredfold.stages.query import run_query_cell

        # None defers to SHREDFOLD_REPLAY_ONLY in the environment.
        run_query_cell(plan, args.key, args.out[0], store, replay_only=args.replay_only or None)
    elif args.stage == "score":
        from shredfold.stages.score import run_score_cell

        run_score_cell(plan, args.key, args.input, args.out[0], store)
    elif args.stage == "origami-set":
        from shredfold.stages.origami import run_origami_set

        run_origami_set(plan, args.key, args.out[0], store)
    elif args.stage == "origami-run":
        from shredfold.stages.origami import run_origami_cell

        run_origami_cell(plan, args.key, args.out[0], store, replay_only=args.replay_only or None)
    elif args.stage == "origami-score":
        from shredfold.stages.origami import score_origami_cell

        score_origami_cell(plan, args.key, args.input, args.out[0], store)
    elif args.stage == "aggregate":
        from shredfold.aggregate import write_tables

        grans = plan.spec.spec.shred.granularities if plan.spec.spec.shred else []
        # Snakemake passes the tables of the cells' current attempts (-rN); see plan.resolve_attempts.
        write_tables(args.tables or plan.score_paths, grans, *args.out[:3])
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import os

    from shredfold.server import ServeError, serve

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


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return int(text)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="shredfold", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    sp = sub.add_parser("plan", help="print the grid of a spec and its content keys")
    sp.add_argument("spec")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_plan)

    sp = sub.add_parser("show", help="write a sample's pieces, composite and truth to a folder")
    sp.add_argument("key", help="sample key or a unique prefix of it")
    sp.add_argument("--out", help="folder to write (default show-KEY)")
    sp.add_argument("--results", default=str(RESULTS))
    sp.set_defaults(func=cmd_show)

    sp = sub.add_parser("schema", help="write (or --check) the JSON Schemas in schemas/")
    sp.add_argument("--dir", default="schemas")
    sp.add_argument("--check", action="store_true")
    sp.set_defaults(func=cmd_schema)

    sp = sub.add_parser(
        "serve", help="serve a built-in model as an OpenAI-compatible /v1/chat/completions"
    )
    sp.add_argument("--model", required=True, help="a built-in model (oracle, ocr-islands, jigsaw-ocr, origami-…) or echo")
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", type=_port, default=8000, help="0 picks a free port (printed)")
    sp.add_argument("--results", help="results folder whose store holds the samples (oracle)")
    sp.add_argument("--faults", help="fault schedule, e.g. '429,500|ok' (see shredfold.server)")
    sp.add_argument("--retry-after", type=float, default=1.0, help="Retry-After of 429/503 (s)")
    sp.add_argument("--slow", type=float, default=5.0, help="delay of the 'slow' fault (s)")
    sp.add_argument("--delay", type=float, default=0.0, help="delay before every answer (s)")
    sp.add_argument("--log", help="append a JSON line per request to this file")
    sp.add_argument("--api-key-env", help="require 'Bearer $VAR' in the Authorization header")
    sp.add_argument(
        "--max-body-mb", type=_positive, default=64.0,
        help="refuse request bodies larger than this with 413 (default 64)",
    )  # fmt: skip
    sp.set_defaults(func=cmd_serve)

    sp = sub.add_parser("job", help="run one pipeline job (called by Snakemake rules)")
    sp.add_argument("stage", choices=["shred", "query", "score", "origami-set", "origami-run", "origami-score", "aggregate"])
    sp.add_argument("--spec", required=True)
    sp.add_argument("--key", default="")
    sp.add_argument("--input", default="")
    sp.add_argument("--out", nargs="+", required=True)
    sp.add_argument("--results", default=str(RESULTS))
    sp.add_argument(
        "--replay-only", action="store_true", help="query: fail if any model call would be made"
    )
    sp.add_argument("--tables", nargs="*", help="aggregate: the cell tables (default: the plan's)")
    sp.set_defaults(func=cmd_job)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SpecError as exc:
        print(f"spec error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
