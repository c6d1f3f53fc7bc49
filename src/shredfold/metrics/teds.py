"""TEDS and TEDS-S: tree-edit-distance similarity of tables (Zhong et al., 2020, PubTabNet).

Both tables are brought to the canonical form of :mod:`shredfold.tables`
(``table > thead/tbody > tr > td``, spans as attributes, ``th`` read as ``td``) and turned
into trees. The tree edit distance (APTED) uses unit insert/delete costs and this rename
cost, as in PubTabNet's reference implementation:

* 1 if the tags differ, or if two cells differ in ``colspan`` or ``rowspan``;
* for two cells with equal spans: the normalised Levenshtein distance of their texts
  (0 when both are empty); TEDS-S ignores the text, so this is 0;
* 0 otherwise.

``TEDS = 1 - TED / max(|T_pred|, |T_ref|)`` where ``|T|`` counts every node of the tree,
the root ``table`` included (the paper's definition; PubTabNet's script counts the
descendants of ``<table>`` only, one fewer, which differs only in the third decimal for
small tables).

The prediction may be HTML or a Markdown pipe table, bare or inside prose or a code fence;
the first table found is scored. A prediction without a table scores 0. The reference must
contain a table.

Bounded cost (:mod:`~shredfold.limits`): the prediction is read up to 16× the
reference's compact HTML + 16,000 characters; its table is cut to its first rows and cells
in reading order so that its tree has at most 4 × |T_ref| + 16 nodes, and each cell's text
to 4 × the longest reference cell + 64 characters. The score is TEDS of that truncated
table, which for a table cut by the node cap is below 1/4, as the uncut table's is
(TED ≥ |T_pred| - |T_ref|). :func:`table_scores` reports what was cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apted import APTED, Config
from rapidfuzz.distance import Levenshtein

from shredfold import limits
from shredfold.tables import Cell, Row, Table, find_table, table_text

__all__ = [
    "find_table",
    "table_html_size",
    "table_nodes",
    "table_scores",
    "table_text",
    "teds",
    "teds_s",
    "truncate_table",
]


@dataclass(eq=False)
class _Node:
    tag: str
    colspan: int = 1
    rowspan: int = 1
    text: str = ""
    children: list[_Node] = field(default_factory=list)

    def size(self) -> int:
        return 1 + sum(child.size() for child in self.children)


class _TedsConfig(Config):
    def rename(self, a: _Node, b: _Node) -> float:
        if a.tag != b.tag or a.colspan != b.colspan or a.rowspan != b.rowspan:
            return 1.0
        if a.tag == "td":
            return Levenshtein.normalized_distance(a.text, b.text)
        return 0.0

    def children(self, node: _Node) -> list[_Node]:
        return node.children


def _tree(table: Table, *, structure_only: bool) -> _Node:
    def section(tag: str, rows: tuple) -> _Node:
        return _Node(
            tag,
            children=[
                _Node(
                    "tr",
                    children=[
                        _Node("td", c.colspan, c.rowspan, "" if structure_only else c.text)
                        for c in row
                    ],
                )
                for row in rows
            ],
        )

    root = _Node("table")
    if table.head:
        root.children.append(section("thead", table.head))
    if table.body:
        root.children.append(section("tbody", table.body))
    return root


def table_nodes(table: Table) -> int:
    """Size of a table's tree: the table, each non-empty section, each row and each cell."""
    return 1 + sum(
        1 + sum(1 + len(row) for row in rows) for rows in (table.head, table.body) if rows
    )


def table_html_size(table: Table) -> int:
    """Length of the table written as compact HTML (``<td>`` cells, no attributes but spans);
    the reference size the raw-character cap of TEDS is relative to."""
    cells = [c for row in table.rows for c in row]
    spans = sum(13 * ((c.colspan > 1) + (c.rowspan > 1)) for c in cells)
    sections = 15 * sum(bool(rows) for rows in (table.head, table.body))
    return 15 + sections + 9 * len(table.rows) + sum(9 + len(c.text) for c in cells) + spans


def truncate_table(table: Table, max_nodes: int, max_cell_chars: int) -> tuple[Table, str]:
    """The table cut to its first rows and cells (reading order: head, then body) so that
    its tree has at most ``max_nodes`` nodes, each cell's text to ``max_cell_chars``; and a
    note of what was cut (``""`` when nothing)."""
    had = table_nodes(table)
    budget = max_nodes - 1  # the table node
    sections: list[tuple[Row, ...]] = []
    long_cells = 0
    for rows in (table.head, table.body):
        kept: list[Row] = []
        if rows and budget >= 2:  # the section's node and at least one row's
            budget -= 1
            for row in rows:
                if budget < 1:
                    break
                budget -= 1
                cells = row[:budget]
                budget -= len(cells)
                long_cells += sum(len(c.text) > max_cell_chars for c in cells)
                kept.append(
                    tuple(
                        Cell(c.text[:max_cell_chars], c.colspan, c.rowspan)
                        if len(c.text) > max_cell_chars
                        else c
                        for c in cells
                    )
                )
        sections.append(tuple(kept))
    out = Table(head=sections[0], body=sections[1])
    notes = []
    if had > max_nodes:
        notes.append(f"table cut to {table_nodes(out)} of {had} nodes")
    if long_cells:
        notes.append(f"{long_cells} table cell(s) cut to {max_cell_chars} characters")
    return out, limits.join_notes(*notes)


def _reference(ref: str | Table) -> Table:
    table = ref if isinstance(ref, Table) else find_table(ref)
    if table is None:
        raise ValueError("the reference contains no table")
    return table


def _bounded_prediction(pred: str, ref_table: Table) -> tuple[Table | None, str]:
    """The prediction's table within the caps of :mod:`~shredfold.limits`."""
    pred, raw_note = limits.cut(pred, limits.raw_cap(table_html_size(ref_table)), "answer")
    pred_table = find_table(pred)
    if pred_table is None:
        return None, raw_note
    longest = max((len(c.text) for row in ref_table.rows for c in row), default=0)
    pred_table, note = truncate_table(
        pred_table, limits.node_cap(table_nodes(ref_table)), limits.cell_cap(longest)
    )
    return pred_table, limits.join_notes(raw_note, note)


def _similarity(pred_table: Table | None, ref_table: Table, *, structure_only: bool) -> float:
    if pred_table is None:
        return 0.0
    a = _tree(pred_table, structure_only=structure_only)
    b = _tree(ref_table, structure_only=structure_only)
    distance = APTED(a, b, _TedsConfig()).compute_edit_distance()
    return max(0.0, 1.0 - float(distance) / max(a.size(), b.size()))


def teds(pred: str, ref: str | Table, *, structure_only: bool = False) -> float:
    """TEDS in [0, 1]: structure and cell text (TEDS-S with ``structure_only=True``).

    ``pred``: the model's answer (HTML or Markdown, maybe inside prose); ``ref``: HTML.
    """
    ref_table = _reference(ref)
    pred_table, _ = _bounded_prediction(pred, ref_table)
    return _similarity(pred_table, ref_table, structure_only=structure_only)


def teds_s(pred: str, ref: str | Table) -> float:
    """TEDS-S in [0, 1]: structure only (tags and spans), cell text ignored."""
    return teds(pred, ref, structure_only=True)


def table_scores(pred: str, ref: str | Table) -> dict[str, float | bool | str]:
    """``{"teds", "teds_s", "truncated", "truncation"}``, parsing each table once.

    ``truncated`` says whether the prediction was capped (see the module's docstring),
    ``truncation`` what was cut (``""`` when nothing).
    """
    ref_table = _reference(ref)
    pred_table, note = _bounded_prediction(pred, ref_table)
    return {
        "teds": _similarity(pred_table, ref_table, structure_only=False),
        "teds_s": _similarity(pred_table, ref_table, structure_only=True),
        "truncated": bool(note),
        "truncation": note,
    }
