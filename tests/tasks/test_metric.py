"""A metric is one declaration: its row field, breakdown column, leaderboard column and
headline interval all follow from it (through DuckDB on a real cell table), and a task whose
declarations do not hold together does not register."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from shredfold.aggregate import Grid, breakdowns, leaderboard, pairwise
from shredfold.stages.score import arrow_schema, write_cell_table
from shredfold.tasks.base import ItemSet, Row
from shredfold.tasks.metric import (
    ERRORS,
    ITEMS,
    Board,
    Breakdown,
    Eq,
    Field,
    Headline,
    IsNull,
    Metric,
    MetricDeclarationError,
    Ratio,
    Scope,
    Split,
    check,
    count,
    interval_columns,
    quantile,
    row_type,
    total,
)
from shredfold.tasks.registry import get, register


class ToyKeys(Row):
    item: str
    doc: str
    model: str
    reference: bool
    benchmark: str
    size: int


class ToyTail(BaseModel):
    latency_s: float
    error: str | None = None


# The one declaration of a new metric: the per-item length of an answer, lower is better.
LENGTH = Metric.score("length", lower_is_better=True)
ToyRow = row_type("ToyRow", ToyKeys, (LENGTH, Field("words", int | None, arrow="int32")), ToyTail, __name__, "A toy row.")


class ToyTask:
    name = "toy"
    benchmark = "toy"
    row_type = ToyRow
    board = Board((ITEMS, LENGTH, Split(LENGTH, "size", "_s{}", label="size")), prefix="toy_", rank=(LENGTH,))
    breakdown = Breakdown("breakdown_toy.csv", ("size",), (LENGTH,), lead=(ITEMS,), trailer=(ERRORS,))
    headlines = (Headline("length", ("doc",)),)


def toy_rows(model: str, lengths: list[float]) -> list[Row]:
    return [ToyRow(item=f"i{i}", doc=f"d{i // 2}", model=model, reference=False, benchmark="toy", size=1 + i % 2,
                   length=v, words=None, latency_s=0.5) for i, v in enumerate(lengths)]  # fmt: skip


def test_a_declared_metric_is_a_row_field_a_breakdown_column_and_a_headline_with_an_interval(tmp_path: Path) -> None:
    check(ToyTask())  # what registering does
    # the row: keys, the metric's field and the plain field in declaration order, then the tail
    assert list(ToyRow.model_fields) == ["item", "doc", "model", "reference", "benchmark", "size", "length", "words",
                                         "latency_s", "error"]  # fmt: skip
    assert str(arrow_schema(ToyRow).field("words").type) == "int32"

    tables = []
    for model, lengths in (("short", [0.1, 0.2, 0.1, 0.3, 0.2, 0.1]), ("long", [0.9, 0.8, 0.9, 0.7, 0.8, 0.9])):
        tables.append(str(tmp_path / f"{model}.parquet"))
        write_cell_table(toy_rows(model, lengths), ToyRow, tables[-1])
    task = ToyTask()
    grid = Grid([task], {"toy": [ItemSet("toy", f"k{s}", {"size": s}, (), "") for s in (1, 2)]})  # type: ignore[list-item]

    cols, rows = breakdowns(tables, grid)["breakdown_toy.csv"]
    assert cols == ["model", "size", "items", "length", "errors"]
    assert rows[0] == ("long", 1, 3, round((0.9 + 0.9 + 0.8) / 3, 6), 0)

    cols, rows = leaderboard(tables, grid)
    assert cols == ["model", "reference", "toy_items", "toy_length", "toy_length_ci_low", "toy_length_ci_high",
                    "toy_length_s1", "toy_length_s2"]  # fmt: skip
    board = {r[0]: dict(zip(cols, r, strict=True)) for r in rows}
    assert [r[0] for r in rows] == ["short", "long"]  # ranked by the metric, lower first
    assert board["short"]["toy_length"] == 0.166667
    assert board["short"]["toy_length_ci_low"] <= 0.166667 <= board["short"]["toy_length_ci_high"]

    cols, rows = pairwise(tables, grid)
    (pair,) = [dict(zip(cols, r, strict=True)) for r in rows]
    assert (pair["metric"], pair["items"], pair["clusters"]) == ("toy_length", 6, 3)


def test_a_headline_naming_no_declared_metric_stops_registration() -> None:
    with pytest.raises(MetricDeclarationError, match=r"task 'toy': headline 'bleu' names no metric of its leaderboard"):

        @register(order=99)
        class Misnamed(ToyTask):
            headlines = (Headline("bleu", ("doc",)),)

    with pytest.raises(KeyError):
        get("toy")  # nothing was registered


@pytest.mark.parametrize(("change", "why"), [
    ({"board": Board((LENGTH, Metric("p50", quantile("latency_ms", 0.5))))}, "metric 'p50' reads 'latency_ms', which its row type has not"),
    ({"breakdown": Breakdown("b.csv", ("tier",), (LENGTH,))}, "group or filter by 'tier'"),
    ({"board": Board((ITEMS, LENGTH, ITEMS))}, "two leaderboard columns are named 'items'"),
    ({"board": Board((ITEMS, LENGTH), rank=(ITEMS,))}, "ranking metric 'items' ranks ascending, but higher is better"),
    ({"headlines": (Headline("items", ("doc",)),)}, "headline 'items' is not a mean of a row column"),
    ({"headlines": (Headline("length", ("document",)),)}, "its unit names 'document'"),
])  # fmt: skip
def test_declarations_that_do_not_hold_together_are_named(change: dict, why: str) -> None:
    broken = type("Broken", (ToyTask,), change)
    with pytest.raises(MetricDeclarationError, match=why):
        check(broken())


def test_the_sql_is_written_from_the_declaration_scope_then_metric_then_split() -> None:
    late = Metric("latency_p95_s", quantile("latency_s", 0.95, IsNull("error")), digits=3)
    assert late.select() == "round(quantile_cont(latency_s, 0.95) FILTER (WHERE error IS NULL), 3) AS latency_p95_s"
    rate = Metric("invalid_rate", Ratio(total("invalid"), total("turns"), guard=True))
    assert rate.select("origami_invalid_rate", (Eq("task", "fullstep"),)) == (
        "round(sum(invalid) FILTER (WHERE task = 'fullstep') / "
        "nullif(sum(turns) FILTER (WHERE task = 'fullstep'), 0), 6) AS origami_invalid_rate"
    )
    assert Metric("error_rate", Ratio(count("error"), count())).select() == "round(count(error) / count(*), 6) AS error_rate"
    teds = Metric.score("teds", float, Eq("kind", "table"))
    board = Board((Split(teds, "granularity", "_n{}", label="n"),), scopes=(Scope((Eq("lang", "o'zh"),)),))
    sets = [ItemSet("t", "k", {"n": 8}, (), "")]
    (col,) = board.own(sets)
    assert col.sql() == "round(avg(teds) FILTER (WHERE lang = 'o''zh' AND granularity = 8 AND kind = 'table'), 6) AS teds_n8"


def test_the_shipped_tasks_derive_their_leaderboard_and_headlines() -> None:
    shred, mcq, full = get("shred"), get("origami_mcq"), get("origami_fullstep")
    grans = [ItemSet("shred", f"k{n}", {"domain": "news_en", "n": n}, (), "") for n in (1, 8)]
    names = [c.name for c in shred.board.own(grans)]
    assert names[:9] == ["items", "errors", "error_rate", "ned", "ned_raw", "bleu", "rouge_l", "teds", "teds_s"]
    assert names[9:13] == ["ned_n1", "ned_n8", "ned_raw_n1", "ned_raw_n8"]
    assert [h.column for h in interval_columns(shred.board, shred.headlines, grans)] == ["ned", "bleu", "rouge_l", "teds"]
    assert [h.where for h in interval_columns(shred.board, shred.headlines, grans)][3] == "kind = 'table'"
    assert shred.board.ranking() == ["ned"]

    # a variant the plan leaves out has no column and no interval
    causal = [ItemSet("origami_mcq", "k", {"task": "mcq_causal", "tier": "easy"}, (), "")]
    assert [c.name for c in mcq.board.own(causal)] == ["origami_mcq_causal"]
    assert [c.name for c in mcq.board.shared()] == ["origami_errors"]
    (h,) = interval_columns(mcq.board, mcq.headlines, causal)
    assert (h.column, h.value, h.cluster, h.where) == ("origami_mcq_causal", "correct", "design", "task = 'mcq_causal'")

    # full step: every tier has a column whether planned or not; GS is interval_columns before QE
    assert [c.name for c in full.board.own([])][:5] == ["origami_qe", "origami_qe_easy", "origami_qe_medium",
                                                         "origami_qe_hard", "origami_gs"]  # fmt: skip
    assert [h.column for h in interval_columns(full.board, full.headlines, [])] == ["origami_gs", "origami_qe"]


# A task's rows are what its score stage makes: rows of other columns (a metric declared or
# dropped, a field's type changed) need a new ``score_stage`` version, or a finished run keeps
# its old tables under the same keys. Each pin is the version and the digest of the columns
# it makes; a change of how a value is computed needs the bump as well, unseen here.
ROWS_AT_VERSION = {
    "shred": (5, "89c826c610499d51"),
    "origami_mcq": (3, "e91f250e720195ff"),
    "origami_fullstep": (3, "e91f250e720195ff"),
}


@pytest.mark.parametrize("name", sorted(ROWS_AT_VERSION))
def test_a_tasks_columns_change_only_with_its_score_stage_version(name: str) -> None:
    import hashlib
    import json

    task = get(name)
    columns = [[f.name, str(f.type)] for f in arrow_schema(task.row_type)]
    digest = hashlib.sha256(json.dumps(columns).encode()).hexdigest()[:16]
    assert (task.score_stage.version, digest) == ROWS_AT_VERSION[name], (
        f"{name}'s rows are now {columns}: bump its score_stage version and pin the new digest"
    )
