"""DuckDB over exactly the plan's cell tables → leaderboard and breakdown CSVs.

Only the Parquet files the current plan lists are read, so stale cells left in ``results/``
by an earlier spec never leak into the leaderboard.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from shredfold.store import atomic_write_text

DIGITS = 6

_SHRED_METRICS = """
    count(*) AS items,
    count(error) AS errors,
    round(count(error) / count(*), {d}) AS error_rate,
    round(avg(ned), {d}) AS ned,
    round(avg(bleu), {d}) AS bleu,
    round(avg(rouge_l), {d}) AS rouge_l,
    round(avg(teds) FILTER (WHERE kind = 'table'), {d}) AS teds,
    round(avg(teds_s) FILTER (WHERE kind = 'table'), {d}) AS teds_s
"""

# Latency over every answered item, cached or not: a stored answer keeps the latency it was
# measured with, so the columns do not depend on which run (or retry attempt) paid for it,
# and re-scoring from stored responses reproduces them exactly. Cost is what the answers cost.
_COST = """
    sum(input_tokens) AS input_tokens,
    sum(output_tokens) AS output_tokens,
    round(sum(cost_usd), {d}) AS cost_usd,
    round(quantile_cont(latency_s, 0.5) FILTER (WHERE error IS NULL), 3) AS latency_p50_s,
    round(quantile_cont(latency_s, 0.95) FILTER (WHERE error IS NULL), 3) AS latency_p95_s
"""


def _connect(paths: Sequence[str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute("SET threads TO 1")
    if paths:
        files = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
        con.execute(f"CREATE VIEW rows AS SELECT * FROM read_parquet([{files}], union_by_name=true)")
    return con


_ORIGAMI_TIERS = ("easy", "medium", "hard")


def _origami_columns(d: int = DIGITS) -> str:
    """OrigamiBench leaderboard columns (NULL for a model without origami cells)."""
    cols = [
        f"round(avg(correct) FILTER (WHERE domain = 'mcq_assoc'), {d}) AS origami_mcq_assoc",
        f"round(avg(correct) FILTER (WHERE domain = 'mcq_causal'), {d}) AS origami_mcq_causal",
    ]
    for m in ("qe", "gs", "ss"):
        cols.append(f"round(avg({m}) FILTER (WHERE domain = 'fullstep'), {d}) AS origami_{m}")
        cols += [
            f"round(avg({m}) FILTER (WHERE domain = 'fullstep' AND tier = '{t}'), {d}) AS origami_{m}_{t}"
            for t in _ORIGAMI_TIERS
        ]
    cols += [
        f"round(avg(steps) FILTER (WHERE domain = 'fullstep'), {d}) AS origami_steps",
        f"round(sum(invalid) FILTER (WHERE domain = 'fullstep') / "
        f"nullif(sum(turns) FILTER (WHERE domain = 'fullstep'), 0), {d}) AS origami_invalid_rate",
        "count(error) AS origami_errors",
    ]
    return ",\n".join(cols)


def _names(con: duckdb.DuckDBPyConnection) -> set[str]:
    try:
        return {r[0] for r in con.execute("DESCRIBE rows").fetchall()}
    except duckdb.Error:
        return set()


def _has_origami(con: duckdb.DuckDBPyConnection) -> bool:
    return {"tier", "correct", "gs"} <= _names(con)


def leaderboard(paths: Sequence[str], granularities: Sequence[int]) -> tuple[list[str], list[tuple]]:
    con = _connect(paths)
    if "ned" in _names(con) or not _has_origami(con):
        cols, rows = _shred_leaderboard(paths, granularities)
    else:  # an origami-only spec
        cols, rows = ["model", "reference"], []
    if not _has_origami(con):
        return cols, rows
    res = con.execute(
        f"SELECT model, bool_or(reference) AS reference, {_origami_columns()} "
        "FROM rows WHERE benchmark = 'origami' GROUP BY model"
    )
    ocols = [d[0] for d in res.description][2:]
    origami = {r[0]: r for r in res.fetchall()}
    shred_models = {r[0] for r in rows}
    out = [(*r, *(origami[r[0]][2:] if r[0] in origami else (None,) * len(ocols))) for r in rows]
    # a model with origami cells only: empty shred columns, the reference flag from its cells
    for name in sorted(set(origami) - shred_models):
        blank = [None] * len(cols)
        blank[0], blank[1] = name, origami[name][1]
        out.append((*blank, *origami[name][2:]))
    return [*cols, *ocols], out


def breakdown_origami(paths: Sequence[str]) -> tuple[list[str], list[tuple]]:
    """Origami metrics by model, task, tier and design category."""
    con = _connect(paths)
    if not _has_origami(con):
        return ["model"], []
    sql = f"""
        SELECT model, domain AS task, tier, category, count(*) AS items,
               round(avg(correct), {DIGITS}) AS accuracy,
               round(avg(qe), {DIGITS}) AS qe, round(avg(gs), {DIGITS}) AS gs,
               round(avg(ss), {DIGITS}) AS ss, round(avg(steps), {DIGITS}) AS steps,
               round(sum(invalid) / nullif(sum(turns), 0), {DIGITS}) AS invalid_rate,
               count(error) AS errors
        FROM rows WHERE benchmark = 'origami'
        GROUP BY model, domain, tier, category
        ORDER BY model, task, tier, category
    """
    res = con.execute(sql)
    return [d[0] for d in res.description], res.fetchall()


def _shred_leaderboard(paths: Sequence[str], granularities: Sequence[int]) -> tuple[list[str], list[tuple]]:
    con = _connect(paths)
    per_n = ",\n".join(
        f"round(avg(ned) FILTER (WHERE granularity = {int(n)}), {DIGITS}) AS ned_n{int(n)}"
        for n in sorted(granularities)
    )
    sql = f"""
        SELECT model, bool_or(reference) AS reference,
               {_SHRED_METRICS.format(d=DIGITS)},
               {per_n + "," if per_n else ""}
               {_COST.format(d=DIGITS)}
        FROM rows WHERE benchmark = 'shred'
        GROUP BY model
        ORDER BY reference DESC, ned ASC, model ASC
    """
    res = con.execute(sql)
    cols = [d[0] for d in res.description]
    return cols, res.fetchall()


def breakdown(paths: Sequence[str]) -> tuple[list[str], list[tuple]]:
    con = _connect(paths)
    if _has_origami(con) and "ned" not in _names(con):
        return ["model", "domain", "granularity"], []
    sql = f"""
        SELECT model, domain, granularity, {_SHRED_METRICS.format(d=DIGITS)},
               {_COST.format(d=DIGITS)}
        FROM rows WHERE benchmark = 'shred'
        GROUP BY model, domain, granularity
        ORDER BY model, domain, granularity
    """
    res = con.execute(sql)
    return [d[0] for d in res.description], res.fetchall()


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(round(v, DIGITS))
    return str(v)


def to_csv(cols: list[str], rows: list[tuple]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([_fmt(v) for v in r])
    return buf.getvalue()


def write_tables(
    paths: Sequence[str],
    granularities: Sequence[int],
    leaderboard_csv: str,
    breakdown_csv: str,
    breakdown_origami_csv: str | None = None,
) -> None:
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        raise FileNotFoundError(f"cell tables missing: {missing[:3]}{' …' if len(missing) > 3 else ''}")
    atomic_write_text(leaderboard_csv, to_csv(*leaderboard(paths, granularities)))
    atomic_write_text(breakdown_csv, to_csv(*breakdown(paths)))
    # Written even when empty (header only), so Snakemake can declare it as an output.
    out = breakdown_origami_csv or str(
        Path(breakdown_csv).with_name(Path(breakdown_csv).stem + "_origami.csv")
    )
    atomic_write_text(out, to_csv(*breakdown_origami(paths)))
