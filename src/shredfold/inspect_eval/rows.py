"""The rows an Inspect task is made from: a ``shredfold export`` folder's tables, or a spec's
items read from its store (made first when missing, as ``shredfold export`` does).

Rows are read a batch at a time: only the images of the request the harness sends are kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shredfold.store import sha256_file

EXPORT_FORMAT = 1  # the shredfold.json format this reader knows (shredfold.export.hf.FORMAT)
BATCH_ROWS = 16


class SourceError(ValueError):
    """A source the task cannot read (one line: the file and the cause)."""


def _plain(value: Any) -> Any:
    """Arrow's image struct (``{"bytes", "path"}``) as its bytes, in lists too."""
    if isinstance(value, dict) and set(value) == {"bytes", "path"}:
        return value["bytes"]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def export_splits(folder: str | Path, config: str) -> dict[str, list[Path]]:
    """The data files of ``config`` in an export, by split, each checked against the
    SHA-256 its ``shredfold.json`` records."""
    root = Path(folder)
    prov_path = root / "shredfold.json"
    try:
        prov = json.loads(prov_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SourceError(f"{root}: not a shredfold export (no shredfold.json); make one with `shredfold export`") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SourceError(f"{prov_path}: unreadable ({exc})") from None
    if not isinstance(prov, dict) or prov.get("shredfold_export") != EXPORT_FORMAT:
        raise SourceError(f"{prov_path}: not a shredfold export of format {EXPORT_FORMAT}")
    tasks = [t for t in prov.get("tasks", []) if isinstance(t, dict) and t.get("config") == config]
    if not tasks:
        have = ", ".join(str(t.get("config")) for t in prov.get("tasks", []) if isinstance(t, dict)) or "none"
        raise SourceError(f"{root}: the export has no {config!r} table (it has {have})")
    files = prov.get("files", {})
    out: dict[str, list[Path]] = {}
    for split in tasks[0].get("splits", []):
        paths = []
        for rel in split["files"]:
            path = (root / rel).resolve()
            if not path.is_relative_to(root.resolve()) or not path.is_file():
                raise SourceError(f"{root}: data file {rel} is missing or outside the export")
            if sha256_file(path) != files.get(rel):
                raise SourceError(f"{root / rel}: its SHA-256 differs from shredfold.json's (the export was changed)")
            paths.append(path)
        out[str(split["split"])] = paths
    return out


def export_rows(folder: str | Path, config: str, split: str | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(split, row)`` for every row of ``config`` (of one split, when given) in an export."""
    import pyarrow.parquet as pq

    splits = export_splits(folder, config)
    if split is not None and split not in splits:
        raise SourceError(f"{folder}: {config} has no split {split!r} (it has {', '.join(splits)})")
    for name, paths in splits.items():
        if split is not None and name != split:
            continue
        for path in paths:
            try:
                for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS):
                    for row in batch.to_pylist():
                        yield name, {k: _plain(v) for k, v in row.items()}
            except OSError as exc:  # pyarrow's ArrowInvalid is an OSError subclass too
                raise SourceError(f"{path}: not a readable Parquet file ({exc})") from None


def spec_rows(
    spec: str | Path, results: str | Path, public_name: str, split: str | None, build: bool
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(split, row)`` for every item of the task ``public_name`` that the spec plans."""
    from shredfold.export.rows import build_missing, exported_tables, table_rows
    from shredfold.plan import make_plan
    from shredfold.resolve import load_spec
    from shredfold.store import Store

    store = Store(Path(results) / "store")
    plan = make_plan(load_spec(spec), store, write=build)
    mine = [t for t in exported_tables(plan) if t.tables[0].config == public_name]
    if not mine:
        raise SourceError(f"{spec}: the spec plans no {public_name} items")
    names = [t.split for t in mine[0].tables]
    if split is not None and split not in names:
        raise SourceError(f"{spec}: {public_name} has no split {split!r} (it has {', '.join(names)})")
    if build:
        build_missing(plan, store, mine)
    for table in mine[0].tables:
        if split is None or table.split == split:
            for row in table_rows(plan, store, mine[0].task, table):
                if row is not None:
                    yield table.split, row
