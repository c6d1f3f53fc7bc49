"""The aggregator on hand-made cell tables: every number and the row order worked out by hand."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest

from shredfold.aggregate import (
    Grid,
    breakdowns,
    leaderboard,
    pairwise,
    render_tables,
    to_csv,
    write_tables,
)
from shredfold.stages.score import write_cell_table
from shredfold.tasks.base import ItemSet
from shredfold.tasks.origamibench.common import OrigamiRow
from shredfold.tasks.registry import get
from shredfold.tasks.shredbench.task import ShredRow

SHRED, MCQ, FULL = get("shred"), get("origami_mcq"), get("origami_fullstep")


def shred_row(model: str, n: int, ned: float, *, domain: str = "news_en", error: str | None = None,
              reference: bool = False, kind: str = "prose", teds: float = math.nan) -> ShredRow:
    return ShredRow(
        item=f"{model}{n}{ned}", doc_id="d", model=model, reference=reference, benchmark="shred",
        domain=domain, granularity=n, kind=kind, lang="en", protocol="shredfold", ned=ned,
        ned_raw=ned, bleu=1 - ned, rouge_l=1 - ned, teds=teds, teds_s=teds, signature="s",
        truncated=False, truncation="", input_tokens=10, output_tokens=5,
        latency_s=1.0, cost_usd=0.01, cached=False, error=error, response="r",
    )


def origami_row(model: str, task: str, tier: str, **scores: float | int | None) -> OrigamiRow:
    return OrigamiRow(item=f"{model}{task}{tier}{scores}", design="d", category="c", model=model,
                      reference=True, benchmark="origami", task=task, tier=tier, cached=False, **scores)


def sets(task, *labels):  # the grid's item sets (only their labels matter to the columns)
    return [ItemSet(task.name, f"k{i}", lab, (), "") for i, lab in enumerate(labels)]


def tables(tmp_path: Path, groups: dict[str, tuple[type, list]]) -> list[str]:
    out = []
    for name, (row_type, rows) in groups.items():
        path = tmp_path / f"{name}.parquet"
        write_cell_table(rows, row_type, str(path))
        out.append(str(path))
    return out


def grid_of(with_origami: bool = True) -> Grid:
    g = Grid([SHRED], {"shred": sets(SHRED, {"domain": "news_en", "n": 1}, {"domain": "news_en", "n": 8})})
    if with_origami:
        g.tasks += [MCQ, FULL]
        g.sets["origami_mcq"] = sets(MCQ, {"task": "mcq_assoc", "tier": "easy"})
        g.sets["origami_fullstep"] = sets(FULL, {"task": "fullstep", "tier": "easy"})
    return g


def as_dicts(cols, rows):
    return [dict(zip(cols, r, strict=True)) for r in rows]


def test_models_are_ranked_reference_first_then_by_ned_then_by_name(tmp_path: Path) -> None:
    paths = tables(tmp_path, {
        "a": (ShredRow, [shred_row("bravo", 1, 0.2), shred_row("bravo", 8, 0.4)]),
        "b": (ShredRow, [shred_row("alpha", 1, 0.1), shred_row("alpha", 8, 0.7)]),
        "c": (ShredRow, [shred_row("oracle", 1, 0.0, reference=True), shred_row("oracle", 8, 0.0, reference=True)]),
        "d": (ShredRow, [shred_row("charlie", 1, 0.3), shred_row("charlie", 8, 0.3)]),
    })
    cols, rows = leaderboard(paths, grid_of(with_origami=False))
    board = as_dicts(cols, rows)
    # NED means: bravo (0.2+0.4)/2 = 0.3, alpha 0.4, charlie 0.3 -> bravo and charlie tie, by name.
    assert [r["model"] for r in board] == ["oracle", "bravo", "charlie", "alpha"]
    alpha = board[-1]
    assert alpha["ned"] == 0.4 and alpha["ned_n1"] == 0.1 and alpha["ned_n8"] == 0.7
    assert alpha["items"] == 2 and alpha["errors"] == 0 and alpha["cost_usd"] == 0.02
    assert cols[:6] == ["model", "reference", "items", "errors", "error_rate", "ned"]


def test_errors_count_and_tables_only_average_their_own_items(tmp_path: Path) -> None:
    paths = tables(tmp_path, {"a": (ShredRow, [
        shred_row("m", 1, 1.0, error="HTTP 500"),
        shred_row("m", 1, 0.0, domain="table", kind="table", teds=0.5),
        shred_row("m", 8, 0.5),
        shred_row("m", 8, 0.5, domain="table", kind="table", teds=1.0),
    ])})
    (row,) = as_dicts(*leaderboard(paths, grid_of(with_origami=False)))
    assert row["errors"] == 1 and row["error_rate"] == 0.25
    assert row["teds"] == 0.75  # (0.5 + 1.0) / 2: prose rows have no TEDS
    assert row["ned_n1"] == 0.5 and row["ned_n8"] == 0.5 and row["ned"] == 0.5


def test_origami_columns_join_by_model_and_origami_only_models_follow(tmp_path: Path) -> None:
    paths = tables(tmp_path, {
        "s": (ShredRow, [shred_row("oracle", 1, 0.0, reference=True), shred_row("m", 8, 0.5)]),
        "q": (OrigamiRow, [origami_row("agent", "mcq_assoc", "easy", correct=1.0, steps=1, turns=1, invalid=0),
                           origami_row("agent", "mcq_assoc", "easy", correct=0.0, steps=1, turns=1, invalid=1)]),
        "f": (OrigamiRow, [origami_row("agent", "fullstep", "easy", gs=0.5, qe=1.0, steps=2, turns=4, invalid=1),
                           origami_row("agent", "fullstep", "hard", gs=1.0, qe=None, steps=0, turns=2, invalid=2)]),
    })
    cols, rows = leaderboard(paths, grid_of())
    board = as_dicts(cols, rows)
    assert [r["model"] for r in board] == ["oracle", "m", "agent"]
    agent = board[-1]
    assert agent["ned"] is None and agent["origami_mcq_assoc"] == 0.5
    assert agent["origami_gs"] == 0.75 and agent["origami_gs_easy"] == 0.5 and agent["origami_gs_hard"] == 1.0
    assert agent["origami_qe"] == 1.0  # the undefined QE of the second episode is left out
    assert agent["origami_invalid_rate"] == 0.5  # (1 + 2) invalid of (4 + 2) fullstep turns
    assert board[0]["origami_gs"] is None
    assert cols[-1] == "origami_errors"


def test_breakdowns_group_by_their_keys_and_every_file_is_written(tmp_path: Path) -> None:
    paths = tables(tmp_path, {
        "s": (ShredRow, [shred_row("m", 1, 0.2), shred_row("m", 1, 0.4), shred_row("m", 8, 0.9)]),
        "q": (OrigamiRow, [origami_row("agent", "mcq_causal", "easy", correct=1.0, steps=1, turns=1, invalid=0)]),
    })
    made = breakdowns(paths, grid_of())
    cols, rows = made["breakdown.csv"]
    assert [(r[0], r[1], r[2]) for r in rows] == [("m", "news_en", 1), ("m", "news_en", 8)]
    assert as_dicts(cols, rows)[0]["ned"] == 0.3
    ocols, orows = made["breakdown_origami.csv"]
    assert ocols[:5] == ["model", "task", "tier", "category", "items"] and ocols[-1] == "errors"
    assert as_dicts(ocols, orows) [0]["accuracy"] == 1.0

    out = [str(tmp_path / "breakdown.csv"), str(tmp_path / "breakdown_origami.csv")]
    write_tables(paths[:1], grid_of(with_origami=False), str(tmp_path / "lb.csv"), out)
    header = next(csv.reader(io.StringIO((tmp_path / "breakdown_origami.csv").read_text())))
    assert header == ["model", "task", "tier", "category"]  # absent benchmark: header only


def test_csv_writes_empty_for_missing_values_and_rounds() -> None:
    text = to_csv(["a", "b", "c", "d"], [(None, math.nan, True, 1 / 3)])
    assert text == "a,b,c,d\n,,true,0.333333\n"


def docs_rows(model: str, neds: dict[str, list[float]]) -> list[ShredRow]:
    """One row per (document, N), items keyed by document and N (shared across models)."""
    rows = []
    for doc, values in neds.items():
        for n, v in zip((1, 8), values, strict=True):
            r = shred_row(model, n, v)
            rows.append(r.model_copy(update={"item": f"{doc}-{n}", "doc_id": doc}))
    return rows


NEDS = {f"d{i}": [0.1 + 0.02 * i, 0.3 + 0.03 * i] for i in range(8)}


def test_headline_metrics_get_bootstrap_intervals_over_documents(tmp_path: Path) -> None:
    from shredfold.stats import cluster_ci, seed_of

    paths = tables(tmp_path, {"a": (ShredRow, docs_rows("m", NEDS))})
    cols, rows = leaderboard(paths, grid_of(with_origami=False))
    assert cols[5:8] == ["ned", "ned_ci_low", "ned_ci_high"]
    assert {"bleu_ci_low", "rouge_l_ci_high", "teds_ci_low"} <= set(cols)
    (row,) = as_dicts(cols, rows)
    assert row["ned_ci_low"] < row["ned"] < row["ned_ci_high"]
    items = sorted(f"{d}-{n}" for d in NEDS for n in (1, 8))
    by_item = {f"{d}-{n}": (f"news_en/{d}", v) for d, vs in NEDS.items() for n, v in zip((1, 8), vs, strict=True)}
    want = cluster_ci([by_item[i][1] for i in items], [by_item[i][0] for i in items],
                      seed_of("ci", "shred", "ned", "m", items))
    assert (row["ned_ci_low"], row["ned_ci_high"]) == (round(want.low, 6), round(want.high, 6))
    assert row["teds_ci_low"] is None  # no table items: no TEDS, no interval


def test_pairwise_finds_no_difference_between_copies_and_names_the_better_model(tmp_path: Path) -> None:
    worse = {d: [v + 0.1 for v in vs] for d, vs in NEDS.items()}
    paths = tables(tmp_path, {
        "a": (ShredRow, docs_rows("a", NEDS)),
        "b": (ShredRow, docs_rows("b", NEDS)),
        "c": (ShredRow, docs_rows("c", worse)),
    })
    cols, rows = pairwise(paths, grid_of(with_origami=False))
    ned = {(r["model_a"], r["model_b"]): r for r in as_dicts(cols, rows) if r["metric"] == "ned"}
    assert set(ned) == {("a", "b"), ("a", "c"), ("b", "c")}
    same = ned[("a", "b")]
    assert same["diff"] == 0.0 and same["p"] == 1.0 and same["p_holm"] == 1.0 and same["better"] == ""
    shifted = ned[("a", "c")]
    assert shifted["diff"] == -0.1 and shifted["ci_low"] <= -0.1 <= shifted["ci_high"]
    assert shifted["items"] == 16 and shifted["clusters"] == 8
    assert shifted["better"] == "a"  # lower NED is better
    # Holm over the 3 pairs: a-c and b-c tie at the smallest p, so both are scaled by 3.
    assert shifted["p"] == round(1 / 2001, 6)
    assert shifted["p_holm"] == ned[("b", "c")]["p_holm"] == round(3 / 2001, 6)
    bleu = {(r["model_a"], r["model_b"]): r for r in as_dicts(cols, rows) if r["metric"] == "bleu"}
    assert bleu[("b", "c")]["better"] == "b"  # higher BLEU is better


def test_pairs_compare_only_the_items_both_answered(tmp_path: Path) -> None:
    half = {d: vs for d, vs in NEDS.items() if d in ("d0", "d1", "d2", "d3")}
    other = {f"x{i}": [0.5, 0.5] for i in range(3)}  # no item in common with "a" or "b"
    paths = tables(tmp_path, {
        "a": (ShredRow, docs_rows("a", NEDS)),
        "b": (ShredRow, docs_rows("b", {d: [v + 0.2 for v in vs] for d, vs in half.items()})),
        "z": (ShredRow, docs_rows("z", other)),
    })
    cols, rows = pairwise(paths, grid_of(with_origami=False))
    ned = {(r["model_a"], r["model_b"]): r for r in as_dicts(cols, rows) if r["metric"] == "ned"}
    assert set(ned) == {("a", "b")}  # z shares nothing with either: no pair
    ab = ned[("a", "b")]
    assert (ab["items"], ab["clusters"]) == (8, 4)
    shared = [v for vs in half.values() for v in vs]
    assert ab["mean_a"] == round(sum(shared) / 8, 6)
    assert ab["mean_b"] == round(sum(shared) / 8 + 0.2, 6)
    assert ab["diff"] == -0.2 and ab["better"] == "a"


def test_a_reference_model_ranks_first_even_when_it_scores_worst(tmp_path: Path) -> None:
    paths = tables(tmp_path, {
        "a": (ShredRow, [shred_row("ref", 1, 0.9, reference=True), shred_row("ref", 8, 0.9, reference=True)]),
        "b": (ShredRow, [shred_row("good", 1, 0.1), shred_row("good", 8, 0.1)]),
    })
    board = as_dicts(*leaderboard(paths, grid_of(with_origami=False)))
    assert [(r["model"], r["reference"]) for r in board] == [("ref", True), ("good", False)]


def test_a_model_in_both_benchmarks_gets_one_row_with_both_columns(tmp_path: Path) -> None:
    paths = tables(tmp_path, {
        "s": (ShredRow, [shred_row("m", 1, 0.2), shred_row("n", 1, 0.1)]),
        "q": (OrigamiRow, [origami_row("m", "mcq_assoc", "easy", correct=1.0, steps=1, turns=1, invalid=0)]),
    })
    board = as_dicts(*leaderboard(paths, grid_of()))
    # shred rows are not reference rows, origami rows are: a model is a reference if any of
    # its rows is, so m (NED 0.2) ranks before n (NED 0.1)
    assert [r["model"] for r in board] == ["m", "n"]
    m = board[0]
    assert m["ned"] == 0.2 and m["origami_mcq_assoc"] == 1.0 and m["reference"] is True
    assert board[1]["reference"] is False


def test_an_absent_first_benchmark_leaves_the_others(tmp_path: Path) -> None:
    # the grid lists shred first, but only origami rows were scored
    paths = tables(tmp_path, {"q": (OrigamiRow, [
        origami_row(m, "mcq_assoc", "easy", correct=c, steps=1, turns=1, invalid=0).model_copy(
            update={"item": f"i{i}", "design": f"d{i}"})
        for m, c in (("agent", 1.0), ("other", 0.0)) for i in range(3)
    ])})
    cols, rows = leaderboard(paths, grid_of())
    assert [r["origami_mcq_assoc"] for r in as_dicts(cols, rows)] == [1.0, 0.0]
    assert "ned" not in cols
    made = breakdowns(paths, grid_of())
    assert list(made) == ["breakdown_origami.csv"]
    assert [r[0] for r in made["breakdown_origami.csv"][1]] == ["agent", "other"]
    pcols, prows = pairwise(paths, grid_of())
    assert [(r["metric"], r["model_a"], r["model_b"]) for r in as_dicts(pcols, prows)] == [
        ("origami_mcq_assoc", "agent", "other")
    ]


def test_ranking_columns_come_from_a_later_task_when_the_first_has_none(tmp_path: Path) -> None:
    # OrigamiBench first: its tasks rank by nothing, so NED ranks its models, those without
    # one last (by name), and then the models only in ShredBench
    g = Grid([MCQ, SHRED], {"origami_mcq": sets(MCQ, {"task": "mcq_assoc", "tier": "easy"}),
                            "shred": sets(SHRED, {"domain": "news_en", "n": 1})})
    mcq = {"task": "mcq_assoc", "tier": "easy", "correct": 1.0, "steps": 1, "turns": 1, "invalid": 0}
    paths = tables(tmp_path, {
        "q": (OrigamiRow, [origami_row(m, **mcq) for m in ("a-none", "b-worse", "c-better")]),
        "s": (ShredRow, [shred_row("b-worse", 1, 0.6), shred_row("c-better", 1, 0.2), shred_row("d-shred", 1, 0.0)]),
    })
    board = as_dicts(*leaderboard(paths, g))
    assert [r["model"] for r in board] == ["c-better", "b-worse", "a-none", "d-shred"]


def test_a_headline_missing_from_the_plan_does_not_hide_the_next(tmp_path: Path) -> None:
    # only the causal MCQ variant is planned: the associative one's column is absent, the
    # causal one still gets its interval
    g = Grid([MCQ], {"origami_mcq": sets(MCQ, {"task": "mcq_causal", "tier": "easy"})})
    rows = [origami_row("agent", "mcq_causal", "easy", correct=float(i % 2), steps=1, turns=1, invalid=0)
            .model_copy(update={"item": f"i{i}", "design": f"d{i}"}) for i in range(6)]
    cols, out = leaderboard(tables(tmp_path, {"q": (OrigamiRow, rows)}), g)
    assert "origami_mcq_assoc" not in cols
    assert cols[cols.index("origami_mcq_causal") + 1:][:2] == ["origami_mcq_causal_ci_low", "origami_mcq_causal_ci_high"]
    (agent,) = as_dicts(cols, out)
    assert agent["origami_mcq_causal"] == 0.5
    assert agent["origami_mcq_causal_ci_low"] < 0.5 < agent["origami_mcq_causal_ci_high"]


def test_a_metric_with_an_undefined_value_gets_no_interval_and_no_pairs(tmp_path: Path) -> None:
    def table_rows(model: str, first: float) -> list[ShredRow]:
        return [shred_row(model, n, 0.2, domain="table", kind="table", teds=t).model_copy(
            update={"item": f"t{n}", "doc_id": f"t{n}"}) for n, t in ((1, first), (8, 0.5))]

    paths = tables(tmp_path, {"a": (ShredRow, table_rows("a", math.nan)), "b": (ShredRow, table_rows("b", 0.9))})
    board = {r["model"]: r for r in as_dicts(*leaderboard(paths, grid_of(with_origami=False)))}
    assert board["a"]["teds_ci_low"] is None and board["a"]["teds_ci_high"] is None
    assert board["b"]["teds_ci_low"] is not None
    cols, rows = pairwise(paths, grid_of(with_origami=False))
    assert [r["metric"] for r in as_dicts(cols, rows)] == ["ned", "bleu", "rouge_l"]  # no TEDS pair


def test_a_pair_without_shared_items_does_not_stop_the_others(tmp_path: Path) -> None:
    paths = tables(tmp_path, {
        "a": (ShredRow, docs_rows("a", NEDS)),
        "b": (ShredRow, docs_rows("b", {f"x{i}": [0.5, 0.5] for i in range(3)})),  # shares nothing
        "c": (ShredRow, docs_rows("c", NEDS)),
    })
    cols, rows = pairwise(paths, grid_of(with_origami=False))
    assert {(r["model_a"], r["model_b"]) for r in as_dicts(cols, rows) if r["metric"] == "ned"} == {("a", "c")}


def test_no_better_model_without_a_significant_difference(tmp_path: Path) -> None:
    # b is 0.05 worse on four documents and 0.05 better on three, 0.04 better on the last:
    # a mean difference of -0.00125 (not zero) drowned in noise
    shift = [0.05] * 4 + [-0.05] * 3 + [-0.04]
    noisy = {d: [v + e for v in vs] for (d, vs), e in zip(NEDS.items(), shift, strict=True)}
    paths = tables(tmp_path, {"a": (ShredRow, docs_rows("a", NEDS)), "b": (ShredRow, docs_rows("b", noisy))})
    cols, rows = pairwise(paths, grid_of(with_origami=False))
    (ned,) = [r for r in as_dicts(cols, rows) if r["metric"] == "ned"]
    assert ned["diff"] != 0 and ned["p_holm"] >= 0.05
    assert ned["better"] == ""


def test_a_difference_of_exactly_one_is_a_difference(tmp_path: Path) -> None:
    zero = {d: [0.0, 0.0] for d in NEDS}
    one = {d: [1.0, 1.0] for d in NEDS}
    paths = tables(tmp_path, {
        "a": (ShredRow, docs_rows("a", one)), "b": (ShredRow, docs_rows("b", zero)), "c": (ShredRow, docs_rows("c", one)),
    })
    cols, rows = pairwise(paths, grid_of(with_origami=False))
    ned = {(r["model_a"], r["model_b"]): r for r in as_dicts(cols, rows) if r["metric"] == "ned"}
    assert (ned[("a", "b")]["diff"], ned[("a", "b")]["better"]) == (1.0, "b")
    assert (ned[("b", "c")]["diff"], ned[("b", "c")]["better"]) == (-1.0, "b")
    assert (ned[("a", "c")]["diff"], ned[("a", "c")]["better"]) == (0.0, "")


def test_grid_of_a_plan_has_its_tasks_and_their_item_sets(tmp_path: Path) -> None:
    from shredfold.plan import make_plan
    from shredfold.resolve import load_spec

    spec = tmp_path / "s.yaml"
    spec.write_text("name: p\nshred:\n  domains: [news_en]\n  granularities: [1, 8]\n"
                    "  documents_per_domain: 1\nmodels: [oracle]\n")
    plan = make_plan(load_spec(spec))
    g = Grid.of(plan)
    assert g.tasks == [SHRED] and g.benchmarks() == {"shred": [SHRED]}
    assert sorted(s.labels["n"] for s in g.sets["shred"]) == [1, 8]


def test_missing_cell_tables_are_named_three_at_most(tmp_path: Path) -> None:
    missing = [str(tmp_path / f"m{i}.parquet") for i in range(4)]
    with pytest.raises(FileNotFoundError) as three:
        render_tables(missing[:3], grid_of(), [])
    assert str(three.value) == f"cell tables missing: {missing[:3]}"
    with pytest.raises(FileNotFoundError) as four:
        render_tables(missing, grid_of(), [])
    assert str(four.value) == f"cell tables missing: {missing[:3]} …"


def test_a_quick_run_is_marked_on_every_row_beside_the_model(tmp_path: Path) -> None:
    paths = tables(tmp_path, {
        "a": (ShredRow, [shred_row("m", 1, 0.2), shred_row("m", 8, 0.4)]),
        "b": (ShredRow, [shred_row("oracle", 1, 0.0, reference=True)]),
    })
    full_cols, full_rows = leaderboard(paths, grid_of(with_origami=False))
    quick = grid_of(with_origami=False)
    quick.limits = {"shred": 3}
    cols, rows = leaderboard(paths, quick)
    assert "limited" not in full_cols
    assert cols[:2] == ["model", "limited"] and cols[2:] == full_cols[1:]
    assert {r[1] for r in rows} == {"shred: first 3 items per cell, not the full run"}
    assert [r[:1] + r[2:] for r in rows] == full_rows  # nothing else changes
    text = render_tables(paths, quick, [])["leaderboard.csv"]
    assert text.splitlines()[0].startswith("model,limited,reference,")


def test_better_is_decided_by_the_holm_adjusted_p_not_the_raw_one(tmp_path: Path) -> None:
    # b is 0.05 worse on six documents and better on two: raw p about 0.02 for a-b and b-c,
    # but three pairs are tested, and Holm's adjustment lifts both above 0.05 (c copies a)
    shift = [0.05] * 6 + [-0.05, -0.01]
    noisy = {d: [v + e for v in vs] for (d, vs), e in zip(NEDS.items(), shift, strict=True)}
    paths = tables(tmp_path, {
        "a": (ShredRow, docs_rows("a", NEDS)), "b": (ShredRow, docs_rows("b", noisy)), "c": (ShredRow, docs_rows("c", NEDS)),
    })  # fmt: skip
    cols, rows = pairwise(paths, grid_of(with_origami=False))
    ned = {(r["model_a"], r["model_b"]): r for r in as_dicts(cols, rows) if r["metric"] == "ned"}
    assert set(ned) == {("a", "b"), ("a", "c"), ("b", "c")}
    for pair in (("a", "b"), ("b", "c")):
        assert ned[pair]["p"] < 0.05 <= ned[pair]["p_holm"], ned[pair]
        assert ned[pair]["better"] == "", ned[pair]
    # and where the adjusted p is small, the better model is named: the same data with a
    # larger gap on every document
    clear = {d: [v + 0.05 for v in vs] for d, vs in NEDS.items()}
    paths = tables(tmp_path, {"a": (ShredRow, docs_rows("a", NEDS)), "b": (ShredRow, docs_rows("b", clear))})
    cols, rows = pairwise(paths, grid_of(with_origami=False))
    (row,) = [r for r in as_dicts(cols, rows) if r["metric"] == "ned"]
    assert row["p_holm"] < 0.05 and row["better"] == "a"
