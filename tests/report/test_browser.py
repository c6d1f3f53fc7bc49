"""The report in a real browser: Debian's headless Chromium, driven by Playwright."""

from __future__ import annotations

import os

import pytest

from shredfold.report.browser import CHROMIUM, screenshots, visit
from shredfold.report.build import SECTIONS
from tests.e2e.small_run import MODELS

pytestmark = pytest.mark.slow


@pytest.fixture
def chromium() -> None:
    if not CHROMIUM.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: scripts/setup.sh --test installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} not installed (bash scripts/setup.sh --test installs it)")


def test_the_report_opens_offline_with_every_section_and_model(chromium, small_run, tmp_path) -> None:
    report = small_run.results / "report.html"
    with visit(report) as v:
        page = v.page
        for name in SECTIONS:
            assert page.locator(f"section#{name}").is_visible(), name
            assert page.locator(f"nav a[href='#{name}']").count() == 1
        rows = page.locator("#leaderboard tbody tr")
        assert sorted(rows.nth(i).get_attribute("data-model") for i in range(rows.count())) == sorted(MODELS)
        assert page.locator("#decay svg").count() == 1
        assert page.locator("#samples .pieces img").count() == 9
        # every inline image decoded (a broken data URI has no natural width)
        widths = page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
        assert widths and min(widths) > 0
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        assert v.console_errors == [] and v.page_errors == []
        assert v.outside() == []
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_screenshots_of_the_main_views(chromium, small_run, tmp_path) -> None:
    made = screenshots(small_run.results / "report.html", tmp_path)
    assert {p.name for p in made} >= {"report-leaderboard.png", "report-samples.png", "report-episodes.png"}
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in made)
