import math

from shredfold.tables import table_text
from shredfold.tasks.shredbench.task import score_text

TABLE = (
    '<table><thead><tr><th>City</th><th>Rain</th></tr></thead>'
    '<tbody><tr><td>Oslo</td><td>12</td></tr><tr><td colspan="2">Total 12</td></tr></tbody></table>'
)


def test_a_perfect_prose_answer_scores_perfectly_and_has_no_teds():
    s = score_text("Here is the text:\nHello world.\nSecond line.", "Hello world.\nSecond line.", None, "prose", "en")
    assert s["ned"] == 0.0 and s["bleu"] == 1.0 and s["rouge_l"] == 1.0
    assert math.isnan(s["teds"]) and "bleu" in s["signature"]


def test_code_is_taken_from_its_fence_with_indentation():
    truth = "def f():\n    return 1"
    s = score_text("```python\ndef f():\n    return 1\n```", truth, None, "code", "en")
    assert s["ned"] == 0.0
    assert score_text("def f():\nreturn 1", truth, None, "code", "en")["ned"] > 0


def test_tables_get_teds_and_text_scores():
    from shredfold.tables import table_text

    truth = table_text(TABLE)
    good = score_text(f"Sure!\n{TABLE}\nDone.", truth, TABLE, "table", "en")
    assert good["teds"] == 1.0 and good["teds_s"] == 1.0 and good["ned"] == 0.0
    wrong_cell = score_text(TABLE.replace("Oslo", "Osla"), truth, TABLE, "table", "en")
    assert 0.9 < wrong_cell["teds"] < 1.0 and wrong_cell["teds_s"] == 1.0
    plain = score_text(truth, truth, TABLE, "table", "en")
    assert plain["teds"] == 0.0 and plain["ned"] == 0.0


def test_an_empty_answer_is_the_worst_score():
    s = score_text("", "Some text here.", None, "prose", "en")
    assert s["ned"] == 1.0 and s["bleu"] == 0.0 and s["rouge_l"] == 0.0


def test_an_answer_far_longer_than_the_truth_is_cut_and_flagged():
    truth = "Some text here."
    normal = score_text("Some text here.", truth, None, "prose", "en")
    assert normal["truncated"] is False and normal["truncation"] == ""
    flood = score_text("word " * 200_000, truth, None, "prose", "en")
    assert flood["truncated"] is True and flood["truncation"]
    assert flood["ned"] > 0.75  # what NED makes of the cut answer: it cannot be good


def test_a_huge_table_answer_is_cut_and_still_scored():
    rows = "".join(f"<tr><td>{i}</td><td>x</td></tr>" for i in range(20_000))
    s = score_text(f"<table>{rows}</table>", table_text(TABLE), TABLE, "table", "en")
    assert s["truncated"] is True and 0.0 <= s["teds"] < 0.25


def test_the_papers_protocol_scores_the_fenced_markdown_against_the_source():
    source = "# Title\n\nFirst paragraph of the *story*.\n"
    s = score_text("```markdown\n# Title\n\nFirst paragraph of the *story*.\n```", source, None, "prose", "en", paper=True)
    assert s["ned_raw"] == 0.0 and s["signature"].startswith("protocol:paper|")
    assert s["signature"].endswith("ned_raw:lev/maxlen/raw/as-asked")
    assert score_text("Title", source, None, "prose", "en")["signature"].startswith("protocol:shredfold|")


def test_diagnostics_of_a_real_sample_see_a_perfect_and_an_empty_answer(tmp_path):
    import numpy as np

    from shredfold.corpus.document import Document
    from shredfold.shred.glyphs import PageGlyphs, page_glyphs
    from shredfold.shred.sample import make_sample
    from shredfold.shred.sample_folder import load_hidden, load_layout
    from shredfold.shred.sample_key import sample_key
    from shredfold.spec import RenderSettings, SynthesisSettings
    from shredfold.tasks.metric import field_names
    from shredfold.tasks.shredbench.task import DIAGNOSED, ShredItem, diagnose_answer

    doc = Document(doc_id="t", domain="news_en", text="# Tides\n\nHarbor cranes lifted record cargo while gulls circled above.\n")
    render, synth = RenderSettings(width=500, prose_font_size=20), SynthesisSettings()
    make_sample(doc, 3, render, synth, 0, tmp_path)
    item = ShredItem(key=sample_key(doc, 3, render, synth, 0), doc=doc, n=3, render=render, synthesis=synth, seed=0)
    hidden, layout = load_hidden(tmp_path), load_layout(tmp_path)
    truth = (tmp_path / "truth.txt").read_text()
    # the layout stored with the sample is the one its page was drawn and cut with
    stored, drawn = PageGlyphs.from_json(layout), page_glyphs(doc, render)
    assert stored.chars == drawn.chars and len(stored.chars) > 40
    assert np.array_equal(stored.boxes, drawn.boxes) and np.array_equal(stored.words, drawn.words)
    assert (stored.width, stored.height) == (hidden["page"]["width"], hidden["page"]["height"])

    perfect = diagnose_answer(truth, item, hidden, layout)
    assert list(perfect) == list(field_names(DIAGNOSED))  # the row's diagnostic fields, as declared
    assert perfect["omission"] == 0.0 and perfect["hallucination"] == 0.0 and perfect["order_tau"] == 1.0
    assert perfect["cut_words"] >= 1 and perfect["cut_word_recovery"] == 1.0
    empty = diagnose_answer("", item, hidden, layout)
    assert empty["omission"] == 1.0 and empty["hallucination"] is None
    import json

    pieces = json.loads(perfect["piece_omission"])
    assert len(pieces) == 3 and abs(sum(p["area"] for p in pieces) - 1.0) < 1e-3
    assert sum(p["chars"] for p in pieces) == len("".join(truth.split()))


def test_the_oracle_has_ned_raw_0_on_a_real_table_sample_under_both_protocols(tmp_path):
    # What each prompt asks for: our table prompt HTML (the oracle answers truth.html), the
    # paper's the document as written (the oracle answers source.txt).
    from shredfold.corpus.document import Document
    from shredfold.models.builtin.oracle import Oracle
    from shredfold.shred.prompts import build_request, paper_request
    from shredfold.shred.sample import make_sample
    from shredfold.shred.sample_folder import SAMPLE_STAGE, load_truth
    from shredfold.spec import ModelConfig, RenderSettings, SynthesisSettings
    from shredfold.store import Store

    doc = Document(doc_id="t", domain="table", text=(
        "<table><thead><tr><th>City</th><th>Rain</th></tr></thead>"
        "<tbody><tr><td>Oslo</td><td>12</td></tr><tr><td>Lima</td><td>3</td></tr></tbody></table>"))
    store = Store(tmp_path / "store")
    with store.writing(SAMPLE_STAGE, "ab" * 32) as folder:
        make_sample(doc, 2, RenderSettings(width=400, margin=16, table_font_size=14), SynthesisSettings(), 0, folder)
    truth = load_truth(store.object(SAMPLE_STAGE, "ab" * 32))
    oracle = Oracle(ModelConfig(id="oracle", adapter="oracle"), store)
    ours = oracle.complete(build_request(kind="table", lang="en", n=2, images=[], composite=False, item="ab" * 32)).text
    theirs = oracle.complete(paper_request(b"", item="ab" * 32)).text
    mine = score_text(ours, truth.text, truth.html, "table", "en")
    paper = score_text(theirs, truth.source, truth.html, "table", "en", paper=True)
    assert mine["ned"] == 0.0 and mine["teds"] == 1.0 and paper["teds"] == 1.0
    assert mine["ned_raw"] == 0.0 and paper["ned_raw"] == 0.0
    # the reading-order text is not what the prompt asked: an answer giving it is no match
    assert score_text(truth.text, truth.text, truth.html, "table", "en")["ned_raw"] > 0.3
