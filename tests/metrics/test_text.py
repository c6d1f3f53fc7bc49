"""Text metrics, with values worked out by hand."""

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

from shredfold.metrics.text import bleu, ned, normalize, rouge_l, signature, text_scores, tokenize


def test_ned_is_levenshtein_over_the_longer_length() -> None:
    # kitten -> sitting: substitute k/s, e/i, insert g = 3 edits over 7 characters.
    assert ned("kitten", "sitting", "prose") == pytest.approx(3 / 7)


def test_ned_bounds_and_empty_texts() -> None:
    assert ned("", "", "prose") == 0.0
    assert ned("", "abc", "prose") == 1.0
    assert ned("abc", "", "code") == 1.0
    assert ned("same text", "same text", "code") == 0.0


def test_prose_normalization_ignores_layout() -> None:
    wrapped = "The quick  brown\r\nfox   jumps.  \n\n  Over the dog.\n"
    assert normalize(wrapped, "prose") == "The quick brown fox jumps. Over the dog."
    assert ned(wrapped, "The quick brown fox jumps. Over the dog.", "prose") == 0.0


def test_prose_normalization_folds_full_width_and_cjk_spacing() -> None:
    # NFKC turns the full-width comma into ",", and spaces next to CJK are dropped, so a
    # reading with a line break and stray spaces still matches.
    assert normalize("北京 ， 上海\n广州", "prose") == "北京,上海广州"


def test_code_normalization_keeps_indentation() -> None:
    src = "def f(x):\r\n\tif x:   # tab\n        return  x  \n\n"
    assert normalize(src, "code") == "def f(x):\n    if x: # tab\n        return x"
    # Losing the indentation costs one edit per missing space.
    flat = "def f(x):\nif x: # tab\nreturn x"
    ref = normalize(src, "code")
    assert ned(flat, src, "code") == pytest.approx(12 / len(ref))


def test_table_normalization_reads_markdown_and_html_alike() -> None:
    html = "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
    markdown = "| a | b |\n|---|---|\n| 1 | 2 |"
    assert normalize(html, "table") == normalize(markdown, "table") == "a | b\n1 | 2"
    # Plain lines (an OCR reading) keep their rows; pipe spacing is made uniform.
    assert normalize("a|b\n 1 |  2 ", "table") == "a | b\n1 | 2"


def test_bleu_is_one_for_identical_and_zero_for_disjoint_text() -> None:
    assert bleu("the cat sat on the mat", "the cat sat on the mat", "en") == pytest.approx(1.0)
    assert bleu("a b c d", "w x y z", "en") == 0.0
    assert bleu("", "", "en") == 1.0
    assert bleu("", "something", "en") == 0.0


def test_bleu_uses_the_chinese_tokenizer_for_zh() -> None:
    assert bleu("今天天气很好", "今天天气很好", "zh") == pytest.approx(1.0)
    # With 13a the unsegmented sentence is a single token, so one wrong character gives 0;
    # the zh tokenizer cuts it per character and gives partial credit.
    assert bleu("今天天气很坏", "今天天气很好", "en") == 0.0
    assert 0.0 < bleu("今天天气很坏", "今天天气很好", "zh") < 1.0


def test_tokenize_gives_one_token_per_cjk_character() -> None:
    assert tokenize("今天天气") == ["今", "天", "天", "气"]
    assert tokenize("用Python写code。") == ["用", "Python", "写", "code", "。"]
    assert tokenize("x = foo(bar_1);") == ["x", "=", "foo", "(", "bar_1", ")", ";"]


def test_rouge_l_by_hand() -> None:
    # LCS("the cat sat on the mat", "the cat is on the mat") = the cat on the mat = 5
    # tokens; P = R = 5/6, so F1 = 5/6.
    assert rouge_l("the cat sat on the mat", "the cat is on the mat") == pytest.approx(5 / 6)
    # Chinese: pred 今天好 (3 tokens) vs ref 今天很好 (4): LCS 3, P = 1, R = 3/4,
    # F1 = 2 * 1 * 0.75 / 1.75 = 6/7.
    assert rouge_l("今天好", "今天很好", "zh") == pytest.approx(6 / 7)
    assert rouge_l("", "", "en") == 1.0
    assert rouge_l("abc", "", "en") == 0.0
    assert rouge_l("x y", "z w", "en") == 0.0


def test_text_scores_bundle_and_signature() -> None:
    scores = text_scores("hello world", "hello world", "prose", "en")
    assert scores["ned"] == 0.0
    assert scores["bleu"] == pytest.approx(1.0)
    assert scores["rouge_l"] == 1.0
    assert scores["signature"] == signature("prose", "en")
    assert "tok=zh" in signature("prose", "zh")
    assert "tok=13a" in signature("code", "en")
    assert "indent" in signature("code", "en")
    assert signature("prose", "en") != signature("code", "en")


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError):
        normalize("x", "poem")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        signature("poem", "en")  # type: ignore[arg-type]


def test_a_lone_carriage_return_ends_a_line() -> None:
    # Old Mac line endings: "one\rtwo" is two lines, unwrapped to "one two" in prose.
    assert ned("one\rtwo", "one two", "prose") == 0.0
    assert normalize("a\rb\r\nc", "code") == "a\nb\nc"
    assert normalize("a | b\r1 | 2", "table") == "a | b\n1 | 2"


_LINE = st.text(alphabet=st.sampled_from("ab |\t北，"), max_size=8)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(_LINE, max_size=8),
    endings=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=8, max_size=8),
    kind=st.sampled_from(["prose", "code", "table"]),
)
def test_ned_is_invariant_under_every_line_ending_convention(lines, endings, kind) -> None:
    unix = "\n".join(lines)
    mixed = "".join(line + end for line, end in zip(lines, endings, strict=False))
    assert normalize(mixed, kind) == normalize(unix, kind)
    assert ned(mixed, unix, kind) == 0.0
    assert ned(mixed, "ab 北", kind) == ned(unix, "ab 北", kind)


def test_bleu_of_an_empty_reference_is_one_only_for_an_empty_prediction() -> None:
    assert bleu("", "", "en") == 1.0
    assert bleu("words", "", "en") == 0.0
    assert bleu("", "   \n ", "en") == 1.0  # blank lines normalise to nothing


def test_bleu_of_a_partial_match_is_sacrebleus_sentence_score() -> None:
    pred, ref = "the cat sat on a mat today", "the cat sat on the mat"
    want = sacrebleu.sentence_bleu(pred, [ref]).score / 100
    assert 0.0 < want < 1.0 and bleu(pred, ref, "en") == pytest.approx(want)


def test_rouge_l_when_only_one_side_is_empty() -> None:
    assert rouge_l("", "abc", "en") == 0.0
    assert rouge_l("abc", "", "en") == 0.0
    # One common token out of 1 and 3: P = 1, R = 1/3, F1 = 2 * 1/3 / (4/3) = 1/2.
    assert rouge_l("x", "x y z", "en") == pytest.approx(0.5)


def test_text_scores_report_no_truncation_for_a_normal_answer() -> None:
    scores = text_scores("hello world", "hello there world", "prose", "en")
    assert scores["truncated"] is False and scores["truncation"] == ""
    # "hello world" vs "hello there world": 6 insertions over 17 characters.
    assert scores["ned"] == pytest.approx(6 / 17)


def test_the_signature_names_every_choice_behind_the_numbers() -> None:
    # The docstring's example, exactly: a change to any choice must show in the rows.
    assert signature("prose", "zh") == (
        "text-v2|norm:nfkc+eol+rstrip+noblank+squash+unwrap+cjkspace|ned:lev/maxlen|"
        f"bleu:sacrebleu{sacrebleu.__version__}/tok=zh/smooth=exp/eff/scale=1|"
        "rouge-l:lcs-f1/tok=cjkchar+word+punct|"
        "cap:raw16x+16000/text4x+1000/nodes4x+16/cell4x+64"
    )
    assert signature("table", "en").split("|")[1] == "norm:table2text+nfkc+eol+rstrip+noblank+squash+pipes"


def test_unwrapping_drops_the_join_space_when_either_side_is_cjk() -> None:
    assert normalize("English\n中文\nmore", "prose") == "English中文more"
    # The previous line decides (not an earlier one): "北" then "b" joins without a
    # space, "b" then "c" with one.
    assert normalize("北\nb\nc", "prose") == "北b c"
    assert normalize("a\nb", "prose") == "a b"


def test_ned_raw_is_the_papers_plain_edit_distance():
    from shredfold.metrics.text import ned_raw

    assert ned_raw("kitten", "sitting") == 3 / 7  # k->s, e->i, +g over the longer (7)
    assert ned_raw("  same\n", "same") == 0.0  # surrounding whitespace is stripped
    assert ned_raw("a\r\nb", "a\nb") == 1 / 4  # but nothing else is normalised
    assert ned_raw("Ａ", "A") == 1.0  # (no NFKC either)
    assert ned_raw("", "") == 0.0 and ned_raw("", "x") == 1.0
