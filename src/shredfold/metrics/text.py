"""Text metrics for ShredBench answers: NED, BLEU and ROUGE-L over normalised text.

All three compare ``normalize(pred, kind)`` with ``normalize(ref, kind)``. The
normalisation removes what the page layout decides rather than the document (line
endings, trailing spaces, blank lines, line wrapping of prose), and keeps what carries
meaning (the indentation of code, the row/cell structure of tables). Every score row
records :func:`signature`, which names the normalisation, tokenizers and library versions,
so numbers from different versions are never silently mixed.

Conventions: all scores are in [0, 1]; NED is a distance (0 is perfect), BLEU and ROUGE-L
are similarities (1 is perfect). Two empty texts are a perfect match; an empty prediction
for a non-empty reference scores the worst value. Matching is case-sensitive (code is).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Literal

import sacrebleu
from rapidfuzz.distance import LCSseq, Levenshtein
from sacrebleu.metrics import BLEU

from shredfold.tables import CELL_SEP, find_table, table_text

__all__ = [
    "Kind",
    "normalize",
    "ned",
    "bleu",
    "rouge_l",
    "tokenize",
    "signature",
    "text_scores",
]

Kind = Literal["prose", "code", "table"]

# Version of the choices in this module; bump when a change alters any score.
METRICS_VERSION = 1

# CJK characters (Han, kana, Hangul, CJK punctuation). Spacing next to them is a
# typesetting choice, and ROUGE-L counts each of them as one token.
_CJK = (
    "\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\U00020000-\U0003134f"
)
_SPACE_NEAR_CJK = re.compile(rf"(?<=[{_CJK}])[ \t]+|[ \t]+(?=[{_CJK}])")
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\s\w]")
_H_SPACE = re.compile(r"[ \t\f\v]+")
_PIPE = re.compile(r"\s*\|\s*")

_NORM_NAMES: dict[str, str] = {
    "prose": "nfkc+eol+rstrip+noblank+squash+unwrap+cjkspace",
    "code": "nfkc+eol+rstrip+noblank+tab4+indent+squash",
    "table": "table2text+nfkc+eol+rstrip+noblank+squash+pipes",
}


def normalize(text: str, kind: Kind) -> str:
    """Normalise text before any metric; ``kind`` selects the rules.

    Every kind:
      1. Unicode NFKC (full-width forms, ligatures and compatibility characters fold to
         their plain forms, so "，" and "," or "ﬁ" and "fi" are equal);
      2. line endings ``\\r\\n`` and ``\\r`` become ``\\n``;
      3. trailing whitespace is stripped from every line, and blank lines are dropped.

    ``prose`` (``news_*``): each line is stripped and its whitespace runs collapse to one
    space; then the lines are joined with a single space ("unwrap"), because where a
    paragraph wraps is decided by the page width, not the document; finally spaces next
    to a CJK character are removed (Chinese is written without them, and OCR/models
    insert them at random).

    ``code``: tabs expand to 4 columns; the leading indentation of each line is kept
    exactly (it is syntax in Python and structure elsewhere); whitespace runs after it
    collapse to one space; line breaks are kept.

    ``table``: if the text contains an HTML or Markdown table it is first replaced by
    :func:`~shredfold.metrics.tables.table_text` of that table (so Markdown and HTML
    answers compare equal); then as prose within each line, keeping the lines (rows), and
    the cell separator is written exactly as ``" | "``.
    """
    if kind == "table" and (table := find_table(text)) is not None:
        text = table_text(table)
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    lines = [line for line in lines if line]

    if kind == "prose":
        joined = " ".join(_H_SPACE.sub(" ", line.strip()) for line in lines)
        return _SPACE_NEAR_CJK.sub("", joined)
    if kind == "code":
        out = []
        for line in lines:
            line = line.expandtabs(4)
            body = line.lstrip(" ")
            out.append(line[: len(line) - len(body)] + _H_SPACE.sub(" ", body))
        return "\n".join(out)
    if kind == "table":
        rows = (_PIPE.sub(CELL_SEP, _H_SPACE.sub(" ", line.strip())) for line in lines)
        return "\n".join(row for row in rows if row)
    raise ValueError(f"unknown kind {kind!r}; expected prose, code or table")


def ned(pred: str, ref: str, kind: Kind) -> float:
    """Normalised edit distance in [0, 1]: Levenshtein(p, r) / max(len(p), len(r)).

    Computed on ``normalize(·, kind)``; 0 for two empty texts, 1 when one side is empty.
    """
    return _ned(normalize(pred, kind), normalize(ref, kind))


def _ned(p: str, r: str) -> float:
    if not p and not r:
        return 0.0
    return Levenshtein.distance(p, r) / max(len(p), len(r))


def _bleu_tokenizer(lang: str) -> str:
    return "zh" if lang.lower().startswith("zh") else "13a"


@lru_cache(maxsize=4)
def _bleu_metric(tokenizer: str) -> BLEU:
    # effective_order: sentence-level BLEU of a short text must not be 0 only because it
    # has no 4-grams; it is what sacrebleu's sentence_bleu uses.
    return BLEU(tokenize=tokenizer, effective_order=True)


def bleu(pred: str, ref: str, lang: str, kind: Kind = "prose") -> float:
    """Sentence BLEU in [0, 1] (sacrebleu's 0–100 score divided by 100).

    sacrebleu's ``zh`` tokenizer for Chinese (``lang`` starting with "zh"), ``13a``
    otherwise; exponential smoothing and effective order (sacrebleu's sentence defaults);
    one reference. Lines of the normalised text are joined with spaces first.
    """
    return _bleu(normalize(pred, kind), normalize(ref, kind), lang)


def _bleu(p: str, r: str, lang: str) -> float:
    p, r = p.replace("\n", " "), r.replace("\n", " ")
    if not r:
        return 1.0 if not p else 0.0
    if not p:
        return 0.0
    score = _bleu_metric(_bleu_tokenizer(lang)).sentence_score(p, [r]).score / 100.0
    return min(1.0, max(0.0, score))


def tokenize(text: str) -> list[str]:
    """Tokens for ROUGE-L: every CJK character is a token; runs of other word characters
    (letters, digits, underscore) are a token; every other non-space character
    (punctuation, operators) is a token on its own.

    The rule does not depend on the language, so mixed Chinese/English text and Chinese
    comments in code are cut the same way whatever the domain.
    """
    return _TOKEN.findall(text)


def rouge_l(pred: str, ref: str, lang: str = "en", kind: Kind = "prose") -> float:
    """ROUGE-L F1 in [0, 1]: LCS of the token sequences, F = 2PR / (P + R).

    P = LCS / len(pred tokens), R = LCS / len(ref tokens), on normalised text, tokens from
    :func:`tokenize`. ``lang`` is accepted for symmetry with :func:`bleu`; tokenisation is
    language-independent by design (see :func:`tokenize`).
    """
    del lang
    return _rouge_l(normalize(pred, kind), normalize(ref, kind))


def _rouge_l(pred_norm: str, ref_norm: str) -> float:
    p, r = tokenize(pred_norm), tokenize(ref_norm)
    if not p and not r:
        return 1.0
    if not p or not r:
        return 0.0
    lcs = LCSseq.similarity(p, r)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(p), lcs / len(r)
    return 2 * precision * recall / (precision + recall)


def signature(kind: Kind, lang: str) -> str:
    """What produced a score row's numbers, e.g. for Chinese news::

        text-v1|norm:nfkc+eol+rstrip+noblank+squash+unwrap+cjkspace|ned:lev/maxlen|
        bleu:sacrebleu2.6.0/tok=zh/smooth=exp/eff/scale=1|rouge-l:lcs-f1/tok=cjkchar+word+punct

    (one line, no spaces).
    """
    if kind not in _NORM_NAMES:
        raise ValueError(f"unknown kind {kind!r}; expected prose, code or table")
    return "|".join(
        [
            f"text-v{METRICS_VERSION}",
            f"norm:{_NORM_NAMES[kind]}",
            "ned:lev/maxlen",
            f"bleu:sacrebleu{sacrebleu.__version__}/tok={_bleu_tokenizer(lang)}"
            "/smooth=exp/eff/scale=1",
            "rouge-l:lcs-f1/tok=cjkchar+word+punct",
        ]
    )


def text_scores(pred: str, ref: str, kind: Kind, lang: str) -> dict[str, float | str]:
    """``{"ned", "bleu", "rouge_l", "signature"}`` for one answer."""
    p, r = normalize(pred, kind), normalize(ref, kind)
    return {
        "ned": _ned(p, r),
        "bleu": _bleu(p, r, lang),
        "rouge_l": _rouge_l(p, r),
        "signature": signature(kind, lang),
    }
