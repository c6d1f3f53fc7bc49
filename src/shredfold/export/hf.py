"""Write a plan's exported tables as a Hugging Face ``datasets`` folder.

Layout (what ``datasets.load_dataset(OUT, CONFIG)`` reads)::

    README.md                                  the data set card: YAML (configs, features,
                                               licences) and the text (protocol, spec, keys)
    shredfold.json                             provenance: format, versions, the spec as
                                               written, signatures, every set and item key,
                                               each data file's SHA-256
    data/<config>/<split>-00000-of-00001.parquet

Columns are typed by ``datasets.Features`` (images as its ``Image`` feature: PNG or JPEG
bytes exactly as stored, so a row's image is byte for byte the store's). The same plan and
store give the same bytes: rows in plan order, Parquet writer settings pinned (below), row
groups and shards cut at fixed byte counts, no time stamps anywhere; the folder is built
beside ``OUT`` and renamed into place, and never replaces what is not an earlier export.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shredfold.export.card import card_text
from shredfold.export.rows import TaskTables, build_missing, exported_tables, table_rows
from shredfold.plan import Plan
from shredfold.store import sha256_bytes, sha256_file, staged_folder
from shredfold.tasks.base import Column, DataCard, Table

if TYPE_CHECKING:
    import datasets
    import pyarrow as pa

log = logging.getLogger(__name__)

FORMAT = 1
PROVENANCE = "shredfold.json"
CARD = "README.md"
DATA = "data"
# Pinned so that the same rows give the same file with the pinned pyarrow: images are
# compressed already, zstd level 3 costs little on them and shrinks the text columns.
PARQUET: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": True,
    "write_statistics": True,
    "version": "2.6",
    "data_page_version": "1.0",
    "data_page_size": 1 << 20,
    "store_schema": True,
    "write_page_index": False,
    "write_page_checksum": False,
}
# A row group holds at most this many bytes of values (the Hub's viewer reads a row group at
# a time; image rows are large), a shard file at most this many (the Hub's advice: < 500 MB).
ROW_GROUP_BYTES = 32 << 20
SHARD_BYTES = 400 << 20


class ExportError(RuntimeError):
    """A problem the user can fix (the target folder, a missing package); one line."""


@dataclass
class SplitWritten:
    config: str
    split: str
    rows: int = 0
    left_out: int = 0
    num_bytes: int = 0  # the rows' Arrow size, as the Hub's dataset_info counts it
    files: list[str] = field(default_factory=list)


@dataclass
class ExportReport:
    out: Path
    splits: list[SplitWritten]
    built: dict[str, int]

    def line(self) -> str:
        parts = ", ".join(f"{s.config}/{s.split} {s.rows}" for s in self.splits)
        made = self.built.get("made", 0)
        return f"data set {self.out}: {parts} rows" + (f"; {made} item(s) built first" if made else "")


# ---------------------------------------------------------------- features


def _datasets() -> Any:
    try:
        import datasets
    except ImportError:
        raise ExportError(
            "export --format hf needs the Hugging Face `datasets` package: pip install 'shredfold[hf]'"
        ) from None
    return datasets


def features(columns: Iterable[Column]) -> datasets.Features:
    ds = _datasets()
    kinds = {
        "string": lambda: ds.Value("string"),
        "int32": lambda: ds.Value("int32"),
        "int64": lambda: ds.Value("int64"),
        "float64": lambda: ds.Value("float64"),
        "bool": lambda: ds.Value("bool"),
        "image": lambda: ds.Image(),
        "images": lambda: ds.List(ds.Image()),
        "strings": lambda: ds.List(ds.Value("string")),
    }
    return ds.Features({c.name: kinds[c.kind]() for c in columns})


def _cell(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "image":
        return {"bytes": value, "path": None}
    if kind == "images":
        return [{"bytes": v, "path": None} for v in value]
    return value


def _size(value: Any) -> int:
    if isinstance(value, bytes | str):
        return len(value)
    if isinstance(value, list | tuple):
        return sum(_size(v) for v in value)
    return 8


def arrow_rows(columns: tuple[Column, ...], rows: Iterable[Mapping[str, Any]]) -> Iterator[tuple[dict[str, Any], int]]:
    """Each row as Arrow values (images as ``{"bytes", "path"}``), with its size in bytes.
    A row must hold exactly the table's columns (a task's bug otherwise, named here)."""
    names = [c.name for c in columns]
    for row in rows:
        if set(row) != set(names):
            extra, missing = sorted(set(row) - set(names)), sorted(set(names) - set(row))
            raise ValueError(f"row {row.get('key')}: columns differ from the table's (extra {extra}, missing {missing})")
        yield {c.name: _cell(c.kind, row[c.name]) for c in columns}, sum(_size(row[n]) for n in names)


# ---------------------------------------------------------------- parquet


def write_split(
    folder: Path, table: Table, rows: Iterable[dict[str, Any] | None], schema: pa.Schema
) -> SplitWritten:
    """Write one split's rows as shards ``<split>-NNNNN-of-MMMMM.parquet`` under ``folder``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    done = SplitWritten(table.config, table.split)
    folder.mkdir(parents=True, exist_ok=True)
    shards: list[Path] = []
    writer: pq.ParquetWriter | None = None
    group: list[dict[str, Any]] = []
    group_bytes = shard_bytes = 0

    def flush() -> None:
        nonlocal group, group_bytes, writer, shard_bytes
        if not group:
            return
        if writer is None:
            shards.append(folder / f".{table.split}-{len(shards):05d}.parquet")
            writer = pq.ParquetWriter(shards[-1], schema, **PARQUET)
        arrow = pa.Table.from_pylist(group, schema=schema)
        writer.write_table(arrow, row_group_size=len(group))
        done.num_bytes += arrow.nbytes
        group, group_bytes = [], 0
        if shard_bytes >= SHARD_BYTES:
            writer.close()
            writer, shard_bytes = None, 0

    def kept() -> Iterator[dict[str, Any]]:
        for row in rows:
            if row is None:
                done.left_out += 1
            else:
                yield row

    for row, size in arrow_rows(table.columns, kept()):
        group.append(row)
        group_bytes += size
        shard_bytes += size
        done.rows += 1
        if group_bytes >= ROW_GROUP_BYTES:
            flush()
    flush()
    if writer is not None:
        writer.close()
    if not shards:  # an empty split still has its (empty) file, so the config loads
        shards.append(folder / f".{table.split}-00000.parquet")
        pq.write_table(schema.empty_table(), shards[-1], **PARQUET)
    for i, tmp in enumerate(shards):
        final = folder / f"{table.split}-{i:05d}-of-{len(shards):05d}.parquet"
        os.rename(tmp, final)
        done.files.append(final.name)
    return done


# ---------------------------------------------------------------- the folder


def check_target(out: Path, force: bool) -> None:
    """An export never replaces a user's own files: ``out`` must not exist, be an empty
    folder, or (with ``force``) be an earlier export."""
    if not out.exists() and not out.is_symlink():
        return
    if out.is_dir() and not out.is_symlink() and not any(out.iterdir()):
        return
    if not force:
        raise ExportError(f"{out} exists and is not empty; choose another OUT, or --force to replace an earlier export there")
    if out.is_symlink() or not out.is_dir() or not _is_export(out):
        raise ExportError(f"{out} is not a shredfold export (no {PROVENANCE} of one); refusing to replace it")


def _is_export(folder: Path) -> bool:
    try:
        doc = json.loads((folder / PROVENANCE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("shredfold_export") == FORMAT


def provenance(plan: Plan, spec_text: str, tasks: list[TaskTables], splits: list[SplitWritten],
               files: Mapping[str, str]) -> dict[str, Any]:  # fmt: skip
    by_config = {(s.config, s.split): s for s in splits}
    return {
        "shredfold_export": FORMAT,
        "shredfold": metadata.version("shredfold"),
        "spec": {"name": plan.spec.spec.name, "file": plan.spec.path.name, "sha256": sha256_bytes(spec_text.encode()),
                 "text": spec_text},  # fmt: skip
        "tasks": [
            {
                "task": t.name,
                "config": t.tables[0].config,
                "stages": {"query": list(_stage(t.task, "query_stage")), "score": list(_stage(t.task, "score_stage"))},
                "signatures": t.task.signatures(plan.spec, [s for tb in t.tables for s in tb.sets]),  # type: ignore[attr-defined]
                "splits": [
                    {
                        "split": tb.split,
                        "rows": by_config[tb.config, tb.split].rows,
                        "left_out": by_config[tb.config, tb.split].left_out,
                        "files": [f"{DATA}/{tb.config}/{f}" for f in by_config[tb.config, tb.split].files],
                        "sets": [{"key": s.key, "labels": dict(s.labels), "items": s.item_keys} for s in tb.sets],
                    }
                    for tb in t.tables
                ],
            }
            for t in tasks
        ],
        "files": dict(sorted(files.items())),
    }


def _stage(task: Any, attr: str) -> tuple[str, int]:
    stage = getattr(task, attr)
    return stage.name, stage.version


def export_hf(plan: Plan, store: Any, out: str | os.PathLike[str], *, spec_text: str,
              build: bool = True, force: bool = False) -> ExportReport:  # fmt: skip
    """Write the plan's exported tables to ``out`` (see the module's docstring)."""
    target = Path(out)
    check_target(target, force)
    _datasets()  # refuse before any work when the package is missing
    tasks = exported_tables(plan)
    if not tasks:
        raise ExportError(f"{plan.spec.path}: the spec has no items to export")
    built = build_missing(plan, store, tasks) if build else {}
    with staged_folder(target, swap_out=target.exists()) as tmp:
        splits: list[SplitWritten] = []
        cards: list[tuple[Table, DataCard, datasets.Features]] = []
        for t in tasks:
            card = t.task.export_card(plan.spec, [s for tb in t.tables for s in tb.sets])
            for table in t.tables:
                feats = features(table.columns)
                rows = table_rows(plan, store, t.task, table)
                splits.append(write_split(tmp / DATA / table.config, table, rows, feats.arrow_schema))
                log.info("%s/%s: %d rows", table.config, table.split, splits[-1].rows)
                cards.append((table, card, feats))
        files = {p.relative_to(tmp).as_posix(): sha256_file(p) for p in sorted((tmp / DATA).rglob("*.parquet"))}
        prov = provenance(plan, spec_text, tasks, splits, files)
        (tmp / CARD).write_text(card_text(prov, cards, splits), encoding="utf-8")
        (tmp / PROVENANCE).write_bytes(json.dumps(prov, indent=1, ensure_ascii=False, sort_keys=True).encode() + b"\n")
    return ExportReport(target, splits, built)
