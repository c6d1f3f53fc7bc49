"""The rows of a plan's exported tables, read from the store through the tasks' hooks.

Items missing from the store are made first (``build``) by the tasks' own ``build``, the
function each Snakemake set job runs, so an export of a spec that was never run holds the
same bytes as one taken after ``snakemake``: items are content-addressed, and no model is
asked to make them. Without ``build`` a missing item stops the export with one line saying
to run Snakemake first.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from shredfold.plan import Plan
from shredfold.store import CorruptObjectError, Store
from shredfold.tasks.base import Exported, JobContext, Table, exported

log = logging.getLogger(__name__)


class MissingItemsError(RuntimeError):
    """An item of the export is not in the store (and building was not allowed)."""


@dataclass(frozen=True)
class TaskTables:
    task: Exported
    name: str  # the task's registry name
    tables: list[Table]


def exported_tables(plan: Plan) -> list[TaskTables]:
    """Every exported table of the plan, task by task in plan order."""
    out = []
    for task in plan.tasks():
        if not exported(task):
            continue
        tables = task.export_tables(plan.spec, plan.sets_of(task.name))  # type: ignore[attr-defined]
        if tables:
            out.append(TaskTables(task, task.name, tables))  # type: ignore[arg-type]
    return out


def build_missing(plan: Plan, store: Store, tasks: list[TaskTables]) -> dict[str, int]:
    """Make every item of the exported tables that the store lacks (as the set jobs do)."""
    total: dict[str, int] = {}
    for t in tasks:
        for table in t.tables:
            for s in table.sets:
                counts = t.task.build(s, JobContext(plan.spec, store, log=log))  # type: ignore[attr-defined]
                if counts.get("made"):
                    log.info("%s %s: %s", t.name, s.where, ", ".join(f"{v} {k}" for k, v in counts.items()))
                for k, v in counts.items():
                    total[k] = total.get(k, 0) + v
    return total


def table_rows(plan: Plan, store: Store, task: Exported, table: Table) -> Iterator[dict[str, Any] | None]:
    """The rows of one table in plan order (None for an item the task leaves out)."""
    job = JobContext(plan.spec, store, log=log)
    for s in table.sets:
        for item in s.items:
            try:
                yield task.export_row(item, s, job)
            except CorruptObjectError as exc:
                if store.path(exc.stage, exc.key).exists():
                    raise  # a damaged object, not a missing one: `shredfold verify --store`
                raise MissingItemsError(
                    f"{s.where}: item {item.key[:12]} is not in {store.root}; run Snakemake on the "
                    f"spec first (snakemake --cores all results/leaderboard.csv --config spec={plan.spec.path}), "
                    "or export without --no-build"
                ) from None
