"""The bill before it is run: per model, what a plan will ask and what it may cost
(``shredfold plan SPEC --cost``).

For every cell of a model that calls an endpoint, each request is reduced to a
:class:`~shredfold.tasks.benchmark.Shape` — its text tokens, the pixel sizes of its images,
a typical answer length — without building a sample or a model, by its benchmark's bill
(:attr:`Benchmark.bill <shredfold.tasks.benchmark.Benchmark.bill>`, e.g.
``tasks/shredbench/bill.py``: which images a request carries and how their sizes are known).
Each model then prices the shapes by its own file: images at the size they are sent
(``images.max_side``), counted by its ``image_tokens`` rule
(:mod:`shredfold.models.image_tokens`), text at ~4 characters a token, and its prices per
million tokens. Built-in models run in-process and cost nothing.

Rules of the estimate (also printed with it, with each benchmark's own):

- output: *typical* is the answer's own length, without any hidden reasoning; *max* is
  ``decoding.max_tokens`` per request, an upper bound (reasoning tokens count toward it);
- every request is counted: answers already in the store (which are not asked again) are
  not subtracted;
- a benchmark without a bill has its requests counted, not priced (said in the notes).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from shredfold.models import registry
from shredfold.models.accounting import cost_usd
from shredfold.models.budget import SpendLedger, ledger_path
from shredfold.models.endpoints import KeyRoute, key_routes
from shredfold.models.image_tokens import describe, image_tokens, sent_size
from shredfold.plan import Plan
from shredfold.spec import ModelConfig
from shredfold.store import Store
from shredfold.tasks.base import Cell
from shredfold.tasks.benchmark import Shape
from shredfold.tasks.registry import benchmarks
from shredfold.tasks.registry import get as get_task

OUTPUT_RULE = (
    "output tokens: typical = the answer's own length (no hidden reasoning); "
    "max = decoding.max_tokens per request, an upper bound"
)
CACHE_RULE = "every request is counted: answers already in the store are not subtracted"


@dataclass
class ModelCost:
    model: str
    endpoint: bool  # False: a built-in, answered in-process, free
    requests: int = 0
    images: int = 0
    pixels: int = 0  # as sent
    text_tokens: int = 0
    image_tokens: int = 0
    output_tokens_typical: int = 0
    output_tokens_max: int = 0
    usd_typical: float = 0.0
    usd_max: float = 0.0
    image_rule: str = ""
    budget_usd: float | None = None
    spent_usd: float | None = None  # recorded in the model's spend ledger

    @property
    def input_tokens(self) -> int:
        return self.text_tokens + self.image_tokens

    def add(self, cfg: ModelConfig, shape: Shape) -> None:
        sent = [sent_size(w, h, cfg.images.max_side) for w, h in shape.images]
        img = sum(image_tokens(cfg.image_tokens, cfg.images.detail, w, h) for w, h in sent)
        typical = min(shape.answer_tokens, cfg.decoding.max_tokens)
        inp = shape.text_tokens + img
        k = shape.count
        self.requests += k
        self.images += k * len(sent)
        self.pixels += k * sum(w * h for w, h in sent)
        self.text_tokens += k * shape.text_tokens
        self.image_tokens += k * img
        self.output_tokens_typical += k * typical
        self.output_tokens_max += k * cfg.decoding.max_tokens
        self.usd_typical += k * cost_usd(cfg, inp, typical)
        self.usd_max += k * cost_usd(cfg, inp, cfg.decoding.max_tokens)


@dataclass
class CostReport:
    spec: str
    models: list[ModelCost]
    notes: list[str] = field(default_factory=list)
    keys: list[KeyRoute] = field(default_factory=list)  # which variable goes to which host

    def total(self) -> ModelCost:
        t = ModelCost(model="total", endpoint=any(m.endpoint for m in self.models))
        for m in self.models:
            for f in ("requests", "images", "pixels", "text_tokens", "image_tokens",
                      "output_tokens_typical", "output_tokens_max", "usd_typical", "usd_max"):  # fmt: skip
                setattr(t, f, getattr(t, f) + getattr(m, f))
        return t

    def as_json(self) -> dict[str, Any]:
        def row(m: ModelCost) -> dict[str, Any]:
            return {**asdict(m), "input_tokens": m.input_tokens}

        return {"spec": self.spec, "models": [row(m) for m in self.models], "total": row(self.total()),
                "notes": self.notes, "keys": [k.as_json() for k in self.keys]}  # fmt: skip


# ---------------------------------------------------------------- the report


def estimate(plan: Plan, store: Store | None = None) -> CostReport:
    """The cost report of a plan; ``store`` (read, never written) gives what the benchmarks'
    bills read (the sizes of samples already made) and the spend recorded so far."""
    bills = {b.name: b.bill(plan.spec, store) for b in benchmarks() if b.bill is not None}
    rows: dict[str, ModelCost] = {}
    for m in plan.spec.models:
        endpoint = registry.concurrent(m)
        rows[m.id] = ModelCost(
            model=m.id,
            endpoint=endpoint,
            image_rule=describe(m.image_tokens, m.images.detail) if endpoint else "built-in: no cost",
            budget_usd=m.budget_usd,
            spent_usd=SpendLedger(ledger_path(store, m.id)).peek().total if store is not None else None,
        )
    unknown: set[str] = set()
    cells_of: dict[str, list[Cell]] = {}
    for cell in plan.cells:
        row = rows[cell.model.id]
        bill = bills.get(get_task(cell.task).benchmark)
        cells_of.setdefault(get_task(cell.task).benchmark, []).append(cell)
        if not row.endpoint or bill is None:
            if bill is None and row.endpoint:
                unknown.add(cell.task)
            row.requests += len(cell.item_set.items) if bill is None else bill.requests(cell)
            continue
        for shape in bill.shapes(cell):
            row.add(cell.model, shape)
    notes = [OUTPUT_RULE, CACHE_RULE]
    for name, bill in bills.items():
        notes += bill.notes(cells_of.get(name, []))
    notes += [f"task {task}: requests counted, not priced (no cost rule for it)" for task in sorted(unknown)]
    return CostReport(str(plan.spec.path), list(rows.values()), notes, key_routes(plan.spec.models))


def _money(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def render(report: CostReport) -> str:
    """The report as a table, a line per model, a total, and the rules it follows."""
    head = (f"{'model':24s} {'requests':>8s} {'images':>7s} {'Mpx':>8s} {'input tok':>11s} "
            f"{'out tok typ':>11s} {'out tok max':>11s} {'$ typical':>10s} {'$ max':>10s} "
            f"{'budget $':>9s} {'spent $':>9s}")  # fmt: skip

    def line(m: ModelCost) -> str:
        name = m.model if m.endpoint or m.model == "total" else f"{m.model} (built-in)"
        return (f"{name:24s} {m.requests:8d} {m.images:7d} {m.pixels / 1e6:8.1f} {m.input_tokens:11d} "
                f"{m.output_tokens_typical:11d} {m.output_tokens_max:11d} {m.usd_typical:10.4f} "
                f"{m.usd_max:10.4f} {_money(m.budget_usd):>9s} {_money(m.spent_usd):>9s}")  # fmt: skip

    lines = [f"cost estimate for {report.spec} (before any call)", head]
    lines += [line(m) for m in report.models]
    total = report.total()
    total.budget_usd = total.spent_usd = None
    lines.append(line(total))
    lines.append("image tokens:")
    lines += [f"  {m.model}: {m.image_rule}" for m in report.models]
    lines.append("API keys sent (variable -> host):")
    lines += [f"  {k.line()}" for k in report.keys] or ["  none"]
    lines.append("notes:")
    lines += [f"  {n}" for n in report.notes]
    return "\n".join(lines)
