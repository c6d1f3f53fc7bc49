"""Score job: one Parquet table per cell, a row per item, its schema derived from the task's
row type.

Superseded attempts of the cell (``-rN`` tables and manifests of earlier attempts) are moved
out of ``results/cells/`` once the current table is written, so a glob over the cell tables
counts each item once.
"""

from __future__ import annotations

import logging
import os
import types
import typing
from pathlib import Path
from typing import TYPE_CHECKING

from shredfold import paths
from shredfold.plan import Plan
from shredfold.stages.watch import job_progress, workdir_of
from shredfold.store import Store, atomic_write_bytes
from shredfold.tasks.base import Cell, JobContext, Row
from shredfold.tasks.manifest import read_manifest
from shredfold.tasks.registry import get as get_task

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger(__name__)

_ARROW = {str: "string", bool: "bool_", int: "int64", float: "float64"}


def arrow_schema(row_type: type[Row]) -> pa.Schema:
    """The Parquet schema of a row type: its fields in order, every column nullable."""
    import pyarrow as pa

    fields = []
    for name, info in row_type.model_fields.items():
        kind = row_type.arrow_types.get(name)
        if kind is None:
            ann = info.annotation
            if isinstance(ann, types.UnionType) or typing.get_origin(ann) is typing.Union:
                ann = next(a for a in typing.get_args(ann) if a is not type(None))
            kind = _ARROW[ann]  # type: ignore[index]
        fields.append((name, getattr(pa, kind)()))
    return pa.schema(fields)


def write_cell_table(rows: list[Row], row_type: type[Row], out: str) -> None:
    """One cell's Parquet table, written atomically (a crash never leaves half a table)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema(row_type)
    table = pa.Table.from_pylist([r.model_dump() for r in rows], schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    atomic_write_bytes(Path(out), sink.getvalue().to_pybytes())


def run_score(plan: Plan, key: str, where: str, query_manifest: str, out: str, store: Store) -> int:
    cell = plan.cell(key, where)
    task = get_task(cell.task)
    answers = read_manifest(query_manifest).answers
    job = JobContext(plan.spec, store, log=log)
    task.build(cell.item_set, job)  # items moved aside as corrupt are made again (else a no-op)
    at = cell.at(paths.attempt_of(out, cell.score_key))
    log_path = paths.cell_log_path("score", at.score_where, at.score_key, at.attempt)
    with job_progress(f"score {cell.name}", len(cell.item_set.items), out, at.score_path, log_path, log):
        rows = task.score(cell, answers, job)
        write_cell_table(rows, task.row_type, out)
    log.info("%s: %d rows scored", cell.name, len(rows))
    supersede_attempts(cell, Path(out))
    return len(rows)


def supersede_attempts(cell: Cell, current: Path) -> list[Path]:
    """Move the tables and manifests of the cell's earlier attempts out of results/cells/."""
    root = workdir_of(current, cell.at(paths.attempt_of(current.name, cell.score_key)).score_path)
    if root is None:
        return []
    moved = []
    attempt = paths.attempt_of(current.name, cell.score_key)
    for n in range(attempt):
        for rel in (cell.at(n).score_path, cell.at(n).query_path):
            src = root / rel
            if src.is_file():
                dest = root / paths.SUPERSEDED / Path(rel).relative_to(paths.RESULTS)
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(src, dest)
                moved.append(dest)
    repair = root / paths.repair_path(cell.score_where, cell.score_key)
    if repair.is_file():
        repair.unlink()  # this attempt redid the cell
    if moved:
        log.info("%s: %d superseded attempt file(s) moved to %s", cell.name, len(moved), paths.SUPERSEDED)
    return moved
