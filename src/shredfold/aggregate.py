"""DuckDB over exactly the plan's cell tables → the leaderboard and one breakdown per benchmark.

Only the Parquet files the current plan lists are read, so stale cells left in ``results/``
by an earlier spec never leak into the leaderboard. What each column means is the tasks'
business: every task declares its metrics, its leaderboard and its breakdown
(:mod:`shredfold.tasks.metric`), which give the SQL over its benchmark's rows (grouped by
model for the leaderboard, by the breakdown's keys for its breakdown); this module runs it
and joins the benchmarks by model.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shredfold import paths, stats
from shredfold.store import Store, atomic_write_text
from shredfold.tasks.base import DIGITS, ItemSet, Task, left_out
from shredfold.tasks.metric import Breakdown, IntervalColumn, breakdown_select, interval_columns

if TYPE_CHECKING:
    import duckdb


@dataclass
class Grid:
    """The tasks of a plan and their item sets (what the columns are made for)."""

    tasks: list[Task]
    sets: dict[str, list[ItemSet]] = field(default_factory=dict)
    # benchmark → what the plan, and then the set jobs, left out (the leaderboard's notes)
    notes: dict[str, list[str]] = field(default_factory=dict)
    # a task of which the set jobs left nothing: why (no leaderboard is made of it)
    nothing_left: list[str] = field(default_factory=list)
    limits: dict[str, int] = field(default_factory=dict)  # a quick run's: benchmark → items per cell

    @classmethod
    def of(cls, plan: Any, store: Store | None = None) -> Grid:
        """The plan's grid; with ``store``, also what its built sets left out (e.g. the
        targets of designs whose validation job found they do not fold flat), which only
        the store knows once the set jobs have run."""
        grid = cls(plan.tasks(), {t.name: plan.sets_of(t.name) for t in plan.tasks()},
                   {b: list(n) for b, n in plan.notes.items()}, limits=plan.limits())  # fmt: skip
        if store is None:
            return grid
        for t in grid.tasks:
            out = left_out(t, plan.spec, grid.sets[t.name], store)
            if out is None:
                continue
            grid.notes.setdefault(t.benchmark, []).append(out.note)
            if out.nothing_left:
                grid.nothing_left.append("; ".join([out.nothing_left, *plan.notes.get(t.benchmark, [])]))
        return grid

    def all_notes(self) -> list[str]:
        return [n for notes in self.notes.values() for n in notes]

    def limited(self) -> str | None:
        """What the ``limited`` column says on every row of a quick run's leaderboard."""
        if not self.limits:
            return None
        return "; ".join(f"{b}: first {n} items per cell, not the full run" for b, n in sorted(self.limits.items()))

    def benchmarks(self) -> dict[str, list[Task]]:
        out: dict[str, list[Task]] = {}
        for t in self.tasks:
            out.setdefault(t.benchmark, []).append(t)
        return out


def connect(tables: Sequence[str]) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the view ``rows``: the cell tables' rows, their columns
    matched by name (each benchmark's tables have their own)."""
    import duckdb

    con = duckdb.connect(":memory:")
    con.execute("SET threads TO 1")
    if tables:
        files = ", ".join("'" + p.replace("'", "''") + "'" for p in tables)
        con.execute(f"CREATE VIEW rows AS SELECT * FROM read_parquet([{files}], union_by_name=true)")
    else:
        con.execute("CREATE VIEW rows AS SELECT NULL::VARCHAR AS model, NULL::VARCHAR AS benchmark WHERE false")
    return con


def _present(con: duckdb.DuckDBPyConnection, bench_tasks: Sequence[Task]) -> bool:
    """Whether the tables hold this benchmark's rows (its tasks' columns all exist)."""
    have = {r[0] for r in con.execute("DESCRIBE rows").fetchall()}
    return all(set(t.row_type.model_fields) <= have for t in bench_tasks)


def _unique(columns: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for c in columns:
        if c not in seen:
            seen.add(c)
            out.append(c)
    return out


def leaderboard(tables: Sequence[str], grid: Grid) -> tuple[list[str], list[tuple[Any, ...]]]:
    """A row per model: each benchmark's columns (in plan order). Models of the first
    benchmark come first, reference rows before the others, then by that benchmark's ranking
    columns (empty last), then by name; models only in later benchmarks follow likewise."""
    con = connect(tables)
    cols = ["model", "reference"]
    by_model: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    sort: list[str] = []
    first: set[str] = set()
    for i, (bench, bench_tasks) in enumerate(grid.benchmarks().items()):
        if not _present(con, bench_tasks):
            continue
        own: list[str] = []
        trailer: list[str] = []
        for t in bench_tasks:
            own += [c.sql() for c in t.board.own(grid.sets.get(t.name, []))]
            trailer += [c.sql() for c in t.board.shared()]
            sort = sort or t.board.ranking()
        exprs = _unique(own + trailer)
        sql = (
            f"SELECT model, bool_or(reference) AS reference, {', '.join(exprs)} "
            f"FROM rows WHERE benchmark = '{bench}' GROUP BY model ORDER BY model"
        )
        res = con.execute(sql)
        names = [d[0] for d in res.description]
        cols += names[2:]
        for r in res.fetchall():
            if i == 0:
                first.add(r[0])
            entry = by_model.setdefault(r[0], {"model": r[0], "reference": False})
            if grid.notes.get(bench):
                entry["notes"] = "; ".join([*filter(None, [entry.get("notes")]), *grid.notes[bench]])
            if r[0] not in order:
                order.append(r[0])
            entry["reference"] = bool(entry["reference"] or r[1])
            entry.update(zip(names[2:], r[2:], strict=True))
        for h in _headlines(bench_tasks, grid):
            at = cols.index(h.column) + 1
            cols[at:at] = [f"{h.column}_ci_low", f"{h.column}_ci_high"]
            for model, scored in _values(con, bench, h).items():
                ci = _interval(bench, h, model, scored)
                by_model[model][f"{h.column}_ci_low"] = ci[0] if ci else None
                by_model[model][f"{h.column}_ci_high"] = ci[1] if ci else None

    def rank(model: str) -> tuple[Any, ...]:
        e = by_model[model]
        keys = [(e.get(c) is None, e.get(c) if e.get(c) is not None else 0) for c in sort]
        return (model not in first, not e["reference"], *keys, model)

    if any("notes" in e for e in by_model.values()):
        cols.append("notes")  # what the plan and the set jobs left out, on the rows it concerns
    rows = [tuple(by_model[m].get(c) for c in cols) for m in sorted(order, key=rank)]
    note = grid.limited()
    if note is not None:  # second, beside the model: a quick run's numbers are not the run's
        cols.insert(1, "limited")
        rows = [(r[0], note, *r[1:]) for r in rows]
    return cols, rows


# ---------------------------------------------------------------- intervals and pairwise tests


def _headlines(bench_tasks: Sequence[Task], grid: Grid) -> list[IntervalColumn]:
    """The benchmark's leaderboard columns that get intervals and pairwise tests (those of
    the plan: a variant it left out has no column)."""
    seen: dict[str, IntervalColumn] = {}
    for t in bench_tasks:
        for h in interval_columns(t.board, t.headlines, grid.sets.get(t.name, [])):
            seen.setdefault(h.column, h)
    return list(seen.values())


Scored = dict[str, tuple[str, float]]  # item key -> (cluster, value)


def _values(con: duckdb.DuckDBPyConnection, bench: str, h: IntervalColumn) -> dict[str, Scored]:
    """Each model's value of a headline metric per item, with the item's cluster."""
    sql = (
        f"SELECT model, item, CAST({h.cluster} AS VARCHAR), CAST({h.value} AS DOUBLE) FROM rows "
        f"WHERE benchmark = ? AND ({h.where}) AND ({h.value}) IS NOT NULL ORDER BY model, item"
    )
    out: dict[str, Scored] = {}
    for model, item, cluster, value in con.execute(sql, [bench]).fetchall():
        out.setdefault(model, {})[item] = (cluster, value)
    return out


def _finite(scored: Scored) -> bool:
    return bool(scored) and all(math.isfinite(v) for _, v in scored.values())


def _interval(bench: str, h: IntervalColumn, model: str, scored: Scored) -> tuple[float, float] | None:
    if not _finite(scored):
        return None
    items = sorted(scored)
    ci = stats.cluster_ci(
        [scored[i][1] for i in items],
        [scored[i][0] for i in items],
        stats.seed_of("ci", bench, h.column, model, items),
    )
    return round(ci.low, DIGITS), round(ci.high, DIGITS)


PAIRWISE_COLUMNS = [
    "benchmark", "metric", "model_a", "model_b", "items", "clusters", "mean_a", "mean_b",
    "diff", "ci_low", "ci_high", "p", "p_holm", "better",
]  # fmt: skip


def pairwise(tables: Sequence[str], grid: Grid) -> tuple[list[str], list[tuple[Any, ...]]]:
    """For every headline metric and pair of models (by name), a paired bootstrap of
    ``mean_a - mean_b`` on the items both answered, resampled by cluster; p-values Holm-adjusted
    within each metric's family of pairs. ``better`` names the better model where the adjusted
    p is below 0.05."""
    con = connect(tables)
    rows: list[tuple[Any, ...]] = []
    for bench, bench_tasks in grid.benchmarks().items():
        if not _present(con, bench_tasks):
            continue
        for h in _headlines(bench_tasks, grid):
            by_model = {m: s for m, s in _values(con, bench, h).items() if _finite(s)}
            family = []
            models = sorted(by_model)
            for ai, a in enumerate(models):
                for b in models[ai + 1 :]:
                    shared = sorted(set(by_model[a]) & set(by_model[b]))
                    if not shared:
                        continue
                    va = [by_model[a][i][1] for i in shared]
                    vb = [by_model[b][i][1] for i in shared]
                    r = stats.paired_diff(
                        va, vb, [by_model[a][i][0] for i in shared],
                        stats.seed_of("pair", bench, h.column, a, b, shared),
                    )  # fmt: skip
                    family.append((a, b, r, sum(va) / len(va), sum(vb) / len(vb)))
            adjusted = stats.holm([f[2].p for f in family])
            for (a, b, r, ma, mb), p_holm in zip(family, adjusted, strict=True):
                better = ""
                if p_holm < 0.05 and r.diff != 0:
                    better = a if (r.diff < 0) == h.lower_is_better else b
                rows.append((
                    bench, h.column, a, b, r.items, r.clusters, round(ma, DIGITS), round(mb, DIGITS),
                    round(r.diff, DIGITS), round(r.low, DIGITS), round(r.high, DIGITS),
                    round(r.p, DIGITS), round(p_holm, DIGITS), better,
                ))  # fmt: skip
    return list(PAIRWISE_COLUMNS), rows


def breakdowns(tables: Sequence[str], grid: Grid) -> dict[str, tuple[list[str], list[tuple[Any, ...]]]]:
    """Each benchmark's breakdown table (file name → columns, rows), models and keys sorted."""
    con = connect(tables)
    out: dict[str, tuple[list[str], list[tuple[Any, ...]]]] = {}
    for bench, bench_tasks in grid.benchmarks().items():
        if not _present(con, bench_tasks):
            continue
        parts: list[Breakdown] = [t.breakdown for t in bench_tasks]
        b = parts[0]
        keys = ", ".join(["model", *b.keys])
        sql = (
            f"SELECT {keys}, {', '.join(breakdown_select(parts))} FROM rows "
            f"WHERE benchmark = '{bench}' GROUP BY {keys} ORDER BY {keys}"
        )
        res = con.execute(sql)
        out[b.file] = ([d[0] for d in res.description], res.fetchall())
    return out


def breakdown_files() -> list[str]:
    """Every breakdown file a plan can produce (written, header only, when a benchmark is
    absent, so Snakemake can declare them all as outputs)."""
    from shredfold.tasks.registry import tasks

    return _unique([paths.breakdown_path(t.breakdown.file) for t in tasks()])


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(round(v, DIGITS))
    return str(v)


def to_csv(cols: list[str], rows: list[tuple[Any, ...]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([_fmt(v) for v in r])
    return buf.getvalue()


def render_tables(tables: Sequence[str], grid: Grid, breakdown_names: Sequence[str]) -> dict[str, str]:
    """The CSV text of the leaderboard, each named breakdown and the pairwise tests, by file
    name (what :func:`write_tables` writes, and what a release's verify rebuilds)."""
    missing = [p for p in tables if not Path(p).is_file()]
    if missing:
        raise FileNotFoundError(f"cell tables missing: {missing[:3]}{' …' if len(missing) > 3 else ''}")
    out = {Path(paths.LEADERBOARD).name: to_csv(*leaderboard(tables, grid))}
    made = breakdowns(tables, grid)
    from shredfold.tasks.registry import tasks

    headers = {t.breakdown.file: ["model", *t.breakdown.keys] for t in tasks()}
    for name in breakdown_names:
        cols, rows = made.get(name, (headers.get(name, ["model"]), []))
        out[name] = to_csv(cols, rows)
    out[Path(paths.PAIRWISE).name] = to_csv(*pairwise(tables, grid))
    return out


def write_tables(
    tables: Sequence[str],
    grid: Grid,
    leaderboard_csv: str,
    breakdown_csvs: Sequence[str],
    pairwise_csv: str | None = None,
) -> None:
    made = render_tables(tables, grid, [Path(p).name for p in breakdown_csvs])
    atomic_write_text(leaderboard_csv, made[Path(paths.LEADERBOARD).name])
    for path in breakdown_csvs:
        atomic_write_text(path, made[Path(path).name])
    if pairwise_csv is not None:
        atomic_write_text(pairwise_csv, made[Path(paths.PAIRWISE).name])
