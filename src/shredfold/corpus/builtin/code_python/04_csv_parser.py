"""A streaming CSV reader that handles quotes, escaped quotes and embedded newlines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

Record = dict[str, str]


class CSVError(ValueError):
    pass


def parse_rows(chunks: Iterable[str], sep: str = ",") -> Iterator[list[str]]:
    """Parse CSV text arriving in arbitrary chunks into rows of fields."""
    field: list[str] = []
    row: list[str] = []
    in_quotes = False
    quote_pending = False
    line = 1
    for chunk in chunks:
        for ch in chunk:
            if in_quotes:
                if ch == '"':
                    in_quotes = False
                    quote_pending = True
                else:
                    if ch == "\n":
                        line += 1
                    field.append(ch)
                continue
            if quote_pending and ch == '"':
                # A doubled quote inside a quoted field is a literal quote.
                field.append('"')
                in_quotes = True
                quote_pending = False
                continue
            quote_pending = False
            if ch == '"':
                if field:
                    raise CSVError(f"line {line}: quote inside an unquoted field")
                in_quotes = True
            elif ch == sep:
                row.append("".join(field))
                field = []
            elif ch == "\n":
                row.append("".join(field))
                yield row
                field, row = [], []
                line += 1
            elif ch != "\r":
                field.append(ch)
    if in_quotes:
        raise CSVError(f"line {line}: unterminated quoted field")
    if field or row:
        row.append("".join(field))
        yield row


def read_records(text: str) -> list[Record]:
    rows = parse_rows([text])
    try:
        header = next(rows)
    except StopIteration:
        return []
    records = []
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            expected = len(header)
            raise CSVError(f"row {number}: expected {expected} fields, got {len(row)}")
        records.append(dict(zip(header, row, strict=True)))
    return records


def column_totals(records: list[Record], columns: list[str]) -> dict[str, float]:
    totals = dict.fromkeys(columns, 0.0)
    for record in records:
        for name in columns:
            totals[name] += float(record[name] or 0)
    return totals


SAMPLE = """city,station,rain_mm,snow_cm
Oslo,"Blindern, west",12.5,0
Bergen,Florida,41.0,
"Troms\xf8","Hold ""main"" gate",8.25,14
"""

if __name__ == "__main__":
    data = read_records(SAMPLE)
    for item in data:
        print(item)
    print(column_totals(data, ["rain_mm", "snow_cm"]))
