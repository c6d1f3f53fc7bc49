"""OrigamiBench's own commands (its ``commands`` hook): ``designs fetch`` (Flat-Folder's 366),
``weights fetch clip`` and ``clip finetune`` (SS's CLIP), and ``serve-env`` (the full-step
environment as an OpenEnv server). Heavy libraries are imported inside each command, so
building the parser costs a plan nothing."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from shredfold import argtypes, paths
from shredfold.errors import UserError


def cmd_designs_fetch(args: argparse.Namespace) -> int:
    from shredfold.origami_bench.fetch import FetchError, fetch
    from shredfold.origami_bench.flat_folder import manifest

    try:
        report = fetch(args.url, Path(args.to) if args.to else None, allow_partial=args.allow_partial)
    except FetchError as exc:
        raise UserError(str(exc)) from None
    for line in report.lines(manifest().commit):
        print(line)
    return 0


def cmd_weights_fetch(args: argparse.Namespace) -> int:
    from shredfold.download import FetchError
    from shredfold.metrics.clip_weights import fetch_weights, pin_for

    try:
        pin = pin_for(args.model, args.pretrained)
        got = fetch_weights(pin, args.url, Path(args.to) if args.to else None)
    except FetchError as exc:
        raise UserError(str(exc)) from None
    print(got.line())
    where = f", cache_dir: {args.to}" if args.to else ""
    print(f"SS reads it when a spec names  origami: {{clip: {{model: {pin.model}, pretrained: {pin.pretrained}{where}}}}}")
    return 0


def cmd_clip_finetune(args: argparse.Namespace) -> int:
    import time

    from shredfold.metrics.clip_finetune import (
        FinetuneError,
        Hyper,
        check_target,
        finetune,
        load_base,
    )
    from shredfold.origami_bench.clip_images import design_pictures
    from shredfold.resolve import load_spec
    from shredfold.store import Store

    t0 = time.perf_counter()
    spec = load_spec(args.spec)
    ob = spec.spec.origami
    if ob is None:
        raise UserError(f"{args.spec}: the spec has no origami section (no designs to draw)")
    base: Any = ob.clip
    if args.model or args.pretrained or args.checkpoint:
        base = ob.clip.model_copy(update={
            "model": args.model or ob.clip.model,
            "pretrained": args.pretrained,
            "checkpoint": Path(args.checkpoint) if args.checkpoint else None,
        })  # fmt: skip
    results = Path(args.results)
    hyper = Hyper(
        steps=args.steps, batch_size=args.batch_size, lr=args.lr, weight_decay=args.weight_decay,
        seed=args.seed, caption=args.caption, symmetries=not args.no_symmetries,
    )  # fmt: skip
    try:
        hyper.check()
        check_target(Path(args.out), args.force)  # before the work, as finetune checks again after it
        clip = load_base(base)
        pictures = design_pictures(ob, spec.spec.seed, Store(results / "store") if (results / "store").is_dir() else None, print)
        recipe = finetune(base, pictures, hyper, Path(args.out), force=args.force, progress=print, loaded=clip)
    except FileNotFoundError as exc:  # a design source not there (Flat-Folder's not fetched)
        raise UserError(f"{args.spec}: origami.designs: {exc}") from None
    except (FinetuneError, ValueError) as exc:
        raise UserError(str(exc)) from None
    t = recipe["training"]
    print(
        f"{args.out}: {recipe['weights']['file']} SHA-256 {recipe['weights']['sha256']} "
        f"({recipe['data']['pictures']} pictures, {len(recipe['data']['categories'])} categories, "
        f"{len(t['loss'])} steps: loss over the pictures {t['set_loss_before']:.4f} → {t['set_loss_after']:.4f}, category accuracy "
        f"{t['category_accuracy_before']:.3f} → {t['category_accuracy_after']:.3f}; {time.perf_counter() - t0:.0f} s)"
    )
    print(f"SS uses it when a spec names  origami: {{clip: {{checkpoint: {args.out}}}}}")
    return 0


def cmd_serve_env(args: argparse.Namespace) -> int:
    """The origami environment as an OpenEnv server (the ``[openenv]`` extra)."""
    import ipaddress

    prog = "shredfold serve-env"
    try:
        from shredfold.origami_bench.episode import resolve_target
        from shredfold.origami_bench.openenv_env import ResetOptions
        from shredfold.origami_bench.serve_env import (
            ServeEnvConfig,
            ServeEnvError,
            bind,
            server,
            url_of,
        )
    except ImportError as exc:
        print(f"{prog}: needs the [openenv] extra (pip install 'shredfold[openenv]'): {exc}", file=sys.stderr)
        return 2
    from pydantic import ValidationError

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    target: str | int = int(args.target) if args.target.isdigit() else args.target
    threshold = args.gs_threshold.lower()
    if threshold != "none" and not argtypes.is_number(threshold):
        print(f"{prog}: --gs-threshold: a number from 0 to 1, or 'none'; got {args.gs_threshold!r}", file=sys.stderr)
        return 2
    try:
        defaults = ResetOptions(
            target=target,
            kind=args.kind,
            step_limit=args.step_limit,
            image_size=args.image_size,
            gs_threshold=None if threshold == "none" else float(threshold),
        )
        resolve_target(defaults.target)  # an unknown design fails here, not at the first reset
    except (ValidationError, ValueError) as exc:
        first = exc.errors(include_url=False)[0] if isinstance(exc, ValidationError) else None
        why = f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}" if first else str(exc)
        print(f"{prog}: {why}", file=sys.stderr)
        return 2
    cfg = ServeEnvConfig(
        defaults=defaults,
        reward=args.reward,
        max_episodes=args.max_episodes,
        max_sessions=args.max_sessions,
        max_body_bytes=int(args.max_body_kb * 1024),
    )
    try:
        sock = bind(args.host, args.port)
    except ServeEnvError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    with contextlib.suppress(ValueError):
        if not ipaddress.ip_address(sock.getsockname()[0]).is_loopback:
            print(f"{prog}: listening beyond this machine: anyone who reaches the port can play", file=sys.stderr)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as cmd_serve: a parent may ignore it
    try:
        print(f"serving the origami environment at {url_of(sock)}", flush=True)
        server(cfg).run(sockets=[sock])  # uvicorn drains and returns on SIGINT or SIGTERM
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    """Add OrigamiBench's commands to ``shredfold``'s."""
    sp = sub.add_parser("designs", help="OrigamiBench's design sets")
    dsub = sp.add_subparsers(dest="designs_command", required=True)
    dp = dsub.add_parser(
        "fetch", help="download Flat-Folder's 366 designs at the pinned commit, each checked by SHA-256"
    )
    dp.add_argument("--to", help="folder to write (default: where `designs: {flat_folder: true}` reads, "
                    "$SHREDFOLD_CACHE/flat-folder/COMMIT, the cache defaulting to ~/.cache/shredfold)")
    dp.add_argument("--url", help="the archive (https://, file://; default GitHub's tarball of the commit)")
    dp.add_argument("--allow-partial", action="store_true",
                    help="keep an archive's designs when some are missing or a later upstream revision (all named)")
    dp.set_defaults(func=cmd_designs_fetch)

    sp = sub.add_parser("weights", help="model weights the metrics read (SS's CLIP)")
    wsub = sp.add_subparsers(dest="weights_command", required=True)
    wp = wsub.add_parser("fetch", help="download pinned open_clip weights for SS, checked by SHA-256")
    wp.add_argument("what", choices=["clip"])
    wp.add_argument("--model", default="ViT-B-32", help="open_clip model config (default ViT-B-32)")
    wp.add_argument("--pretrained", default="openai", help="open_clip pretrained tag (default openai)")
    wp.add_argument("--url", help="where to download from (https://, file://; default the Hugging Face hub "
                    "file open_clip downloads, at the pinned revision); checked against the pin all the same")
    wp.add_argument("--to", help="cache folder to write under (default $SHREDFOLD_CACHE/clip, the cache "
                    "defaulting to ~/.cache/shredfold); a spec names another with origami.clip.cache_dir")
    wp.set_defaults(func=cmd_weights_fetch)

    sp = sub.add_parser("clip", help="SS's CLIP model")
    csub = sp.add_subparsers(dest="clip_command", required=True)
    cp = csub.add_parser(
        "finetune", help="fine-tune an open_clip model on the spec's designs, folded and drawn, "
        "captioned by category (contrastive); writes weights, config and recipe to a folder",
    )  # fmt: skip
    cp.add_argument("spec", help="the spec whose origami designs to draw (built-in, procedural, Flat-Folder, folder)")
    cp.add_argument("--out", required=True, help="a new folder (or an earlier fine-tune's, with --force)")
    cp.add_argument("--model", help="base model (default the spec's origami.clip.model)")
    cp.add_argument("--pretrained", help="base pretrained tag (default the spec's origami.clip)")
    cp.add_argument("--checkpoint", help="base checkpoint file or fine-tuned folder (default the spec's origami.clip)")
    cp.add_argument("--steps", type=int, default=200)
    cp.add_argument("--batch-size", type=int, default=32)
    cp.add_argument("--lr", type=float, default=1e-5)
    cp.add_argument("--weight-decay", type=float, default=0.1)
    cp.add_argument("--seed", type=int, default=0)
    cp.add_argument("--caption", default="origami: {category}", help="caption template (default %(default)r)")
    cp.add_argument("--no-symmetries", action="store_true",
                    help="show each picture only as drawn (default: in any of the square's 8 symmetries)")
    cp.add_argument("--force", action="store_true", help="replace an earlier fine-tune at --out")
    cp.add_argument("--results", default=str(paths.RESULTS), help="read pictures the pipeline made from this results folder")
    cp.set_defaults(func=cmd_clip_finetune)

    sp = sub.add_parser(
        "serve-env", help="serve the origami full-step environment as an OpenEnv server (reset, step, state)"
    )
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", type=argtypes.port, default=8001, help="0 picks a free port (printed)")
    sp.add_argument("--target", default="builtin/blintz-half",
                    help="default design of a reset: a built-in (book-fold) or procedural/007")
    sp.add_argument("--kind", choices=["fold", "crease"], default="fold")
    sp.add_argument("--step-limit", type=int, default=6)
    sp.add_argument("--image-size", type=int, default=256)
    sp.add_argument("--gs-threshold", default="0.99", help="GS that ends an episode ('none': only stop or the limit)")
    sp.add_argument("--reward", choices=["gs_delta", "gs"], default="gs_delta", help="a step's reward: GS gained, or GS")
    sp.add_argument("--max-episodes", type=argtypes.count, default=32, help="HTTP episodes kept (least recently used go)")
    sp.add_argument("--max-sessions", type=argtypes.count, default=4, help="WebSocket sessions at once")
    sp.add_argument("--max-body-kb", type=argtypes.positive, default=64.0, help="refuse larger requests with 413 (default 64)")
    sp.set_defaults(func=cmd_serve_env)
