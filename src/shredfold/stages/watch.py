"""What a job reports while it runs: where its progress state goes (beside its log, for
``shredfold status``), and the spend of its model against the budget."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

from shredfold import paths
from shredfold.models.budget import Budget
from shredfold.progress import Progress, Spend
from shredfold.spec import ModelConfig
from shredfold.store import Store


def workdir_of(out: str | os.PathLike[str], rel: str) -> Path | None:
    """The folder the plan's ``results/…`` paths are relative to, found from the file a job
    writes (``out``, the plan path ``rel``); None when ``out`` is not that plan path (a job
    run on other paths, as tests do): then it leaves no state file."""
    full = Path(out).resolve()
    parts = Path(rel).parts
    if len(full.parts) <= len(parts) or full.parts[-len(parts) :] != parts:
        return None
    return Path(*full.parts[: -len(parts)])


def spend_of(config: ModelConfig, store: Store) -> Spend | None:
    """The model's recorded spend and its budget (None without one), read from its ledger
    without locking; None when nothing keeps a ledger for the model (it is not priced)."""
    budget = Budget.of(config, store)
    if budget is None:
        return None

    def read() -> tuple[float, float | None]:
        cap = budget.cap  # a priced model without a budget has an endless one
        return budget.ledger.peek().total, cap if math.isfinite(cap) else None

    return read


def job_progress(
    what: str,
    total: int,
    out: str | os.PathLike[str],
    rel_out: str,
    rel_log: str,
    log: logging.Logger,
    spend: Spend | None = None,
) -> Progress:
    """The progress of a job that writes ``out`` (the plan path ``rel_out``; its log is
    ``rel_log``), its state kept beside the log."""
    root = workdir_of(out, rel_out)
    state = root / paths.progress_path(rel_log) if root is not None else None
    return Progress(what, total, log=log, state_path=state, spend=spend)
