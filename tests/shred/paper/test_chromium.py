"""The paper style against a real browser: Debian's headless Chromium lays out the same HTML
under the same stylesheet with only the pinned faces, and every line must break where ours
does, at the same height, with the body as tall.
"""

from __future__ import annotations

import os

import pytest

from shredfold.corpus.document import Document
from shredfold.corpus.loaders import load_builtin
from shredfold.shred.paper.chromium import CHROMIUM, chromium_pages, layout_text_lines
from shredfold.shred.paper.markup import document_markdown, markdown_html
from shredfold.shred.paper.page import paper_layout

pytestmark = pytest.mark.slow

# Beyond the built-in corpus: the constructs its documents do not use.
EXTRA = """# A heading long enough that it has to wrap onto a second line of the page

Text with a [link](http://example.com), **bold *and italic* words**, `inline code that runs
long enough to wrap past the end of the line into the next one`, and a well-known
state-of-the-art result (see e.g. U.S. data, 1990-2000, ABC-123) -- and/or “quoted” words.

## Second level

### Third level

- one
    - nested item with enough words in it to wrap onto a second line in the page, as lists do
- two

1. first
2. second

> A quotation, indented on both sides.

---

```
for (int i = 0; i < n; ++i) {  // 中文注释
    total += values[i];
}
```

中文段落（带括号）与“引号”，以及《书名》：数字12.5%和English words混排。“这是一个很长的句子，用来检查换行时标点的处理是否与浏览器一致。”另一句话。
"""


@pytest.fixture(scope="module")
def lay_out():
    if not CHROMIUM.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: scripts/setup.sh --test installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} not installed (bash scripts/setup.sh --test installs it)")
    with chromium_pages() as lay:
        yield lay


def _documents() -> list[Document]:
    docs = [d for domain in ("news_en", "news_zh", "code_python", "code_java", "code_cpp", "table")
            for d in load_builtin(domain)[:3]]  # fmt: skip
    return [*docs, Document(doc_id="t/extra", domain="news_en", text=EXTRA)]


@pytest.mark.parametrize("doc", _documents(), ids=lambda d: d.doc_id)
def test_lines_break_where_chromium_breaks_them_at_the_same_pitch(lay_out, doc: Document) -> None:
    page = lay_out(markdown_html(document_markdown(doc)))
    layout, _ = paper_layout(doc)
    ours, height = layout_text_lines(layout), int(layout.bottom + 0.5)
    theirs = page.lines()
    assert [t for _, t in ours] == [t for _, t in theirs]
    assert [top for top, _ in ours] == pytest.approx([top for top, _ in theirs], abs=0.02)
    assert height == page.scroll_height
