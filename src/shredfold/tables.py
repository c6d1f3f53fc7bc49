"""Find a table in free text (HTML or Markdown) and bring it to one canonical form.

Model answers for the table domain arrive as HTML, as a Markdown pipe table, or either of
those wrapped in prose or a code fence. Both TEDS (``teds.py``) and the table NED reference
(``table_text``) work on the same canonical :class:`Table`, so the two never disagree about
what the table was.

Canonical form (PubTabNet's shape): a table has head rows and body rows; a row is a tuple
of cells; a cell has text and column/row spans. We canonicalise HTML variants that mean the
same table:

* rows directly under ``<table>`` and rows in ``<tbody>``/``<tfoot>`` are body rows;
* a table without ``<thead>`` whose leading rows consist only of ``<th>`` cells gets those
  rows as its head (that is what a Markdown header row becomes, too);
* ``<th>`` and ``<td>`` are the same cell kind afterwards: being a header is carried by the
  section, as in PubTabNet, whose annotations use ``<td>`` only;
* cell text is NFKC-normalised with whitespace runs collapsed to one space.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import lxml.html

__all__ = ["Cell", "Table", "find_table", "parse_html", "parse_markdown", "table_text"]


@dataclass(frozen=True)
class Cell:
    text: str
    colspan: int = 1
    rowspan: int = 1


Row = tuple[Cell, ...]


@dataclass(frozen=True)
class Table:
    head: tuple[Row, ...]
    body: tuple[Row, ...]

    @property
    def rows(self) -> tuple[Row, ...]:
        return self.head + self.body


CELL_SEP = " | "

_HTML_TABLE = re.compile(r"<table\b.*?(?:</table\s*>|\Z)", re.IGNORECASE | re.DOTALL)
# A Markdown delimiter row: |---|:--:|---: with optional outer pipes. Possessive
# quantifiers: no token after a whitespace run can take whitespace, so giving it back never
# helps a match, and without them a long run of spaces makes a failed match quadratic.
_MD_DELIM = re.compile(r"^\s*+\|?\s*+:?-++:?\s*+(?:\|\s*+:?-++:?\s*+)*+\|?\s*+$")
_WS = re.compile(r"\s+")
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
# Emphasis and code markers models like to put in cells; they are formatting, not text.
_MD_INLINE = re.compile(r"\*\*|__|`")


def clean_cell_text(text: str) -> str:
    return _WS.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def _span(value: str | None) -> int:
    try:
        return max(1, int(value or "1"))
    except ValueError:
        return 1


def parse_html(fragment: str) -> Table:
    """Parse one ``<table>`` element (nested tables are flattened into their cell's text)."""
    root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    found = root.xpath(".//table")
    if not found:
        raise ValueError("no <table> element in the fragment")
    table = found[0]

    head: list[list[tuple[Cell, bool]]] = []
    body: list[list[tuple[Cell, bool]]] = []

    def read_row(tr: lxml.html.HtmlElement) -> list[tuple[Cell, bool]]:
        return [
            (
                Cell(
                    clean_cell_text(cell.text_content()),
                    _span(cell.get("colspan")),
                    _span(cell.get("rowspan")),
                ),
                cell.tag == "th",
            )
            for cell in tr
            if isinstance(cell.tag, str) and cell.tag in ("td", "th")
        ]

    for child in table:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag == "tr":
            body.append(read_row(child))
        elif tag in ("thead", "tbody", "tfoot"):
            target = head if tag == "thead" else body
            target.extend(read_row(tr) for tr in child if tr.tag == "tr")

    if not head:
        while body and body[0] and all(is_th for _, is_th in body[0]):
            head.append(body.pop(0))

    def strip(rows: list[list[tuple[Cell, bool]]]) -> tuple[Row, ...]:
        return tuple(tuple(cell for cell, _ in row) for row in rows)

    return Table(head=strip(head), body=strip(body))


def _split_md_row(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    # Split on pipes that are not escaped as \|.
    cells = re.split(r"(?<!\\)\|", line)
    return [c.replace("\\|", "|") for c in cells]


def _md_cell(raw: str) -> Cell:
    return Cell(clean_cell_text(_MD_INLINE.sub("", _BR.sub(" ", raw))))


def parse_markdown(lines: list[str]) -> Table:
    """Parse a pipe table: header row, delimiter row, body rows until the first non-row."""
    if len(lines) < 2 or not _MD_DELIM.match(lines[1]):
        raise ValueError("not a Markdown pipe table (missing delimiter row)")
    head = (tuple(_md_cell(c) for c in _split_md_row(lines[0])),)
    body = []
    for line in lines[2:]:
        if "|" not in line or not line.strip():
            break
        body.append(tuple(_md_cell(c) for c in _split_md_row(line)))
    return Table(head=head, body=tuple(body))


def _find_markdown(text: str) -> tuple[int, list[str]] | None:
    """(character offset, lines) of the first Markdown pipe table, if any."""
    lines = text.splitlines(keepends=True)
    offset = 0
    for i in range(len(lines) - 1):
        # Both rows need a pipe: a bare "---" under a line is a heading underline or a rule.
        if "|" in lines[i] and "|" in lines[i + 1] and _MD_DELIM.match(lines[i + 1]):
            return offset, [ln.rstrip("\r\n") for ln in lines[i:]]
        offset += len(lines[i])
    return None


def find_table(text: str) -> Table | None:
    """The first table in ``text`` (HTML or Markdown, anywhere in it), or None."""
    html = _HTML_TABLE.search(text)
    md = _find_markdown(text)
    if html and (md is None or html.start() <= md[0]):
        try:
            return parse_html(html.group(0))
        except (ValueError, lxml.etree.ParserError):
            pass
    if md is not None:
        return parse_markdown(md[1])
    return None


def table_text(source: str | Table) -> str:
    """Reading-order text of a table: the NED reference for the table domain.

    Rows top to bottom (head rows first), one line per row; cells left to right joined by
    ``" | "`` (no outer pipes); a merged cell's text appears once, in the row and column
    where it starts, with no padding for the positions it spans. Empty rows are dropped.
    ``source`` is HTML or Markdown (the first table in it) or a parsed :class:`Table`.
    """
    table = source if isinstance(source, Table) else find_table(source)
    if table is None:
        raise ValueError("no table found")
    lines = (CELL_SEP.join(cell.text for cell in row) for row in table.rows)
    return "\n".join(line for line in lines if line.replace("|", "").strip())
