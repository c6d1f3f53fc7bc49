"""Set job: build every item of an item set into the store, reusing stored ones by key."""

from __future__ import annotations

import logging

from shredfold.plan import Plan
from shredfold.store import Store, atomic_write_json
from shredfold.tasks.base import JobContext
from shredfold.tasks.registry import get as get_task

log = logging.getLogger(__name__)


def run_set(plan: Plan, key: str, out: str, store: Store) -> dict[str, int]:
    item_set = plan.item_set(key)
    task = get_task(item_set.task)
    log.info("set %s: %d item(s)", item_set.where, len(item_set.items))  # when the job started
    counts = task.build(item_set, JobContext(plan.spec, store, log=log))
    atomic_write_json(
        out,
        {"task": item_set.task, "labels": dict(item_set.labels), "key": item_set.key, "items": item_set.item_keys},
    )
    log.info("set %s: %s", item_set.where, ", ".join(f"{v} {k}" for k, v in counts.items()))
    return counts
