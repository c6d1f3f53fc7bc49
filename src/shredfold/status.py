"""Where a run stands, read while it runs: which cells are done, running or pending, how
many items are answered and failed, and each model's spend against its budget.

Everything is read, nothing written or locked: the plan file Snakemake wrote, the set
manifests, query manifests and score tables (written atomically, so whole or absent), the
progress state each running job keeps beside its log (:mod:`shredfold.progress`), and the
spend ledgers (:meth:`~shredfold.models.budget.SpendLedger.peek` reads whole lines only). A
file that is absent, or not readable yet, counts as not there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shredfold import paths
from shredfold.models.budget import SpendLedger, ledger_path
from shredfold.plan import Plan, latest_attempt
from shredfold.progress import alive, read_state
from shredfold.store import Store
from shredfold.tasks.base import Cell, ItemSet
from shredfold.tasks.manifest import ManifestError, QueryManifest, read_manifest

# A cell's state
DONE, RUNNING, PENDING, FAILED = "done", "running", "pending", "failed"


@dataclass(frozen=True)
class CellStatus:
    cell: Cell
    state: str  # done (scored), running (asked or scored now), pending, failed (its job died)
    step: str  # what was seen last: query, answered, score, scored, or "" (nothing yet)
    total: int
    answered: int = 0  # items with an answer (cached or new)
    errors: int = 0
    cached: int = 0
    eta: str | None = None


@dataclass
class ModelStatus:
    model: str
    cells: int = 0
    states: dict[str, int] = field(default_factory=dict)
    items: int = 0
    answered: int = 0
    errors: int = 0
    spent_usd: float | None = None
    budget_usd: float | None = None


@dataclass(frozen=True)
class RunStatus:
    plan: Plan
    plan_file: str
    sets: dict[str, int]  # built, running, pending, failed
    cells: list[CellStatus]
    models: list[ModelStatus]

    @property
    def finished(self) -> bool:
        return all(c.state == DONE for c in self.cells) and not self.sets.get(RUNNING)

    @property
    def failed(self) -> int:
        """Jobs that died (item sets and cells)."""
        return self.sets.get(FAILED, 0) + sum(c.state == FAILED for c in self.cells)

    @property
    def running(self) -> int:
        return self.sets.get(RUNNING, 0) + sum(c.state == RUNNING for c in self.cells)


def _manifest(path: Path) -> QueryManifest | None:
    """None for one that cannot be read: the next run says why and queries its cell again."""
    try:
        return read_manifest(path)
    except ManifestError:
        return None


def _running(path: Path) -> dict[str, Any] | None:
    state = read_state(path)
    return state if state is not None and alive(state) else None


def _died(path: Path) -> bool:
    """A job that left a state saying it failed, or running with its process gone."""
    state = read_state(path)
    return state is not None and state.get("state") != "done" and not alive(state)


def cell_status(cell: Cell, workdir: Path) -> CellStatus:
    total = len(cell.item_set.items)
    last = latest_attempt(cell, workdir)
    attempt = 0 if last is None else last
    manifest = _manifest(workdir / cell.at(attempt).query_path) if last is not None else None
    # A re-run of a cell whose answers had errors asks at the next attempt.
    for a in ([attempt + 1] if manifest is not None else []) + [attempt]:
        at = cell.at(a)
        log = paths.cell_log_path("query", at.query_where, at.query_key, a)
        state = _running(workdir / paths.progress_path(log))
        if state is not None:
            return CellStatus(cell, RUNNING, "query", total, state["done"] - state["errors"],
                              state["errors"], state["cached"], state.get("eta"))  # fmt: skip
    if manifest is None:
        log = paths.cell_log_path("query", cell.query_where, cell.query_key, 0)
        return CellStatus(cell, FAILED if _died(workdir / paths.progress_path(log)) else PENDING, "", total)
    at = cell.at(attempt)
    errors = manifest.errors
    counts = {"total": total, "answered": len(manifest.items) - errors, "errors": errors, "cached": manifest.cached}
    if (workdir / at.score_path).is_file():
        return CellStatus(cell, DONE, "scored", **counts)
    score_state = workdir / paths.progress_path(paths.cell_log_path("score", at.score_where, at.score_key, attempt))
    running = _running(score_state)
    if running is not None:
        return CellStatus(cell, RUNNING, "score", eta=running.get("eta"), **counts)
    return CellStatus(cell, FAILED if _died(score_state) else PENDING, "answered", **counts)


def set_state(item_set: ItemSet, workdir: Path) -> str:
    if (workdir / item_set.path).is_file():
        return DONE
    state = workdir / paths.progress_path(paths.set_log_path(item_set.where, item_set.key))
    if _running(state) is not None:
        return RUNNING
    return FAILED if _died(state) else PENDING


def run_status(plan: Plan, workdir: Path, plan_file: str = "") -> RunStatus:
    sets: dict[str, int] = {}
    for s in plan.item_sets.values():
        st = set_state(s, workdir)
        sets[st] = sets.get(st, 0) + 1
    cells = [cell_status(c, workdir) for c in plan.cells]
    store = Store(workdir / paths.STORE)
    models: dict[str, ModelStatus] = {}
    for m in plan.spec.models:
        ms = models[m.id] = ModelStatus(m.id, budget_usd=m.budget_usd)
        if ledger_path(store, m.id).is_file():
            ms.spent_usd = SpendLedger(ledger_path(store, m.id)).peek().total
    for cs in cells:
        ms = models[cs.cell.model.id]
        ms.cells += 1
        ms.states[cs.state] = ms.states.get(cs.state, 0) + 1
        ms.items += cs.total
        ms.answered += cs.answered
        ms.errors += cs.errors
    return RunStatus(plan, plan_file, sets, cells, [m for m in models.values() if m.cells])


# ---------------------------------------------------------------- the table


def _money(m: ModelStatus) -> str:
    if m.spent_usd is None and m.budget_usd is None:
        return "-"
    value = m.spent_usd or 0.0
    spent = f"${value:.2f}" if value >= 1 or value == 0 else f"${value:.4f}"
    return f"{spent} of ${m.budget_usd:.2f}" if m.budget_usd is not None else spent


def _table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    rows = list(rows)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        first = f"{r[0]:<{widths[0]}}"
        return "  ".join([first, *(f"{v:>{w}}" for v, w in zip(r[1:], widths[1:], strict=True))]).rstrip()

    return [line(header), *(line(r) for r in rows)]


def render(status: RunStatus, cells: bool = False) -> str:
    """The run as text: a line on the item sets, a row per model (and a total), and with
    ``cells`` a row per cell that is not pending."""
    plan = status.plan
    out = [f"run of {plan.spec.path} (plan {status.plan_file or 'from the spec'})"]
    limits = plan.limits()
    if limits:
        out.append("a quick run: " + "; ".join(f"{b}: first {n} items per cell" for b, n in sorted(limits.items())))
    s = status.sets
    out.append(
        f"item sets: {s.get(DONE, 0)} built, {s.get(RUNNING, 0)} building, {s.get(PENDING, 0)} pending"
        + (f", {s[FAILED]} failed" if s.get(FAILED) else "")
        + f" (of {len(plan.item_sets)})"
    )
    header = ["model", "cells", "done", "running", "pending", "failed", "answered", "errors", "spent"]
    rows = []
    total = ModelStatus("total")
    for m in status.models:
        rows.append([
            m.model, str(m.cells), str(m.states.get(DONE, 0)), str(m.states.get(RUNNING, 0)),
            str(m.states.get(PENDING, 0)), str(m.states.get(FAILED, 0)), f"{m.answered}/{m.items}",
            str(m.errors), _money(m),
        ])  # fmt: skip
        total.cells += m.cells
        for k, v in m.states.items():
            total.states[k] = total.states.get(k, 0) + v
        total.items += m.items
        total.answered += m.answered
        total.errors += m.errors
    if len(status.models) > 1:
        rows.append([
            "total", str(total.cells), str(total.states.get(DONE, 0)), str(total.states.get(RUNNING, 0)),
            str(total.states.get(PENDING, 0)), str(total.states.get(FAILED, 0)),
            f"{total.answered}/{total.items}", str(total.errors), "",
        ])  # fmt: skip
    out += _table(header, rows)
    if cells:
        shown = [c for c in status.cells if c.state != PENDING or c.step]
        if shown:
            out.append("")
            out += _table(
                ["cell", "state", "step", "answered", "errors", "cached", "ETA"],
                ([c.cell.name, c.state, c.step or "-", f"{c.answered}/{c.total}", str(c.errors),
                  str(c.cached), c.eta or ""] for c in shown),
            )  # fmt: skip
    return "\n".join(out)


def newest_plan(results: Path) -> Path | None:
    """The plan file Snakemake wrote or used last under ``results`` (its ``plans/``)."""
    folder = results / Path(paths.PLANS).name
    found = []
    for p in folder.glob("*.json") if folder.is_dir() else []:
        try:
            found.append((p.stat().st_mtime, p.name, p))
        except OSError:  # removed meanwhile
            continue
    return max(found)[2] if found else None
