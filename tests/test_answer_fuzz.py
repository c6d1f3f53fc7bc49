"""Generated garbage through every answer path users feed (issue 11, item 13).

Property: a model's answer, whatever it is, gives a score in [0, 1] (ShredBench) or a
parsed action / a clear :class:`AnswerError` (OrigamiBench) — never a traceback.
"""

from __future__ import annotations

import math
import resource
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shredfold.metrics.teds import table_scores
from shredfold.metrics.text import text_scores
from shredfold.origami_bench.prompts import Action, AnswerError, Stop, parse_action, parse_mcq
from shredfold.shred.prompts import read_answer
from shredfold.tables import table_text

BUILTIN = Path(__file__).resolve().parents[1] / "src" / "shredfold" / "corpus" / "builtin"
TRUTHS = {
    ("prose", "en"): (BUILTIN / "news_en" / "03_harbor_marathon.md").read_text(encoding="utf-8"),
    ("prose", "zh"): (BUILTIN / "news_zh" / "02_rice_research.md").read_text(encoding="utf-8"),
    ("code", "en"): (BUILTIN / "code_python" / "02_tokenizer.py").read_text(encoding="utf-8"),
    ("code", "zh"): "def 加(a, b):\n    # 两数之和\n    return a + b\n",
}
TABLE_HTML = (BUILTIN / "table" / "06_league_standings.html").read_text(encoding="utf-8")

# Pieces that steer the parsers into their branches: fences, think blocks, preambles,
# HTML and Markdown table syntax, spans with odd values, line endings, CJK, compatibility
# characters and control characters.
PIECES = [
    "```", "```python\n", "\n```", "<think>", "</think>", "<|begin_of_box|>", "<|end_of_box|>",
    "Here is the text:\n", "Sure! ", "<table>", "</table>", "<TABLE border=1>", "<thead>",
    "</thead>", "<tbody>", "<tr>", "</tr>", "<td>", "</td>", "<th>", "</th>",
    '<td colspan="2">', "<td rowspan='-3'>", '<td colspan="99999999999999999999">', "<br/>",
    "|", " | ", "|---|:--:|", "\\|", "---", "**", "`", "\r\n", "\r", "\n", "\t", "  ",
    "北京", "，", "ﬁ", "\u3000", "\x00", "\x1c", "\ufdfa", "&amp;", "&#0;", "<!--", "-->",
    "<![CDATA[", "<div>", "</div>",
]
garbage = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)), max_size=60).map("".join),
)


def _assert_scores(scores: dict) -> None:
    for name in ("ned", "bleu", "rouge_l", "teds", "teds_s"):
        if name in scores:
            v = scores[name]
            assert isinstance(v, float) and not math.isnan(v) and 0.0 <= v <= 1.0, (name, v)
    assert isinstance(scores["truncated"], bool) and isinstance(scores["truncation"], str)


@pytest.mark.parametrize("kind,lang", sorted(TRUTHS) + [("table", "en"), ("table", "zh")])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=garbage)
def test_any_shredbench_answer_gets_scores_in_0_1(kind: str, lang: str, answer: str) -> None:
    text, note = read_answer(answer, kind)
    assert isinstance(text, str) and note == ""
    if kind == "table":
        _assert_scores(text_scores(text, table_text(TABLE_HTML), kind, lang))
        _assert_scores(table_scores(text, TABLE_HTML))
    else:
        _assert_scores(text_scores(text, TRUTHS[(kind, lang)], kind, lang))  # type: ignore[arg-type]


JSON_PIECES = [
    "{", "}", "[", "]", '"answer"', '"start"', '"end"', '"assignment"', '"stop"', ":", ",",
    '"A"', '"b "', '"M"', '"V"', "true", "false", "null", "0", "-1", "1e999", "NaN",
    "Infinity", "3.5", '"\\ud800"', "```json\n", "```", "<think>", "</think>", " ", "\n",
    "[" * 50, "9" * 5000,
]
json_garbage = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(JSON_PIECES), max_size=40).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(answer=json_garbage)
def test_any_mcq_answer_is_a_letter_or_an_answer_error(answer: str) -> None:
    try:
        letter = parse_mcq(answer)
    except AnswerError as exc:
        assert exc.reason in ("not-json", "fields", "value") and exc.detail
    else:
        assert letter in ("A", "B", "C", "D")


@settings(max_examples=400, deadline=None)
@given(answer=json_garbage)
def test_any_fold_answer_is_an_action_a_stop_or_an_answer_error(answer: str) -> None:
    try:
        action = parse_action(answer)
    except AnswerError as exc:
        assert exc.reason in ("not-json", "fields", "value") and exc.detail
    else:
        assert isinstance(action, (Action, Stop))
        if isinstance(action, Action):
            assert action.assignment in ("M", "V")
            for p in (action.start, action.end):
                assert (isinstance(p, int) and p >= 0) or all(math.isfinite(c) for c in p)


@pytest.mark.parametrize(
    "answer",
    [
        '{"answer": ' + "[" * 100_000,  # deeper than the recursion limit
        '{"a": ' * 20_000,
        "{" * 200_000,  # every failed attempt's error message counted lines from the start
        '{"a" ' * 200_000,  # 200,000 places an object could begin, each failing late
        "```" + " " * 100_000,
        "<think>" * 50_000,
    ],
    ids=["deep", "nested-objects", "braces", "keys", "fence-blanks", "think-blocks"],
)
def test_hostile_origami_answers_are_answer_errors_in_bounded_time(answer: str) -> None:
    start = _cpu_s()
    with pytest.raises(AnswerError, match="not-json"):
        parse_mcq(answer)
    with pytest.raises(AnswerError, match="not-json"):
        parse_action(answer)
    # Generous: each takes well under a second; the quadratic versions took minutes.
    assert _cpu_s() - start < 5.0


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def test_the_json_after_a_long_preamble_is_still_found() -> None:
    prose = "I considered each option carefully {not json} " * 500
    assert parse_mcq(prose + '{"answer": "c"}') == "C"
    assert parse_action('<think>{"answer": 1}</think>{"stop": true}') == Stop()
