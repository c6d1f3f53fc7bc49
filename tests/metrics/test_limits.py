"""Bounded scoring cost on untrusted answers (issue 11, item 4).

The hardening tests run the scoring in a child process and read its own CPU time and peak
memory there, so that nothing else this test process did (or will do) disturbs the numbers.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from shredfold import limits
from shredfold.metrics.teds import table_html_size, table_nodes, table_scores, teds, truncate_table
from shredfold.metrics.text import ned, normalize, normalize_prefix, text_scores
from shredfold.tables import CELL_SEP, Cell, Table, find_table, table_text

BUILTIN = Path(__file__).resolve().parents[2] / "src" / "shredfold" / "corpus" / "builtin"
TABLE_HTML = (BUILTIN / "table" / "04_quarterly_sales.html").read_text(encoding="utf-8")
NEWS = (BUILTIN / "news_en" / "01_city_budget.md").read_text(encoding="utf-8")


def score_in_child(script: str) -> dict:
    """Run ``script`` (which defines ``answer``, ``truth``, ``truth_html``, ``kind``) in a
    fresh interpreter; return its scores with its CPU seconds and peak RSS in MB."""
    program = textwrap.dedent(script) + textwrap.dedent(
        """
        import json, resource
        from shredfold.metrics.teds import table_scores
        from shredfold.metrics.text import text_scores
        from shredfold.shred.prompts import read_answer

        text, note = read_answer(answer, kind)
        scores = text_scores(text, truth, kind, "en")
        if kind == "table":
            scores.update({k: v for k, v in table_scores(text, truth_html).items() if k.startswith("teds")})
        usage = resource.getrusage(resource.RUSAGE_SELF)
        scores["cpu_s"] = usage.ru_utime + usage.ru_stime
        # VmHWM, not ru_maxrss: the latter survives exec, so a child of a big test worker
        # (one that loaded torch, say) would report its parent's peak.
        with open("/proc/self/status") as fh:
            hwm = next(line for line in fh if line.startswith("VmHWM:"))
        scores["peak_mb"] = int(hwm.split()[1]) / 1024
        scores["parse_note"] = note
        print(json.dumps(scores))
        """
    )
    # The timeout only keeps a regression from hanging the suite; the bound is on CPU time.
    done = subprocess.run(
        [sys.executable, "-"], input=program, capture_output=True, text=True, timeout=int(os.environ.get("PLANT_TIMEOUT", 300)), check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_20000_row_table_answer_scores_in_bounded_time_and_memory() -> None:
    # The answer of issue 11: 20,000 rows of HTML (0.6 MB). Before the caps it grew one
    # score job to 23.5 GB; 2,000 rows took 55 s and 364 MB.
    s = score_in_child(
        f"""
        from shredfold.tables import table_text
        truth_html = {TABLE_HTML!r}
        truth = table_text(truth_html)
        kind = "table"
        answer = "<table>" + "<tr><td>a</td><td>b</td></tr>" * 20_000 + "</table>"
        """
    )
    assert len("<tr><td>a</td><td>b</td></tr>" * 20_000) > 500_000
    assert s["cpu_s"] < 5.0 and s["peak_mb"] < 500, s
    assert s["truncated"] is True and "normalised answer cut" in s["truncation"]
    # Far too long: NED is > 3/4 and TEDS < 1/4 whether or not the answer is cut.
    assert s["ned"] > 0.75 and 0.0 <= s["teds"] < 0.25 and 0.0 <= s["teds_s"] < 0.25


def test_a_10_mb_plain_answer_scores_in_bounded_time_and_memory() -> None:
    s = score_in_child(
        f"""
        truth = {NEWS!r}
        truth_html = None
        kind = "prose"
        answer = (truth + "\\n") * (10_000_000 // len(truth) + 1)
        """
    )
    assert s["cpu_s"] < 5.0 and s["peak_mb"] < 500, s
    assert s["parse_note"].startswith("answer cut to 1000000 of 100")
    assert s["truncated"] is True
    # The first 4 x |truth| + 1000 characters of the normalised answer: four copies of the
    # truth and a bit, so NED = (|cut| - |truth|) / |cut| exactly (the truth is a prefix).
    r = len(normalize(NEWS, "prose"))
    cap = limits.text_cap(r)
    assert s["ned"] == pytest.approx((cap - r) / cap)


HOSTILE = {
    # Each of these made a regular expression or NFKC take quadratic time or ~20x memory.
    "fence then blanks": ("code", '"```" + " " * 200_000 + "x"'),
    "unclosed tables": ("table", '"<table " * 30_000'),
    "whitespace control run": ("table", '"a" + "\\x1c" * 50_000 + "b"'),
    "markdown delimiter blanks": ("table", '"a|b\\n" + " " * 50_000 + "x|"'),
    "NFKC expansion": ("prose", '"\\ufdfa" * 1_000_000'),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_answers_cost_linear_time(name: str) -> None:
    kind, answer = HOSTILE[name]
    # A reference of 300 rows (5 KB of text): the raw cap (16 x + 16000) lets through
    # enough of the answer for a quadratic pattern to show.
    s = score_in_child(
        f"""
        from shredfold.tables import table_text
        truth_html = "<table>" + "".join(
            f"<tr><td>cell {{i}}</td><td>{{7 * i}}</td></tr>" for i in range(300)
        ) + "</table>"
        truth = table_text(truth_html) if {kind!r} == "table" else {NEWS!r}
        kind = {kind!r}
        answer = {answer}
        """
    )
    assert s["cpu_s"] < 5.0 and s["peak_mb"] < 500, s
    assert 0.0 <= s["ned"] <= 1.0


def test_a_faithful_answer_is_never_cut() -> None:
    # Three copies of the truth: wrong, but well inside 4 x + 1000, so scored uncapped.
    # Normalised, the prediction is "T T T" (lines unwrapped) against "T": NED is
    # (2|T| + 2) / (3|T| + 2), the insertions over the longer length.
    s = text_scores("\n".join([NEWS] * 3), NEWS, "prose", "en")
    r = len(normalize(NEWS, "prose"))
    assert s["truncated"] is False and s["truncation"] == ""
    assert s["ned"] == pytest.approx((2 * r + 2) / (3 * r + 2))
    t = table_scores(TABLE_HTML, TABLE_HTML)
    assert t == {"teds": 1.0, "teds_s": 1.0, "truncated": False, "truncation": ""}


def test_an_over_long_answer_scores_as_its_truncated_normalised_text() -> None:
    ref = "the quick brown fox"
    pred = " ".join(["jumps over the lazy dog"] * 500)
    cap = limits.text_cap(len(ref))  # 4 * 19 + 1000 = 1076
    assert cap == 1076
    cut = normalize(pred, "prose")[:cap]
    s = text_scores(pred, ref, "prose", "en")
    assert s["truncated"] is True
    assert s["truncation"] == "normalised answer cut to 1076 characters (4 x reference + 1000)"
    assert s["ned"] == ned(pred, ref, "prose") == Levenshtein.distance(cut, ref) / cap


def test_the_raw_answer_is_read_up_to_16_times_the_reference_plus_16000() -> None:
    ref = "x" * 1000
    pred = " " * 40_000 + "x"  # the "x" lies beyond 16 * 1000 + 16000 = 32000 characters
    s = text_scores(pred, ref, "code", "en")
    assert s["truncation"] == "answer cut to 32000 of 40001 characters"
    assert s["ned"] == 1.0  # what was read is blank


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab 北京\t\n\r|\u3000\ufb01\x1c"), max_size=60),
    kind=st.sampled_from(["prose", "code", "table"]),
    limit=st.integers(0, 40),
)
def test_normalize_prefix_is_the_prefix_of_normalize(text: str, kind: str, limit: int) -> None:
    full = normalize(text, kind)  # type: ignore[arg-type]
    assert normalize_prefix(text, kind, limit) == (full[:limit], len(full) > limit)  # type: ignore[arg-type]


def test_normalize_prefix_counts_the_joins_between_lines() -> None:
    # Exactly at the limit nothing is cut; one character more and the cut shows.
    assert normalize_prefix("a\nb", "code", 3) == ("a\nb", False)
    assert normalize_prefix("a\nb\nc", "code", 3) == ("a\nb", True)
    assert normalize_prefix("a\nb", "prose", 3) == ("a b", False)
    assert normalize_prefix("北\n京", "prose", 2) == ("北京", False)  # no space at a CJK join
    assert normalize_prefix("a | b\n\nc", "table", 7) == ("a | b\nc", False)
    assert normalize_prefix("anything", "prose", None) == ("anything", False)


def _old_table_normalize(text: str) -> str:
    """The table normalisation before the caps (version 1), kept as the specification."""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n").replace("\r", "\n")
    lines = [line for line in (ln.rstrip() for ln in text.split("\n")) if line]
    rows = (
        re.sub(r"\s*\|\s*", CELL_SEP, re.sub(r"[ \t\f\v]+", " ", line.strip())) for line in lines
    )
    return "\n".join(row for row in rows if row)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab |\t\r\n\x1c\x1f\u2028\xa0\uff5c"), max_size=40))
def test_table_rows_join_cells_as_the_old_pipe_pattern_did(text: str) -> None:
    # The linear split-and-strip writes exactly what substituting \s*\|\s* wrote.
    assert normalize(text, "table") == _old_table_normalize(text)


def test_truncate_table_keeps_the_first_rows_and_cells_in_reading_order() -> None:
    row = (Cell("a"), Cell("b"), Cell("c"))
    table = Table(head=(row,), body=(row, row, row))
    # table + thead + (tr + 3 td) + tbody + 3 x (tr + 3 td) = 1 + 1 + 4 + 1 + 12 = 19.
    assert table_nodes(table) == 19
    # 10 nodes: table, thead, tr, 3 td (6), tbody (7), tr (8), 2 td (10).
    cut, note = truncate_table(table, 10, 100)
    assert cut == Table(head=(row,), body=((Cell("a"), Cell("b")),))
    assert table_nodes(cut) == 10 and note == "table cut to 10 of 19 nodes"
    long = Table(head=(), body=((Cell("x" * 50), Cell("y")),))
    assert truncate_table(long, 100, 8) == (
        Table(head=(), body=((Cell("x" * 8), Cell("y")),)),
        "1 table cell(s) cut to 8 characters",
    )
    assert truncate_table(table, 19, 100) == (table, "")


def test_an_over_long_table_scores_as_its_truncated_table() -> None:
    ref = find_table(TABLE_HTML)
    assert ref is not None
    cap = limits.node_cap(table_nodes(ref))
    rows = "".join(f"<tr><td>r{i}</td><td>x</td></tr>" for i in range(400))
    pred = f"<table>{rows}</table>"
    scores = table_scores(pred, TABLE_HTML)
    assert scores["truncated"] is True
    assert scores["truncation"] == f"table cut to {cap} of {table_nodes(find_table(pred))} nodes"
    kept, _ = truncate_table(find_table(pred), cap, 10**6)
    kept_html = "<table>" + "".join(
        "<tr>" + "".join(f"<td>{c.text}</td>" for c in r) + "</tr>" for r in kept.body
    ) + "</table>"
    assert scores["teds"] == teds(kept_html, TABLE_HTML) == teds(pred, TABLE_HTML)
    # TED >= the size difference, so TEDS <= |T_ref| / |T_pred| < 1/4.
    assert scores["teds_s"] <= table_nodes(ref) / cap < 0.25
    assert table_text(kept) == "\n".join(f"r{i} | x" for i in range(len(kept.body)))


def test_table_html_size_is_the_length_of_the_compact_html() -> None:
    head = (Cell("Name"), Cell("Qty"))
    body = ((Cell("apple"), Cell("3")), (Cell("pear", colspan=10), ), (Cell("x", rowspan=10, colspan=10),))
    html = (
        "<table><thead><tr><td>Name</td><td>Qty</td></tr></thead><tbody>"
        "<tr><td>apple</td><td>3</td></tr>"
        '<tr><td colspan="10">pear</td></tr>'
        '<tr><td colspan="10" rowspan="10">x</td></tr>'
        "</tbody></table>"
    )
    assert table_html_size(Table(head=(head,), body=body)) == len(html)
    assert table_html_size(Table(head=(), body=())) == len("<table></table>")
    # Every span attribute counts 13 characters, what a two-digit span takes: one more
    # than ' colspan="2"'.
    two = Table(head=(), body=((Cell("p", colspan=2), Cell("q", rowspan=2)),))
    html = '<table><tbody><tr><td colspan="2">p</td><td rowspan="2">q</td></tr></tbody></table>'
    assert table_html_size(two) == len(html) + 2
    # The TEDS raw cap is relative to it: 16 x that + 16000.
    assert limits.raw_cap(len(html)) == 16 * len(html) + 16_000


def test_truncate_table_at_the_edges_of_its_budget() -> None:
    row = (Cell("a"), Cell("b"), Cell("c"))
    table = Table(head=(row,), body=(row, row))
    # 8 nodes: table, thead, tr + 3 td (6), tbody (7), and one row node with no cells.
    assert truncate_table(table, 8, 100)[0] == Table(head=(row,), body=((),))
    # 3 nodes: the table, the head and its row, without cells; the body gets nothing.
    assert truncate_table(table, 3, 100)[0] == Table(head=((),), body=())
    # 2 nodes: a section is only opened when a row fits too.
    assert truncate_table(table, 2, 100)[0] == Table(head=(), body=())
    # A cell exactly at the cell cap is not cut.
    exact = Table(head=(), body=((Cell("x" * 8),),))
    assert truncate_table(exact, 100, 8) == (exact, "")


def test_truncate_table_spends_nothing_on_an_empty_head() -> None:
    row = (Cell("a"), Cell("b"), Cell("c"))
    # 5 nodes: table, tbody, tr and two of its cells; no thead node for an empty head.
    assert truncate_table(Table(head=(), body=(row,)), 5, 100)[0] == Table(
        head=(), body=((Cell("a"), Cell("b")),)
    )


def test_table_scores_gives_teds_s_without_the_cell_text() -> None:
    pred = TABLE_HTML.replace(">412<", ">999<")
    s = table_scores(pred, TABLE_HTML)
    assert s["teds_s"] == 1.0 and s["teds"] < 1.0
    assert s["teds"] == teds(pred, TABLE_HTML)


def test_teds_is_clamped_at_zero_when_the_edit_distance_exceeds_both_trees() -> None:
    # 11 nodes each; apted's distance between them is 12 (spans and sections all differ),
    # so 1 - TED / max(|T|) would be -1/11.
    pred = (
        '<table><tr><td colspan="2" rowspan="3"></td><td rowspan="3">bb</td><td></td></tr>'
        '<tr><td colspan="2"></td><td colspan="2"></td><td>bb</td><td rowspan="3"></td></tr></table>'
    )
    ref = (
        '<table><thead><tr><td colspan="2">a</td><td>a</td><td colspan="2">bb</td>'
        '<td colspan="2">bb</td></tr><tr></tr></thead><tbody><tr></tr><tr></tr></tbody></table>'
    )
    assert table_nodes(find_table(pred)) == table_nodes(find_table(ref)) == 11
    assert teds(pred, ref) == 0.0


def test_an_empty_reference_table_still_caps_cells_at_64_characters() -> None:
    s = table_scores("<table><tr><td>" + "x" * 70 + "</td></tr></table>", "<table></table>")
    # No reference cell: the cap is 4 x 0 + 64.
    assert s["truncation"] == "1 table cell(s) cut to 64 characters"


def test_the_cap_helpers_by_hand() -> None:
    assert limits.cell_cap(10) == 104 and limits.cell_cap(0) == 64
    assert limits.text_cap(10) == 1040 and limits.node_cap(10) == 56
    assert limits.cut("abc", 3, "x") == ("abc", "")
    assert limits.cut("abcd", 3, "x") == ("abc", "x cut to 3 of 4 characters")
    assert limits.join_notes("", "a", "", "b") == "a; b"


def test_the_parser_reads_exactly_one_million_characters() -> None:
    from shredfold.shred.prompts import read_answer

    assert read_answer("x" * 1_000_000, "prose")[1] == ""
    assert read_answer("x" * 1_000_001, "prose")[1] == "answer cut to 1000000 of 1000001 characters"
