"""The OCR wrapper on small rendered images: what it reads, and how well (NED measured).

Each read takes about 0.3-1.5 CPU-seconds on one core; the engine loads once per session.
"""

from __future__ import annotations

from importlib.resources import files

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from shredfold.metrics.text import ned
from shredfold.shred.ocr import reader as ocr
from shredfold.tables import table_text

DEJAVU = "/usr/share/fonts/truetype/dejavu/"

PARAGRAPH = [
    "The quick brown fox jumps over the lazy dog. It was a bright cold",
    "day in April, and the clocks were striking thirteen. Winston Smith,",
    "his chin nuzzled into his breast in an effort to escape the vile wind.",
]
CHINESE = ["今天天气很好，我们去公园散步。北京是中国的首都。"]
CODE = [
    "def fib(n: int) -> int:",
    "    if n < 2:",
    "        return n",
    "    a, b = 0, 1",
    "    for _ in range(n - 1):",
    "        a, b = b, a + b",
    "    return b",
]
JAVA = [
    "class Main {",
    "    static int twice(int x) {",
    "        if (x > 0) {",
    "            return 2 * x;",
    "        }",
    "        return 0;",
    "    }",
    "}",
]


def font(name: str, size: int) -> ImageFont.FreeTypeFont:
    if name == "cjk":
        path = files("manimgx_fonts_cjk") / "NotoSansCJK-VF.otf.ttc"
        cjk = ImageFont.truetype(str(path), size, index=2)  # index 2: Simplified Chinese
        cjk.set_variation_by_name("Regular")
        return cjk
    return ImageFont.truetype(DEJAVU + name, size)


def render(lines: list[str], face: ImageFont.FreeTypeFont, mode: str = "RGB") -> Image.Image:
    """Dark text on white paper, 20 px margins, line height 1.5 em."""
    ascent, descent = face.getmetrics()
    step = int((ascent + descent) * 1.5)
    width = max(int(face.getlength(line)) for line in lines) + 40
    image = Image.new(mode, (width, step * len(lines) + 40), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((20, 20 + i * step), line, font=face, fill=(20, 20, 20))
    return image


def as_scrap(paper: Image.Image) -> Image.Image:
    """The paper as a scrap: RGBA on a transparent background with a soft drop shadow."""
    w, h = paper.size
    scrap = Image.new("RGBA", (w + 60, h + 60), (0, 0, 0, 0))
    shadow = Image.new("RGBA", scrap.size, (0, 0, 0, 0))
    ImageDraw.Draw(shadow).rectangle([38, 38, 38 + w, 38 + h], fill=(0, 0, 0, 140))
    scrap = Image.alpha_composite(scrap, shadow.filter(ImageFilter.GaussianBlur(8)))
    scrap.paste(paper.convert("RGBA"), (30, 30))
    return scrap


def indents(text: str) -> list[int]:
    return [len(line) - len(line.lstrip(" ")) for line in text.splitlines()]


def test_reads_an_english_paragraph() -> None:
    text = ocr.read_text(render(PARAGRAPH, font("DejaVuSans.ttf", 24)))
    assert text.count("\n") == 2
    assert ned(text, "\n".join(PARAGRAPH), "prose") <= 0.03  # measured 0.000


def test_reads_chinese() -> None:
    text = ocr.read_text(render(CHINESE, font("cjk", 28)))
    assert ned(text, CHINESE[0], "prose") <= 0.05  # measured 0.000


def test_recovers_python_indentation() -> None:
    text = ocr.read_text(render(CODE, font("DejaVuSansMono.ttf", 24)), kind="code")
    assert indents(text) == indents("\n".join(CODE))
    assert ned(text, "\n".join(CODE), "code") <= 0.05  # measured 0.000-0.022


def test_reads_lone_closing_braces_of_java() -> None:
    # The detector alone misses lines holding only "}"; they are looked at again.
    text = ocr.read_text(render(JAVA, font("DejaVuSansMono.ttf", 24)), kind="code")
    assert indents(text) == indents("\n".join(JAVA))
    assert ned(text, "\n".join(JAVA), "code") <= 0.05


def test_faint_grey_code_read_unbinarized_keeps_its_indentation_and_lone_braces() -> None:
    # Small type drawn from a photograph is light grey (read unbinarized, as jigsaw-ocr
    # reads a photographed page): the ink that sets indentation and finds the lone "}"
    # lines is found at the page's own contrast, not at a fixed grey level.
    dark = np.asarray(render(JAVA, font("DejaVuSansMono.ttf", 24)), dtype=np.float32)
    faint = Image.fromarray((255 - (255 - dark) * 0.35).astype(np.uint8))  # ink at ~172
    assert np.asarray(faint).min() > 150
    text = ocr.read_text(faint, kind="code", binarize=False)
    assert indents(text) == indents("\n".join(JAVA)), text
    assert text.count("}") == 3, text


def test_reads_an_rgba_scrap_with_a_shadow() -> None:
    scrap = as_scrap(render(PARAGRAPH, font("DejaVuSans.ttf", 24)))
    assert scrap.mode == "RGBA"
    text = ocr.read_text(scrap)
    assert ned(text, "\n".join(PARAGRAPH), "prose") <= 0.03  # measured 0.000


def test_reads_a_table_with_borders_cell_by_cell() -> None:
    rows = [["Name", "Qty", "Price"], ["apple", "3", "1.20"], ["kiwi fruit", "7", "2.05"]]
    face, widths, step = font("DejaVuSans.ttf", 24), [220, 120, 140], 48
    image = Image.new("RGB", (sum(widths) + 41, step * len(rows) + 41), "white")
    draw = ImageDraw.Draw(image)
    for i, row in enumerate(rows):
        x = 20
        for width, cell in zip(widths, row, strict=True):
            draw.rectangle([x, 20 + i * step, x + width, 20 + (i + 1) * step], outline=0, width=2)
            draw.text((x + 10, 30 + i * step), cell, font=face, fill=0)
            x += width
    text = ocr.read_text(image, kind="table")
    assert text.splitlines()[0] == "Name | Qty | Price"
    assert ned(text, "\n".join(" | ".join(r) for r in rows), "table") <= 0.05  # measured 0


def test_reads_a_ruled_table_with_merged_cells_in_table_text_order() -> None:
    html = (
        "<table><tr><th rowspan='2'>Region</th><th colspan='2'>Population</th></tr>"
        "<tr><th>2010</th><th>2020</th></tr>"
        "<tr><td>North</td><td>12.1</td><td>13.4</td></tr></table>"
    )
    # (column, row, columns spanned, rows spanned, text) on a 3 x 3 grid.
    cells = [
        (0, 0, 1, 2, "Region"),
        (1, 0, 2, 1, "Population"),
        (1, 1, 1, 1, "2010"),
        (2, 1, 1, 1, "2020"),
        (0, 2, 1, 1, "North"),
        (1, 2, 1, 1, "12.1"),
        (2, 2, 1, 1, "13.4"),
    ]
    face, step = font("DejaVuSans.ttf", 24), 52
    left = [20, 180, 330, 480]  # x of the column rules
    image = Image.new("RGB", (500, 3 * step + 40), "white")
    draw = ImageDraw.Draw(image)
    for col, row, cols, rows, cell in cells:
        x0, y0 = left[col], 20 + row * step
        x1, y1 = left[col + cols], 20 + (row + rows) * step
        draw.rectangle([x0, y0, x1, y1], outline=60, width=2)
        draw.text((x0 + 10, (y0 + y1) / 2 - 14), cell, font=face, fill=0)
    text = ocr.read_text(image, kind="table")
    assert text == table_text(html) == "Region | Population\n2010 | 2020\nNorth | 12.1 | 13.4"


def test_reads_a_composite_on_a_coloured_table_top() -> None:
    scrap = as_scrap(render(PARAGRAPH, font("DejaVuSans.ttf", 24)))
    table_top = Image.new("RGBA", scrap.size, (92, 70, 52, 255))
    composite = Image.alpha_composite(table_top, scrap).convert("RGB")
    text = ocr.read_text(composite)
    # The dark wood around the paper is not read as text (it once came out as "1"s).
    assert text.count("\n") == 2
    assert ned(text, "\n".join(PARAGRAPH), "prose") <= 0.03  # measured 0.000


def test_read_lines_in_reading_order_with_boxes() -> None:
    image = render(PARAGRAPH, font("DejaVuSans.ttf", 24))
    lines = ocr.read_lines(image)
    assert [line.text for line in lines] == PARAGRAPH
    tops = [line.box[1] for line in lines]
    assert tops == sorted(tops)
    for line in lines:
        x0, y0, x1, y1 = line.box
        assert 0 <= x0 < x1 <= image.width and 0 <= y0 < y1 <= image.height
        assert 0.5 <= line.score <= 1.0
    with pytest.raises(AttributeError):
        lines[0].text = "changed"  # type: ignore[misc]


def test_prepare_gives_black_text_on_white() -> None:
    scrap = as_scrap(render(["Hello"], font("DejaVuSans.ttf", 24)))
    array = ocr.prepare(scrap)
    assert array.dtype == np.uint8 and array.shape == (scrap.height, scrap.width)
    assert set(np.unique(array).tolist()) <= {0, 255}
    # The transparent surround and the shadow come out as paper, not ink.
    assert (array[:10] == 255).all() and (array[-10:] == 255).all()
    assert (array < 128).mean() < 0.05


def test_blank_paper_reads_as_nothing() -> None:
    noise = np.random.default_rng(0).normal(235, 6, (200, 300)).clip(0, 255)
    blank = Image.fromarray(noise.astype(np.uint8))
    assert ocr.read_text(blank) == ""
    assert ocr.read_lines(blank) == []


def test_engine_is_one_per_process_with_one_thread() -> None:
    engine = ocr.engine()
    assert ocr.engine() is engine
    for session in (engine.text_det.infer, engine.text_rec.session):
        assert session.compiled.get_property("INFERENCE_NUM_THREADS") == 1
        assert session.compiled.get_property("NUM_STREAMS") == 1
        assert session.compiled.get_property("ENABLE_CPU_PINNING") is False


def test_ink_is_found_at_the_pages_own_contrast() -> None:
    from shredfold.shred.ocr.reader import _ink

    page = np.full((300, 400), 255, np.uint8)
    page[100:112, 50:56] = 0  # one short mark, far under 1% of the page: still ink
    assert _ink(page).sum() == 72
    faint = page.copy()
    faint[100:112, 50:56] = 170  # small type drawn from a photograph: light grey
    faint[200:204, 300:302] = 235  # paper texture near the paper's own grey: no ink
    assert _ink(faint).sum() == 72
    assert not _ink(np.full((50, 50), 240, np.uint8)).any()  # blank paper
