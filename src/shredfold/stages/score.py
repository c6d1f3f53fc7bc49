"""Score stage: one Parquet table per cell, a row per item.

A failed item is scored as an empty answer (NED 1, BLEU 0, …) and flagged in ``error``, so a
model cannot improve its averages by failing on hard items.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from shredfold.models.base import RESPONSE_STAGE, Response
from shredfold.plan import Plan
from shredfold.prompts.shred import parse_answer
from shredfold.shred.sample import SAMPLE_STAGE
from shredfold.store import Store, atomic_write_bytes, load_json

log = logging.getLogger(__name__)

SCHEMA = pa.schema(
    [
        ("item", pa.string()),
        ("doc_id", pa.string()),
        ("model", pa.string()),
        ("reference", pa.bool_()),
        ("benchmark", pa.string()),
        ("domain", pa.string()),
        ("granularity", pa.int32()),
        ("kind", pa.string()),
        ("lang", pa.string()),
        ("ned", pa.float64()),
        ("bleu", pa.float64()),
        ("rouge_l", pa.float64()),
        ("teds", pa.float64()),
        ("teds_s", pa.float64()),
        ("signature", pa.string()),
        ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("latency_s", pa.float64()),
        ("cost_usd", pa.float64()),
        ("cached", pa.bool_()),
        ("error", pa.string()),
        ("response", pa.string()),
    ]
)


def score_text(pred: str, truth: str, truth_html: str | None, kind: str, lang: str) -> dict[str, Any]:
    """Scores of one answer against the ground truth (values in, values out).

    Tables: text metrics compare the reading-order text of the tables (the normalizer turns
    an HTML or Markdown table into it), TEDS/TEDS-S compare their trees.
    """
    from shredfold.metrics.teds import teds
    from shredfold.metrics.text import text_scores

    answer = parse_answer(pred, kind)
    scores = text_scores(answer, truth, kind, lang)  # type: ignore[arg-type]
    if kind == "table":
        assert truth_html is not None
        scores["teds"] = teds(answer, truth_html)
        scores["teds_s"] = teds(answer, truth_html, structure_only=True)
    else:
        scores["teds"] = math.nan
        scores["teds_s"] = math.nan
    return scores


def run_score_cell(plan: Plan, key: str, query_manifest: str, out: str, store: Store) -> int:
    cell = plan.cell(key)
    assert cell.sample_set is not None
    manifest = load_json(query_manifest)
    by_item = {row["item"]: row for row in manifest["items"]}
    rows = []
    for item in cell.sample_set.items:
        folder = store.path(SAMPLE_STAGE, item.key)
        truth = (folder / "truth.txt").read_text(encoding="utf-8")
        html_path = folder / "truth.html"
        truth_html = html_path.read_text(encoding="utf-8") if html_path.is_file() else None
        q = by_item[item.key]
        response: Response | None = None
        if q.get("response") and not q.get("error"):
            response = Response.model_validate(store.get_json(RESPONSE_STAGE, q["response"])["response"])
        scores = score_text(response.text if response else "", truth, truth_html, item.kind, item.lang)
        rows.append(
            {
                "item": item.key,
                "doc_id": item.doc.doc_id,
                "model": cell.model.id,
                "reference": cell.model.reference,
                "benchmark": cell.benchmark,
                "domain": cell.domain,
                "granularity": cell.n,
                "kind": item.kind,
                "lang": item.lang,
                "ned": scores["ned"],
                "bleu": scores["bleu"],
                "rouge_l": scores["rouge_l"],
                "teds": scores["teds"],
                "teds_s": scores["teds_s"],
                "signature": scores["signature"],
                "input_tokens": response.input_tokens if response else 0,
                "output_tokens": response.output_tokens if response else 0,
                "latency_s": response.latency_s if response else math.nan,
                "cost_usd": response.cost_usd if response else 0.0,
                "cached": bool(q.get("cached")),
                "error": q.get("error"),
                "response": q.get("response"),
            }
        )
    write_cell_table(rows, SCHEMA, out)
    log.info("%s: %d rows scored", cell.name, len(rows))
    return len(rows)


def write_cell_table(rows: list[dict[str, Any]], schema: pa.Schema, out: str) -> None:
    """One cell's Parquet table, written atomically (a crash never leaves half a table)."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink, compression="zstd")
    atomic_write_bytes(Path(out), sink.getvalue().to_pybytes())
