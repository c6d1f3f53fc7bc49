"""Query stage: ask one model about every item of a cell, paying for each request once.

Answers are cached in the store under the response key (model identity + request) and each is
written the moment it arrives, so a crash or SIGKILL mid-cell loses nothing answered. Errors
are recorded on their item in the cell manifest and never stored as answers, so the next run
asks again (see ``plan.resolve_attempts``).

Concurrency within a cell is a thread pool of ``max_concurrency`` for HTTP models (their
time is spent waiting); built-ins are CPU-bound and run one at a time, Snakemake's
``--cores`` parallelises them across cells.
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from shredfold.models.base import (
    RESPONSE_STAGE,
    Model,
    ModelCallError,
    Request,
    Response,
    response_key,
)
from shredfold.models.registry import build_model
from shredfold.plan import Cell, Plan, ShredItem
from shredfold.prompts.shred import build_request
from shredfold.shred.sample import SAMPLE_STAGE, load_public
from shredfold.store import Store, atomic_write_json

log = logging.getLogger(__name__)


class ReplayOnlyError(RuntimeError):
    """Raised in replay-only mode when a request is not in the cache."""


def replay_only_from_env() -> bool:
    return os.environ.get("SHREDFOLD_REPLAY_ONLY", "").lower() in ("1", "true", "yes")


def shred_request(cell: Cell, item: ShredItem, store: Store) -> Request:
    public = load_public(store.path(SAMPLE_STAGE, item.key))
    composite = cell.model.images.mode == "composite"
    images = [public.composite] if composite else list(public.pieces)
    return build_request(
        kind=item.kind, lang=item.lang, n=item.n, images=images, composite=composite, item=item.key
    )


def cached_response(store: Store, rkey: str) -> Response | None:
    if store.has(RESPONSE_STAGE, rkey):
        return Response.model_validate(store.get_json(RESPONSE_STAGE, rkey)["response"])
    return None


def store_response(
    store: Store, rkey: str, identity: dict[str, Any], request: Request, response: Response
) -> None:
    store.put_json(
        RESPONSE_STAGE,
        rkey,
        {
            "model": identity,
            "request": request.fingerprint(),
            "response": response.model_dump(mode="json"),
        },
    )


@dataclass
class _Outcome:
    error: str | None = None


def _ask(model: Model, cell: Cell, item: ShredItem, rkey: str, store: Store) -> _Outcome:
    # The request is rebuilt here rather than kept from the key pass: holding every image of
    # a paper-sized cell in memory at once would cost hundreds of megabytes.
    request = shred_request(cell, item, store)
    t0 = time.perf_counter()
    try:
        response = model.complete(request)
    except ModelCallError as exc:
        log.warning("%s: item %s failed: %s", cell.name, item.key[:12], exc)
        return _Outcome(error=str(exc))
    if not response.latency_s:
        response.latency_s = time.perf_counter() - t0
    store_response(store, rkey, cell.identity, request, response)
    return _Outcome()


def run_query_cell(
    plan: Plan,
    key: str,
    out: str,
    store: Store,
    replay_only: bool | None = None,
    model: Model | None = None,
) -> dict[str, int]:
    cell = plan.cell(key)
    assert cell.sample_set is not None
    replay_only = replay_only_from_env() if replay_only is None else replay_only
    items = cell.sample_set.items
    keys = [response_key(cell.identity, shred_request(cell, item, store)) for item in items]
    pending = [i for i, rkey in enumerate(keys) if not store.has(RESPONSE_STAGE, rkey)]
    if replay_only and pending:
        # Checked before any call, so an audit never spends a cent.
        missing = ", ".join(items[i].key[:12] for i in pending[:5])
        raise ReplayOnlyError(
            f"{cell.name}: {len(pending)} of {len(items)} item(s) have no cached response "
            f"({missing}{' …' if len(pending) > 5 else ''}) and replay-only mode forbids "
            "calling the model"
        )

    outcomes: dict[int, _Outcome] = {}
    if pending:
        model = model or build_model(cell.model, store)
        check_ready = getattr(model, "check_ready", None)
        if check_ready is not None:
            check_ready()
        workers = cell.model.max_concurrency if cell.model.adapter == "openai" else 1
        try:
            outcomes = _ask_all(model, cell, items, keys, pending, store, workers)
        finally:
            close = getattr(model, "close", None)
            if close is not None:
                close()

    rows = []
    counts = {"called": 0, "cached": 0, "errors": 0}
    for i, item in enumerate(items):
        row: dict[str, Any] = {"item": item.key, "doc_id": item.doc.doc_id, "response": keys[i]}
        if i not in outcomes:
            counts["cached"] += 1
            row.update(cached=True, error=None)
        elif outcomes[i].error is not None:
            counts["errors"] += 1
            row.update(cached=False, error=outcomes[i].error, response=None)
        else:
            counts["called"] += 1
            row.update(cached=False, error=None)
        rows.append(row)
    write_manifest(out, cell, counts, rows)
    return counts


def write_manifest(out: str, cell: Cell, counts: dict[str, int], rows: list[dict[str, Any]]) -> None:
    """The cell's record of its items: answer keys, errors, what was cached and called."""
    atomic_write_json(
        out,
        {
            "cell": cell.name,
            "query_key": cell.query_key,
            "model": cell.model.id,
            "identity": cell.identity,
            **counts,
            "items": rows,
        },
    )
    log.info("%s: %s", cell.name, counts)


def _ask_all(
    model: Model,
    cell: Cell,
    items: tuple[ShredItem, ...],
    keys: list[str],
    pending: list[int],
    store: Store,
    workers: int,
) -> dict[int, _Outcome]:
    """Run the pending calls ``workers`` at a time; a non-call error stops the cell."""
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="query") as pool:
        futures: dict[Future[_Outcome], int] = {
            pool.submit(_ask, model, cell, items[i], keys[i], store): i for i in pending
        }
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for f in done:
            if f.exception() is not None:
                # A bug or a configuration error, not a failed call: stop queueing, keep what
                # was stored, and fail the job loudly.
                pool.shutdown(wait=True, cancel_futures=True)
                raise f.exception()  # type: ignore[misc]
        return {futures[f]: f.result() for f in futures}
