"""`snakemake --report` works on a finished run (it needs Pygments, now a dependency)."""

from __future__ import annotations

import pytest

from tests.e2e.snake import snakemake

pytestmark = pytest.mark.slow


def test_snakemake_report_writes_its_page(small_run, tmp_path) -> None:
    out = tmp_path / "snakemake-report.html"
    snakemake(small_run.workdir, small_run.spec, "--report", str(out))
    text = out.read_text(encoding="utf-8", errors="replace")
    assert len(text) > 10_000
    assert "leaderboard.csv" in text and "report.html" in text
