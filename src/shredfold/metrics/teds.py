"""TEDS and TEDS-S: tree-edit-distance similarity of tables (Zhong et al., 2020, PubTabNet).

Both tables are brought to the canonical form of :mod:`shredfold.metrics.tables`
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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apted import APTED, Config
from rapidfuzz.distance import Levenshtein

from shredfold.tables import Table, find_table, table_text

__all__ = ["find_table", "table_scores", "table_text", "teds", "teds_s"]


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


def _reference(ref: str | Table) -> Table:
    table = ref if isinstance(ref, Table) else find_table(ref)
    if table is None:
        raise ValueError("the reference contains no table")
    return table


def _similarity(pred: str, ref: str | Table, *, structure_only: bool) -> float:
    ref_table = _reference(ref)
    pred_table = find_table(pred)
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
    return _similarity(pred, ref, structure_only=structure_only)


def teds_s(pred: str, ref: str | Table) -> float:
    """TEDS-S in [0, 1]: structure only (tags and spans), cell text ignored."""
    return _similarity(pred, ref, structure_only=True)


def table_scores(pred: str, ref: str | Table) -> dict[str, float]:
    """``{"teds": ..., "teds_s": ...}``, parsing the reference once."""
    ref_table = _reference(ref)
    return {
        "teds": _similarity(pred, ref_table, structure_only=False),
        "teds_s": _similarity(pred, ref_table, structure_only=True),
    }
