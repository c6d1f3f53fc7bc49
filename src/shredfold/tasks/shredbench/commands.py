"""ShredBench's own commands (its ``commands`` hook): ``show`` writes a sample's pieces,
composite and truth to a folder, without touching what the user keeps there."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from shredfold import paths
from shredfold.errors import UserError

SHOW_MARKER = ".shredfold-show.json"


def _show_target(out: Path, force: bool) -> list[str]:
    """Check that ``out`` may receive a sample; return the files a previous show wrote."""
    if not out.exists():
        return []
    if not out.is_dir():
        raise UserError(f"{out} exists and is not a folder")
    entries = [p for p in out.iterdir()]
    if not entries:
        return []
    marker = out / SHOW_MARKER
    if not force:
        raise UserError(f"{out} is not empty; choose another --out, or --force to replace what an earlier `shredfold show` wrote there")
    if marker.is_symlink() or not marker.is_file():
        raise UserError(f"{out} was not written by `shredfold show` (no {SHOW_MARKER}); refusing to touch it")
    try:
        written = json.loads(marker.read_text(encoding="utf-8"))["files"]
    except (ValueError, KeyError, TypeError):
        raise UserError(f"{marker} is unreadable; refusing to touch {out}") from None
    return [str(f) for f in written]


def _check_inside(out: Path, name: str) -> None:
    """Writes get the containment deletes have: no folder on the way to ``out/name``, and
    not the file itself, may be a link (``pieces/`` linked to another folder would have its
    files overwritten there), and nothing in ``name`` may leave ``out``."""
    rel = Path(name)
    if rel.is_absolute() or ".." in rel.parts:
        raise UserError(f"{out}: the sample names a file {name!r} outside the folder; refusing to write it")
    here = out
    for part in rel.parts:
        here = here / part
        if here.is_symlink():
            raise UserError(f"{here} is a link (to {os.readlink(here)}); refusing to write through it")
        if here.exists() and not (here.is_dir() if here != out / rel else here.is_file()):
            raise UserError(f"{here} is not a {'folder' if here != out / rel else 'file'}; refusing to replace it")


def cmd_show(args: argparse.Namespace) -> int:
    from shredfold.shred.sample_folder import SAMPLE_STAGE
    from shredfold.store import Store, atomic_write_bytes, atomic_write_json

    store = Store(Path(args.results) / "store")
    matches = [k for k in store.keys(SAMPLE_STAGE) if k.startswith(args.key)]
    if not matches:
        raise UserError(f"no sample with key starting {args.key!r} under {store.root}")
    if len(matches) > 1:
        raise UserError(f"key prefix {args.key!r} is ambiguous: {len(matches)} samples")
    key = matches[0]
    out = Path(args.out or f"show-{key[:12]}")
    previous = _show_target(out, args.force)
    files = sorted(store.manifest(SAMPLE_STAGE, key))
    clash = [f for f in files if (out / f).exists() and f not in previous]
    if clash:
        raise UserError(f"{out}/{clash[0]} exists and was not written by `shredfold show`; refusing to overwrite it")
    obj = store.object(SAMPLE_STAGE, key)
    data = {f: obj.read_bytes(f) for f in files}  # verified before anything is written
    for f in [*data, SHOW_MARKER]:
        _check_inside(out, f)
    for f in previous:
        stale = out / f
        if f not in data and stale.is_file() and stale.resolve().is_relative_to(out.resolve()):
            stale.unlink()
    for f, content in data.items():
        atomic_write_bytes(out / f, content)
    atomic_write_json(out / SHOW_MARKER, {"sample": key, "files": files})
    # what this sample has (an outside one has perhaps no pieces/)
    shown = sorted({f.split("/")[0] + ("/" if "/" in f else "") for f in files if f.endswith((".png", ".jpg", ".txt"))})
    print(f"sample {key} written to {out}/ ({', '.join(shown)})")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    """Add ShredBench's commands to ``shredfold``'s."""
    sp = sub.add_parser("show", help="write a sample's pieces, composite and truth to a folder")
    sp.add_argument("key", help="sample key or a unique prefix of it")
    sp.add_argument("--out", help="folder to write (default show-KEY); must be new or empty")
    sp.add_argument("--force", action="store_true", help="replace what an earlier show wrote in --out")
    sp.add_argument("--results", default=str(paths.RESULTS))
    sp.set_defaults(func=cmd_show)
