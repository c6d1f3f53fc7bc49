"""Scores for model answers: pure functions from (prediction, reference) to numbers.

``text_scores`` gives NED, BLEU and ROUGE-L for every domain (the table domain compares
``table_text`` of both sides); ``table_scores`` adds TEDS and TEDS-S for tables. Every text
score row carries ``signature(kind, lang)``.
"""

from shredfold.metrics.tables import Cell, Table, find_table, table_text
from shredfold.metrics.teds import table_scores, teds, teds_s
from shredfold.metrics.text import (
    METRICS_VERSION,
    Kind,
    bleu,
    ned,
    normalize,
    rouge_l,
    signature,
    text_scores,
    tokenize,
)

__all__ = [
    "METRICS_VERSION",
    "Cell",
    "Kind",
    "Table",
    "bleu",
    "find_table",
    "ned",
    "normalize",
    "rouge_l",
    "signature",
    "table_scores",
    "table_text",
    "teds",
    "teds_s",
    "text_scores",
    "tokenize",
]
