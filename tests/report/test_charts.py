from shredfold.report import charts
from shredfold.tasks.shredbench.report import REPORTED_NED


def test_the_decay_chart_labels_reported_curves_and_is_reproducible() -> None:
    measured = {"ocr-islands": {1: 0.1, 8: 0.5, 16: 0.7}}
    svg = charts.decay(measured, REPORTED_NED, "NED")
    assert svg.startswith("<svg") and "ocr-islands (measured)" in svg
    assert all(f"{m} (reported)" in svg for m in REPORTED_NED)
    assert svg == charts.decay(measured, REPORTED_NED, "NED")  # no date, fixed ids
    assert 'href="http' not in svg and "<image" not in svg  # nothing to fetch


def test_heatmap_and_bars_draw_every_label() -> None:
    svg = charts.heatmap("m", ["news_en", "table"], [1, 8], [[0.1, None], [0.3, 0.9]])
    assert "news_en" in svg and "N=8" in svg and "0.90" in svg
    bars = charts.bars("MCQ", ["mcq_assoc"], {"agent": [0.5]}, {"Qwen3-VL-32B": [0.9618]}, "accuracy")
    assert "Qwen3-VL-32B (reported)" in bars and "agent" in bars
