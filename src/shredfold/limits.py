"""How much work one untrusted answer may cause: caps relative to the reference.

A model's answer is untrusted input: a 20,000-row table or ten megabytes of text must not
make scoring take minutes or gigabytes. Every metric therefore reads at most a bounded
prefix of the answer, with each bound set relative to the reference (a trusted input) and
far above what a faithful answer needs, so a correct or merely wrong answer is never cut:

* **raw characters** a metric reads (parsing, NFKC — which can expand a character
  eighteen-fold — and the table parser): ``RAW_RATIO`` × the reference's size +
  ``RAW_MARGIN`` (16×, 16,000 characters). For TEDS the reference's size is its table
  written as compact HTML (:func:`table_html_size`), since the answer is HTML too;
* **normalised text** the text metrics compare: ``RATIO`` × the normalised reference +
  ``TEXT_MARGIN`` (4×, 1,000 characters). NED = Levenshtein / longer length is at least
  1 - |ref| / |pred|, so an answer this long has NED > 3/4 before the cut and after it;
* **tree nodes** TEDS compares: ``RATIO`` × the reference tree + ``NODE_MARGIN`` (4×, 16).
  TED is at least the size difference of the two trees, so such an answer has
  TEDS < 1/4 before the cut and after it; and APTED's cost, which grows with the product
  of the tree sizes (cubic in the worst case), is bounded by a function of the reference
  alone: at most (4 + ε)× the cost of scoring the reference against itself;
* **cell text** TEDS compares per cell (a normalised Levenshtein distance per pair of
  cells): ``RATIO`` × the longest reference cell + ``CELL_MARGIN`` (4×, 64 characters).

A capped answer is scored as the metric defines for the truncated answer (the first rows,
cells and characters in reading order), and the score dict says so: ``truncated`` (bool)
and ``truncation`` (what was cut, ``""`` when nothing was).

:data:`MAX_ANSWER_CHARS` bounds what the answer parser reads before any reference is at
hand (about 250,000 tokens, beyond any model's output limit).
"""

from __future__ import annotations

RATIO = 4
TEXT_MARGIN = 1_000
NODE_MARGIN = 16
CELL_MARGIN = 64
RAW_RATIO = 16
RAW_MARGIN = 16_000
MAX_ANSWER_CHARS = 1_000_000

# Named in every score row's signature: the caps are part of what a number means.
CAPS_SIGNATURE = (
    f"cap:raw{RAW_RATIO}x+{RAW_MARGIN}/text{RATIO}x+{TEXT_MARGIN}"
    f"/nodes{RATIO}x+{NODE_MARGIN}/cell{RATIO}x+{CELL_MARGIN}"
)


def raw_cap(reference_size: int) -> int:
    """Characters of the answer a metric reads, for a reference of this size."""
    return RAW_RATIO * reference_size + RAW_MARGIN


def text_cap(reference_chars: int) -> int:
    """Characters of the normalised answer the text metrics compare."""
    return RATIO * reference_chars + TEXT_MARGIN


def node_cap(reference_nodes: int) -> int:
    """Nodes of the answer's table tree TEDS compares."""
    return RATIO * reference_nodes + NODE_MARGIN


def cell_cap(longest_reference_cell: int) -> int:
    """Characters of one answer cell TEDS compares."""
    return RATIO * longest_reference_cell + CELL_MARGIN


def cut(text: str, limit: int, what: str) -> tuple[str, str]:
    """``text`` cut to ``limit`` characters, and a note saying so (``""`` when not cut)."""
    if len(text) <= limit:
        return text, ""
    return text[:limit], f"{what} cut to {limit} of {len(text)} characters"


def join_notes(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
