"""Small inline documents and page settings that keep the shred tests fast."""

from __future__ import annotations

import pytest

from shredfold.corpus.document import Document
from shredfold.spec import RenderSettings, SynthesisSettings

NEWS_EN = """# Council approves the riverside park

The city council voted 7 to 2 on Tuesday night to approve a long-delayed plan for a
riverside park, ending a dispute that has divided the east bank for almost a decade.

Supporters said the *project* would give thousands of residents their first green space
within walking distance of home. Opponents warned that the **budget** left out the cost of
cleaning the soil.
"""

NEWS_ZH = """# 城市议会批准新建河滨公园

经过近十年的争论，市议会周二晚上以七票对两票通过了一项长期搁置的河滨公园计划（该计划曾多次被推迟）。支持者表示：“这是我们多年来做出的最重要的决定。”反对者则警告说，4800万欧元的预算并不包括清理受污染土壤的费用，工程师估计这可能还要再增加900万欧元。

工程预计明年春天开工，2027年完工。
"""

CODE_PY = '''import math


def area(shape: dict) -> float:
\t"""Area of a simple shape."""
    if shape["kind"] == "circle":
        return math.pi * shape["r"] ** 2
    return shape["w"] * shape["h"]
'''

TABLE = """<table>
<thead><tr><th rowspan="2">Region</th><th colspan="2">Population</th></tr>
<tr><th>2010</th><th>2020</th></tr></thead>
<tbody>
<tr><td>North</td><td>12.1</td><td>13.4</td></tr>
<tr><td>South</td><td colspan="2">8.7 (no census in 2020)</td></tr>
</tbody></table>"""


@pytest.fixture
def news_en() -> Document:
    return Document(doc_id="t/en", domain="news_en", text=NEWS_EN)


@pytest.fixture
def news_zh() -> Document:
    return Document(doc_id="t/zh", domain="news_zh", text=NEWS_ZH)


@pytest.fixture
def code_py() -> Document:
    return Document(doc_id="t/py", domain="code_python", text=CODE_PY)


@pytest.fixture
def table_doc() -> Document:
    return Document(doc_id="t/table", domain="table", text=TABLE)


@pytest.fixture
def small() -> RenderSettings:
    """A narrow page with proportionally smaller type: same code paths, a quarter the pixels."""
    return RenderSettings(
        width=800, margin=48, prose_font_size=16, code_font_size=13, table_font_size=14
    )


@pytest.fixture
def synth() -> SynthesisSettings:
    return SynthesisSettings()
