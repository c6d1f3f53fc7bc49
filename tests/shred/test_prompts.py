"""ShredBench prompts: what models are asked, and how their answers are read back."""

import pytest

from shredfold.shred.prompts import (
    VERSION,
    build_request,
    infer_template,
    kind_of_template,
    parse_answer,
    template_name,
)

PNG = b"\x89PNG fake bytes are fine: prompts never decode images"


@pytest.mark.parametrize("kind", ["prose", "code", "table"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_template_can_be_read_back_from_the_prompt_alone(kind: str, lang: str) -> None:
    # `shredfold serve` relies on this: it sees only what an API model sees.
    req = build_request(kind=kind, lang=lang, n=8, images=[PNG] * 8, composite=False, item=None)
    assert req.template == template_name(kind) == f"shred-{kind}/{VERSION}"
    assert infer_template(req.text) == req.template
    assert kind_of_template(req.template) == kind


def test_a_foreign_prompt_matches_no_template() -> None:
    with pytest.raises(ValueError, match="no ShredBench template"):
        infer_template("Describe this image.")


def test_requests_say_how_many_scraps_and_how_they_are_shown() -> None:
    pieces = build_request(kind="prose", lang="zh", n=3, images=[PNG] * 3, composite=False, item="k")
    composite = build_request(kind="prose", lang="zh", n=3, images=[PNG], composite=True, item="k")
    assert "The 3 images are the 3 scraps" in pieces.text and "Chinese" in pieces.text
    assert "all 3 scraps of the page lying on a table" in composite.text
    assert len(pieces.images) == 3 and len(composite.images) == 1
    # The item key is bookkeeping: it never changes what is asked.
    assert pieces.fingerprint() == pieces.model_copy(update={"item": None}).fingerprint()


def test_code_is_taken_from_its_fence_with_indentation_kept() -> None:
    answer = "Here is the code:\n```python\ndef f(x):\n    return x + 1\n```\nHope this helps!"
    assert parse_answer(answer, "code") == "def f(x):\n    return x + 1"


def test_the_longest_fenced_block_wins() -> None:
    answer = "```\nnote\n```\nand the page:\n```java\nclass A {\n  int x;\n}\n```"
    assert parse_answer(answer, "code") == "class A {\n  int x;\n}"


def test_an_unterminated_fence_runs_to_the_end() -> None:
    # What a model that hits max_tokens mid-listing leaves behind.
    answer = "```cpp\nint main() {\n    return 0;\n"
    assert parse_answer(answer, "code") == "int main() {\n    return 0;"


def test_preambles_are_dropped_but_ordinary_first_lines_are_not() -> None:
    assert parse_answer("Sure! Here's the reconstructed text:\nLine one.\nLine two.", "prose") == (
        "Line one.\nLine two."
    )
    assert parse_answer("The reconstructed page reads as follows:\n\nA", "prose") == "A"
    assert parse_answer("Harbor marathon: a record year\nBody.", "prose") == (
        "Harbor marathon: a record year\nBody."
    )


def test_reasoning_blocks_and_answer_boxes_are_removed() -> None:
    answer = "<think>\nscrap 3 goes first\n</think>\n<|begin_of_box|>First line.\nSecond.<|end_of_box|>"
    assert parse_answer(answer, "prose") == "First line.\nSecond."


def test_html_tables_are_cut_out_of_surrounding_prose_and_fences() -> None:
    table = "<table><thead><tr><th>a</th></tr></thead><tr><td>1</td></tr></table>"
    assert parse_answer(f"Here is the table:\n```html\n{table}\n```", "table") == table
    assert parse_answer(f"The table is {table.upper()} as shown.", "table") == table.upper()


def test_markdown_tables_pass_through_for_the_scorer_to_convert() -> None:
    md = "| a | b |\n|---|---|\n| 1 | 2 |"
    assert parse_answer(md + "\n\n", "table") == md


def test_line_endings_are_normalised() -> None:
    assert parse_answer("one\r\ntwo\rthree  \r\n", "prose") == "one\ntwo\nthree"
