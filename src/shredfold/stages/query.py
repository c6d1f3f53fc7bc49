"""Query job: ask one model about every item of a cell, paying for each request once.

Answers are cached in the store under the response key (model identity + request) and each is
written the moment it arrives, so a crash or SIGKILL mid-cell loses nothing answered. Errors
are recorded on their item in the cell manifest and never stored as answers, so the next run
asks again (see ``plan.resolve_attempts``). How items are asked (one request, an episode,
concurrently for HTTP models) is the task's business.
"""

from __future__ import annotations

import logging

from shredfold import paths
from shredfold.models.asker import CachedAsker, replay_only_from_env
from shredfold.models.base import Model
from shredfold.plan import Plan
from shredfold.stages.watch import job_progress, spend_of
from shredfold.store import Store
from shredfold.tasks.base import JobContext
from shredfold.tasks.manifest import QueryManifest, write_manifest
from shredfold.tasks.registry import get as get_task

log = logging.getLogger(__name__)


def run_query(
    plan: Plan,
    key: str,
    where: str,
    out: str,
    store: Store,
    replay_only: bool | None = None,
    model: Model | None = None,
) -> dict[str, int]:
    cell = plan.cell(key, where)
    task = get_task(cell.task)
    replay_only = replay_only_from_env() if replay_only is None else replay_only
    job = JobContext(plan.spec, store, replay_only, log=log)
    task.build(cell.item_set, job)  # items moved aside as corrupt are made again (else a no-op)
    asker = CachedAsker(cell.name, cell.model, cell.identity, store, replay_only=replay_only, model=model)
    cell = cell.at(paths.attempt_of(out, cell.query_key))
    log_path = paths.cell_log_path("query", cell.query_where, cell.query_key, cell.attempt)
    progress = job_progress(
        f"query {cell.name}", len(cell.item_set.items), out, cell.query_path, log_path, log,
        spend_of(cell.model, store),
    )  # fmt: skip
    # The manifest is written inside: a state that says done means the cell's file is there.
    with progress:
        try:
            rows = task.ask(cell, asker, job)
        finally:
            asker.close()
        manifest = QueryManifest.of(cell, rows, asker.called)
        write_manifest(out, manifest)
        log.info("%s: %s", cell.name, manifest.counts)
    return manifest.counts
