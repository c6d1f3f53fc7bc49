"""ShredBench prompt templates (versioned) and answer parsing.

The template name carries the document kind (``shred-prose/v1``) so that a built-in model,
which sees exactly what an API model sees, knows as much as the prompt tells an API model.
Bump ``VERSION`` whenever a template's wording changes: it is part of every response key.
"""

from __future__ import annotations

import re

from shredfold.calls import Message, Request
from shredfold.limits import MAX_ANSWER_CHARS, cut

VERSION = "v1"

SYSTEM = (
    "You are an expert document analyst. You are given photographs of paper scraps. "
    "They were cut from a single printed page, then shuffled, rotated and scattered on a "
    "table. Reassemble the page in your mind and transcribe it faithfully."
)

_LANG = {"en": "English", "zh": "Chinese"}

_TASK = {
    "prose": (
        "The page is a {lang} news article. Output the full text of the page in reading order, "
        "one printed line per line, and nothing else: no commentary, no Markdown."
    ),
    "code": (
        "The page is a listing of source code. Output the complete code in reading order, "
        "keeping the original indentation exactly, inside one fenced code block, and nothing "
        "else."
    ),
    "table": (
        "The page holds one table. Output it as a single HTML <table> with <thead> for the "
        "header, <tr>, <th> and <td> elements, and rowspan/colspan for merged cells. Output "
        "only the HTML."
    ),
}


# The paper's protocol (ShredBench as its authors ran it): one photograph of the scraps on a
# table, and one instruction for every kind of page: the model says what it reads, as
# Markdown. Our wording; versioned on its own.
PAPER_VERSION = "v1"
PAPER_TEMPLATE = f"shred-paper/{PAPER_VERSION}"
PAPER_SYSTEM = (
    "You are an expert document analyst. You are shown one photograph of paper fragments "
    "lying on a table: a single printed page was torn into pieces, which were then shuffled, "
    "turned and scattered."
)
PAPER_TASK = (
    "Fit the fragments back together in your mind and return the original content of the "
    "page as Markdown, and nothing else. Transcribe text verbatim; where a tear cuts a word "
    "in two, write the word whole. Reproduce source code exactly, with its indentation, in "
    "a code block. Write formulas in LaTeX. Write tables as HTML <table> elements. Add no "
    "commentary, no explanation and no summary."
)


def template_name(kind: str) -> str:
    return f"shred-{kind}/{VERSION}"


def kind_of_template(template: str) -> str | None:
    """Inverse of :func:`template_name` (``'shred-code/v1'`` → ``'code'``); None for the
    paper's template, which names no kind (the model is not told what the page holds)."""
    if template == PAPER_TEMPLATE:
        return None
    m = re.fullmatch(r"shred-(prose|code|table)/v\d+", template)
    if not m:
        raise ValueError(f"not a ShredBench template: {template!r}")
    return m.group(1)


def paper_request(image: bytes, item: str | None) -> Request:
    """The paper's request: its instruction and one table-top photograph."""
    return Request(
        template=PAPER_TEMPLATE,
        messages=(Message(role="system", text=PAPER_SYSTEM), Message(role="user", text=PAPER_TASK, images=(image,))),
        item=item,
    )


def infer_template(prompt: str) -> str:
    """The template whose task wording a prompt contains (the inverse of :func:`build_request`).

    ``shredfold serve`` uses this to hand a built-in model the same :class:`Request` it
    would get in-process, from nothing but what an API model is sent.
    """
    if PAPER_TASK in prompt:
        return PAPER_TEMPLATE
    for kind, task in _TASK.items():
        if all(piece in prompt for piece in task.split("{lang}")):
            return template_name(kind)
    raise ValueError("prompt matches no ShredBench template of version " + VERSION)


def build_request(
    *, kind: str, lang: str, n: int, images: list[bytes], composite: bool, item: str | None
) -> Request:
    if composite or len(images) == 1:
        what = (
            "The image shows the page intact (one piece)."
            if n == 1
            else f"The image shows all {n} scraps of the page lying on a table."
        )
    else:
        what = f"The {len(images)} images are the {n} scraps of the page, one scrap per image, in random order."
    text = what + " " + _TASK[kind].format(lang=_LANG.get(lang, lang))
    return Request(
        template=template_name(kind),
        messages=(Message(role="system", text=SYSTEM), Message(role="user", text=text, images=tuple(images))),
        item=item,
    )


# Regular expressions over untrusted answers: none may backtrack more than linearly.
# Possessive quantifiers around the info string keep "```" followed by a long run of blanks
# from costing quadratic time; a lazy body ends at the first closing fence (or the end).
_FENCE = re.compile(r"```[ \t]*+([A-Za-z0-9_+#-]*+)[ \t]*+\n(.*?)(?:\n```|\Z)", re.S)
_PREAMBLE = re.compile(
    r"^\s*(?:sure[,!.]?\s*)?(?:here(?:'s| is| are)\b[^\n]*?:|the (?:reconstructed|transcribed|full)"
    r"\b[^\n]*?:|reconstructed (?:text|page|code|document)\s*:)\s*\n",
    re.I,
)
# Reasoning that some servers (vLLM/SGLang with Qwen3-VL or GLM-4.6V) leave in the content,
# and GLM's answer-box markers.
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.S)
_BOX = re.compile(r"<\|(?:begin|end)_of_box\|>")
# Opening and closing tags are searched for separately: ``<table\b.*?</table>`` as one
# pattern rescans the rest of the answer from every unclosed "<table", quadratic in all.
_TABLE_OPEN = re.compile(r"<table\b", re.I)
_TABLE_CLOSE = re.compile(r"</table\s*>", re.I)


def parse_answer(text: str, kind: str) -> str:
    """Extract the transcription from a model's answer.

    - A leading ``<think>…</think>`` block and GLM's ``<|begin_of_box|>`` markers are removed.
    - A fenced block (```lang ... ```) wins: the longest one is taken, without its fence; an
      unterminated fence runs to the end of the answer.
    - Otherwise a leading preamble line ending in ':' ("Here is the text:") is dropped.
    - Tables: the first ``<table>…</table>`` is kept if present (Markdown tables pass through
      and are converted by the TEDS scorer).
    - Trailing whitespace is removed; leading indentation of code is kept.

    Only the first :data:`~shredfold.limits.MAX_ANSWER_CHARS` characters are read
    (:func:`read_answer` says when more were there), and the work is linear in them.
    """
    return read_answer(text, kind)[0]


def read_answer(text: str, kind: str) -> tuple[str, str]:
    """:func:`parse_answer`'s result, and a note when the answer was cut (``""`` if not)."""
    body, note = cut(text, MAX_ANSWER_CHARS, "answer")
    body = body.replace("\r\n", "\n").replace("\r", "\n")
    body = _BOX.sub("", _THINK.sub("", body, count=1))
    blocks = [m.group(2) for m in _FENCE.finditer(body)]
    body = max(blocks, key=len) if blocks else _PREAMBLE.sub("", body, count=1)
    if kind == "table" and (start := _TABLE_OPEN.search(body)):
        end = _TABLE_CLOSE.search(body, start.end())
        if end:
            body = body[start.start() : end.end()]
    return body.strip("\n").rstrip(), note
