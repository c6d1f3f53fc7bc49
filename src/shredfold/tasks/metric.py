"""A task's metrics, each declared once, and the tables that derive from the declarations.

A :class:`Metric` is a column a task reports for a group of rows: the per-item value it adds
to the task's row when it is a score the task computes (its :class:`Field`), the aggregate a
group of rows becomes (structured: a function, the row column it reads, the rows it keeps),
the digits it is rounded to and whether lower is better. What lists metrics derives from
these values:

- the row type (:func:`row_type`): the metrics' fields between the row's keys and its
  bookkeeping (tokens, latency, error), so the cell table's schema follows;
- a breakdown (:class:`Breakdown`): its metrics per model and group keys;
- the leaderboard (:class:`Board`): a task's metrics per model, over scopes of its
  benchmark's rows and per label value (``ned_n8``); its :class:`Headline`\\ s name the
  metrics whose columns get bootstrap intervals and pairwise tests;
- the report's and evaluation's lists (they read the same tuples).

The SQL is written here from these values, for the aggregator and the report; nothing parses
SQL back. A task is checked when it registers (:func:`check`): a headline or a ranking
column naming no metric of its leaderboard, a column its row lacks, two columns of one name,
each stop the import with a message naming the task.

Why in :mod:`shredfold.tasks` and not :mod:`shredfold.metrics`: the functions there take
values and return values, below the tasks; a declaration speaks of a task's rows and tables.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, create_model

from shredfold.tasks.base import DIGITS, ItemSet, Label, Row

# Latency is reported to the millisecond: finer digits are noise of the machine.
LATENCY_DIGITS = 3


# ---------------------------------------------------------------- which rows


@dataclass(frozen=True)
class Eq:
    """The rows whose ``column`` holds ``value``."""

    column: str
    value: Label

    def sql(self) -> str:
        if isinstance(self.value, int) and not isinstance(self.value, bool):
            return f"{self.column} = {self.value}"
        return f"{self.column} = '{str(self.value).replace(chr(39), chr(39) * 2)}'"


@dataclass(frozen=True)
class IsNull:
    """The rows whose ``column`` is empty (``IsNull("error")``: the answered items)."""

    column: str

    def sql(self) -> str:
        return f"{self.column} IS NULL"


Cond = Eq | IsNull
Where = tuple[Cond, ...]


def where_sql(where: Where) -> str:
    """The conditions joined (every row: ``true``)."""
    return " AND ".join(c.sql() for c in where) or "true"


# ---------------------------------------------------------------- aggregates

AggFn = Literal["avg", "sum", "min", "count", "quantile", "distinct"]


@dataclass(frozen=True)
class Agg:
    """One aggregate of a row column (``None``: of the rows, ``count(*)``) over the group's
    rows that satisfy ``where``."""

    fn: AggFn
    column: str | None = None
    where: Where = ()
    q: float | None = None  # a quantile's level

    def sql(self, scope: Where = ()) -> str:
        arg = self.column or "*"
        if self.fn == "quantile":
            expr = f"quantile_cont({arg}, {self.q})"
        elif self.fn == "distinct":
            expr = f"string_agg(DISTINCT {arg}, ',')"
        else:
            expr = f"{self.fn}({arg})"
        keep = (*scope, *self.where)
        return f"{expr} FILTER (WHERE {where_sql(keep)})" if keep else expr

    @property
    def reads(self) -> set[str]:
        return {*filter(None, [self.column]), *(c.column for c in self.where)}


@dataclass(frozen=True)
class Ratio:
    """One aggregate over another; ``guard``: the denominator may be zero, and the ratio is
    then empty (a group always has rows, so a count of them needs no guard)."""

    num: Agg
    den: Agg
    guard: bool = False

    def sql(self, scope: Where = ()) -> str:
        den = self.den.sql(scope)
        return f"{self.num.sql(scope)} / {f'nullif({den}, 0)' if self.guard else den}"

    @property
    def reads(self) -> set[str]:
        return self.num.reads | self.den.reads


def mean(column: str, *where: Cond) -> Agg:
    return Agg("avg", column, where)


def total(column: str) -> Agg:
    return Agg("sum", column)


def count(column: str | None = None) -> Agg:
    """The rows (``None``), or those where ``column`` is not empty."""
    return Agg("count", column)


def least(column: str) -> Agg:
    return Agg("min", column)


def quantile(column: str, q: float, *where: Cond) -> Agg:
    return Agg("quantile", column, where, q)


def distinct(column: str) -> Agg:
    """The distinct values, comma-joined."""
    return Agg("distinct", column)


# ---------------------------------------------------------------- metrics


@dataclass(frozen=True)
class Field:
    """A per-item value of a task's row: a cell-table column. ``arrow`` where the Python type
    is ambiguous (an int is int64 otherwise). A field that may be None defaults to None."""

    name: str
    type: Any = float
    arrow: str | None = None

    @property
    def optional(self) -> bool:
        return type(None) in typing.get_args(self.type) and (
            isinstance(self.type, types.UnionType) or typing.get_origin(self.type) is typing.Union
        )


@dataclass(frozen=True)
class Metric:
    """A column a task reports for a group of rows (see the module's docstring). ``field`` is
    the per-item value the metric adds to the row, when the task computes it for the metric;
    a metric of bookkeeping (tokens, errors) reads columns the row has anyway."""

    name: str
    agg: Agg | Ratio
    digits: int | None = DIGITS  # None: not rounded (counts, text)
    lower_is_better: bool = False
    field: Field | None = None

    @classmethod
    def score(cls, name: str, type: Any = float, *where: Cond, lower_is_better: bool = False) -> Metric:
        """A per-item score of this name, and its mean over the rows (that satisfy ``where``)."""
        return cls(name, mean(name, *where), lower_is_better=lower_is_better, field=Field(name, type))

    def expr(self, scope: Where = ()) -> str:
        sql = self.agg.sql(scope)
        return sql if self.digits is None else f"round({sql}, {self.digits})"

    def select(self, name: str | None = None, scope: Where = ()) -> str:
        """The select expression: the aggregate over ``scope``'s rows, named ``name``."""
        return f"{self.expr(scope)} AS {name or self.name}"


# Every task's rows count their items and the failed ones (``error`` says why one failed).
ITEMS = Metric("items", count(), digits=None)
ERRORS = Metric("errors", count("error"), digits=None)


def metrics_in(values: Iterable[Metric | Field]) -> tuple[Metric, ...]:
    return tuple(v for v in values if isinstance(v, Metric))


def field_names(values: Iterable[Metric | Field]) -> tuple[str, ...]:
    """The row fields ``values`` add, in order."""
    return tuple(f.name for f in _fields(values))


def _fields(values: Iterable[Metric | Field]) -> list[Field]:
    return [f for v in values if (f := v.field if isinstance(v, Metric) else v) is not None]


def row_type(
    name: str, keys: type[Row], values: Sequence[Metric | Field], tail: type[BaseModel], module: str, doc: str
) -> type[Row]:
    """A task's row: the fields of ``keys`` (what names the item), those ``values`` add (its
    scores), then those of ``tail`` (what the answer cost, whether it failed), in this order,
    which is the cell table's column order."""
    fields: dict[str, Any] = {}
    arrow = {**keys.arrow_types, **getattr(tail, "arrow_types", {})}
    for f in _fields(values):
        fields[f.name] = (f.type, None if f.optional else ...)
        if f.arrow is not None:
            arrow[f.name] = f.arrow
    for n, info in tail.model_fields.items():
        fields[n] = (info.annotation, info)
    model = create_model(name, __base__=keys, __module__=module, __doc__=doc, **fields)  # type: ignore[call-overload]
    model.arrow_types = arrow
    return model


# ---------------------------------------------------------------- the breakdown


@dataclass(frozen=True)
class Breakdown:
    """A breakdown table: its metrics per model and ``keys`` (row columns). ``lead`` and
    ``trailer`` are shared by every task writing to the same file (kept once, first and
    last), ``columns`` the task's own."""

    file: str
    keys: tuple[str, ...]
    columns: tuple[Metric, ...]
    lead: tuple[Metric, ...] = ()
    trailer: tuple[Metric, ...] = ()


def breakdown_select(parts: Sequence[Breakdown]) -> list[str]:
    """The select expressions of the tasks writing one breakdown file, each once."""
    metrics = [m for p in parts for m in p.lead] + [m for p in parts for m in p.columns] + [m for p in parts for m in p.trailer]
    return list(dict.fromkeys(m.select() for m in metrics))


# ---------------------------------------------------------------- the leaderboard


@dataclass(frozen=True)
class Split:
    """A metric's leaderboard columns per value of a row column (``ned_n8``: NED over the rows
    of granularity 8): for each of ``values`` (all of them, planned or not) or, with ``label``,
    each value of that label among the plan's item sets."""

    metric: Metric
    column: str
    suffix: str  # the value's part of the name, e.g. "_n{}"
    values: tuple[Label, ...] = ()
    label: str | None = None

    def values_in(self, item_sets: Sequence[ItemSet]) -> list[Label]:
        if self.label is None:
            return list(self.values)
        return sorted({s.labels[self.label] for s in item_sets if self.label in s.labels})  # type: ignore[type-var]


@dataclass(frozen=True)
class Scope:
    """Rows of the benchmark a task's leaderboard columns are computed over. ``name`` names
    the column instead of its metric (a scope of one metric); ``planned``: only when some
    item set of the plan has the labels ``where`` asks for (a variant the spec left out has
    no column)."""

    where: Where = ()
    name: str | None = None
    planned: bool = False

    def in_plan(self, item_sets: Sequence[ItemSet]) -> bool:
        eqs = [c for c in self.where if isinstance(c, Eq)]
        return not self.planned or any(all(s.labels.get(c.column) == c.value for c in eqs) for s in item_sets)


@dataclass(frozen=True)
class BoardColumn:
    """A leaderboard column: a metric over a scope's rows (and a split's value)."""

    name: str
    metric: Metric
    where: Where = ()
    split: bool = False

    def sql(self) -> str:
        return self.metric.select(self.name, self.where)


@dataclass(frozen=True)
class Board:
    """A task's leaderboard columns, per model: for each scope (in order), its ``columns``
    named ``prefix`` and the metric's (or the scope's) name, a split's value after it; then
    ``trailer``, shared by the benchmark's tasks (kept once, after all of their own).
    ``rank``: the metrics (lower is better) that rank models, first benchmark first."""

    columns: tuple[Metric | Split, ...]
    prefix: str = ""
    scopes: tuple[Scope, ...] = (Scope(),)
    trailer: tuple[Metric, ...] = ()
    rank: tuple[Metric, ...] = ()

    def own(self, item_sets: Sequence[ItemSet]) -> list[BoardColumn]:
        out = []
        for scope in self.scopes:
            if not scope.in_plan(item_sets):
                continue
            for c in self.columns:
                m = c.metric if isinstance(c, Split) else c
                name = self.prefix + (scope.name or m.name)
                if isinstance(c, Split):
                    out += [BoardColumn(name + c.suffix.format(v), m, (*scope.where, Eq(c.column, v)), split=True)
                            for v in c.values_in(item_sets)]  # fmt: skip
                else:
                    out.append(BoardColumn(name, m, scope.where))
        return out

    def shared(self) -> list[BoardColumn]:
        return [BoardColumn(self.prefix + m.name, m) for m in self.trailer]

    def ranking(self) -> list[str]:
        return [self.prefix + m.name for m in self.rank]


@dataclass(frozen=True)
class Headline:
    """A metric of the task's leaderboard whose columns (not its splits) get a bootstrap
    interval and pairwise tests. ``unit``: the row columns naming the unit the items are
    resampled by, whose items are not independent (a document with its N variants). The
    order of a task's headlines is the order of its pairwise tests."""

    metric: str
    unit: tuple[str, ...]


@dataclass(frozen=True)
class IntervalColumn:
    """A headline's leaderboard column, as the aggregator resamples it: the per-item
    ``value`` (a row column) of the rows satisfying ``where``, clustered by ``cluster``."""

    column: str
    value: str
    cluster: str
    where: str
    lower_is_better: bool


def interval_columns(board: Board, headlines: Sequence[Headline], item_sets: Sequence[ItemSet]) -> list[IntervalColumn]:
    """The columns of the plan's leaderboard that get intervals and pairwise tests."""
    columns = [c for c in board.own(item_sets) if not c.split]
    out = []
    for h in headlines:
        for c in columns:
            if c.metric.name == h.metric:
                assert isinstance(c.metric.agg, Agg) and c.metric.agg.column is not None  # checked at registration
                out.append(IntervalColumn(c.name, c.metric.agg.column, " || '/' || ".join(h.unit),
                                  where_sql((*c.where, *c.metric.agg.where)), c.metric.lower_is_better))  # fmt: skip
    return out


# ---------------------------------------------------------------- checks


class MetricDeclarationError(ValueError):
    """A task's metric declarations do not hold together (raised when it registers)."""


def check(task: Any) -> None:
    """A task's declarations, checked once when it registers (see the module's docstring)."""
    name = getattr(task, "name", type(task).__name__)
    board: Board = task.board
    breakdown: Breakdown = task.breakdown
    row: type[Row] = task.row_type
    have = set(row.model_fields)

    def fail(why: str) -> None:
        raise MetricDeclarationError(f"task {name!r}: {why}")

    on_board = {c.name: c for c in board.columns if isinstance(c, Metric)}
    for h in getattr(task, "headlines", ()):
        m = on_board.get(h.metric)
        if not isinstance(m, Metric):
            fail(f"headline {h.metric!r} names no metric of its leaderboard (it has {', '.join(on_board) or 'none'})")
        elif not (isinstance(m.agg, Agg) and m.agg.fn == "avg" and m.agg.column):
            fail(f"headline {h.metric!r} is not a mean of a row column (an interval is of a mean)")
        for u in h.unit:
            if u not in have:
                fail(f"headline {h.metric!r}: its unit names {u!r}, which its row type has not")
    for m in board.rank:
        if m.name not in on_board:
            fail(f"ranking metric {m.name!r} is not on its leaderboard")
        if not m.lower_is_better:
            fail(f"ranking metric {m.name!r} ranks ascending, but higher is better")
    metrics = [
        *(c.metric if isinstance(c, Split) else c for c in board.columns), *board.trailer,
        *breakdown.lead, *breakdown.columns, *breakdown.trailer,
    ]  # fmt: skip
    reads = {*breakdown.keys, *(c.column for c in board.columns if isinstance(c, Split))}
    reads |= {c.column for s in board.scopes for c in s.where}
    for m in metrics:
        for col in m.agg.reads - have:
            fail(f"metric {m.name!r} reads {col!r}, which its row type has not")
        if m.field is not None and m.field.name not in have:
            fail(f"metric {m.name!r} adds field {m.field.name!r}, which its row type has not (made with row_type?)")
    for col in sorted(reads - have):
        fail(f"its tables group or filter by {col!r}, which its row type has not")
    _unique_names(_every_name(board), "leaderboard", fail)
    _unique_names([m.name for m in (*breakdown.lead, *breakdown.columns, *breakdown.trailer)], "breakdown", fail)


def _every_name(board: Board) -> list[str]:
    """The leaderboard columns a board can give, every scope planned (a split by a plan's
    label aside: its values are the plan's)."""
    out = []
    for s in board.scopes:
        for c in board.columns:
            m = c.metric if isinstance(c, Split) else c
            name = board.prefix + (s.name or m.name)
            out += [name + c.suffix.format(v) for v in c.values] if isinstance(c, Split) else [name]
    return [*out, *(c.name for c in board.shared())]


def _unique_names(names: Sequence[str], where: str, fail: Any) -> None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            fail(f"two {where} columns are named {n!r}")
        seen.add(n)


def row_values(values: Iterable[Metric | Field], scores: Mapping[str, Any]) -> dict[str, Any]:
    """The fields ``values`` add to a row, read from a scoring function's result by name."""
    return {n: scores[n] for n in field_names(values)}
