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


def leaderboard(paths: Sequence[str], granularities: Sequence[int]) -> tuple[list[str], list[tuple]]:
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
    paths: Sequence[str], granularities: Sequence[int], leaderboard_csv: str, breakdown_csv: str
) -> None:
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        raise FileNotFoundError(f"cell tables missing: {missing[:3]}{' …' if len(missing) > 3 else ''}")
    atomic_write_text(leaderboard_csv, to_csv(*leaderboard(paths, granularities)))
    atomic_write_text(breakdown_csv, to_csv(*breakdown(paths)))
