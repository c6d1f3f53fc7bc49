import json
import logging
import os
import threading
import time

import pytest

from shredfold import progress
from shredfold.progress import DONE, FAILED, RUNNING, Progress, alive, current, read_state, track


@pytest.fixture
def records(caplog):
    caplog.set_level(logging.INFO, logger="shredfold.progress")
    return caplog


def lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("progress ")]


def test_counts_tokens_and_spend_make_one_line(tmp_path, records):
    spend = lambda: (3.5, 20.0)  # noqa: E731
    with Progress("query m/shred/news_en/N8", 10, state_path=tmp_path / "s.json", spend=spend, interval=60, bar=False) as p:
        p.advance(4, cached=True)
        p.advance()
        p.advance(error=True)
        p.usage(1200, 300, 0.25)
        p.usage(800, 100, 0.05)
        line = p.line()
    assert line.startswith("progress query m/shred/news_en/N8: 6/10 items (60.0%), 1 errors, 4 cached")
    assert "2,000 tokens in, 400 out" in line
    assert "$0.3000 this job, $3.5000 recorded of $20.00 budget" in line
    assert "ETA" in line and "items/s" in line and "peak RSS" in line
    state = read_state(tmp_path / "s.json")
    assert state is not None and state["state"] == DONE and state["eta"] is None
    assert (state["done"], state["errors"], state["cached"], state["total"]) == (6, 1, 4, 10)
    assert (state["input_tokens"], state["output_tokens"], state["cost_usd"]) == (2000, 400, 0.3)
    assert (state["spent_usd"], state["budget_usd"]) == (3.5, 20.0)
    assert state["pid"] == os.getpid() and state["peak_rss_mb"] > 10
    # a line when it starts and one when it ends (no terminal: no bar)
    said = lines(records)
    assert len(said) == 2 and "0/10 items" in said[0]
    assert "6/10 items" in said[-1]


def test_it_reports_at_a_steady_interval_while_nothing_moves(tmp_path, records):
    with Progress("build shred/news_en/N1", 3, state_path=tmp_path / "s.json", interval=0.05, bar=False) as p:
        time.sleep(0.4)  # one long item
        mid = read_state(tmp_path / "s.json")
        p.advance(3)
    assert mid is not None and mid["state"] == RUNNING and mid["elapsed_s"] > 0.1
    ticks = [s for s in lines(records) if "0/3 items" in s]
    assert len(ticks) >= 4  # the start line and the timer's
    assert "3/3 items" in lines(records)[-1]


def test_a_failed_step_says_so(tmp_path):
    with pytest.raises(RuntimeError), Progress("score x", 2, state_path=tmp_path / "s.json", interval=60, bar=False) as p:
        p.advance()
        raise RuntimeError("boom")
    state = read_state(tmp_path / "s.json")
    assert state["state"] == FAILED and state["done"] == 1


def test_the_current_progress_is_whatever_step_runs_even_from_other_threads():
    assert current().what == ""  # none: a silent one
    current().advance()  # counts nothing anyone sees
    with Progress("outer", 4, interval=60, quiet=True) as outer:
        assert current() is outer
        workers = [threading.Thread(target=lambda: current().advance()) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        with Progress("inner", 1, interval=60, quiet=True) as inner:
            assert current() is inner
        assert current() is outer
    assert outer.done == 4 and inner.done == 0
    assert current().what == ""


def test_a_bar_on_a_terminal_instead_of_lines(capsys, records):
    with Progress("query y", 3, interval=60, bar=True) as p:
        p.advance(3)
    err = capsys.readouterr().err
    # tqdm's bar shows after two seconds; the final line always comes
    assert lines(records)[-1].startswith("progress query y: 3/3 items")
    assert len(lines(records)) == 1, err


def test_track_is_silent_unless_the_step_takes_a_while(records):
    assert list(track(range(5), "designs")) == [0, 1, 2, 3, 4]
    assert lines(records) == []
    os.environ[progress.INTERVAL_ENV] = "0.05"
    try:
        out = []
        for x in track([1, 2], "designs", unit="design"):
            time.sleep(0.2)
            out.append(x)
    finally:
        del os.environ[progress.INTERVAL_ENV]
    assert out == [1, 2]
    said = lines(records)
    assert said and "designs" in said[0] and "2/2 designs" in said[-1]


def test_bad_interval_settings_fall_back(monkeypatch):
    for bad in ("x", "0", "-1", "inf", "nan"):
        monkeypatch.setenv(progress.INTERVAL_ENV, bad)
        assert progress.interval_s() == progress.DEFAULT_INTERVAL_S
    monkeypatch.setenv(progress.INTERVAL_ENV, "2.5")
    assert progress.interval_s() == 2.5


def test_state_files_are_read_whole_or_not_at_all(tmp_path):
    path = tmp_path / "s.json"
    assert read_state(path) is None
    path.write_text('{"format": 1, "state": "run')  # cut short
    assert read_state(path) is None
    path.write_text("[1, 2]")
    assert read_state(path) is None
    path.write_text(json.dumps({"format": 99}))
    assert read_state(path) is None


def test_alive_knows_a_dead_job_from_a_running_one(tmp_path):
    with Progress("q", 1, state_path=tmp_path / "s.json", interval=60, quiet=True):
        state = read_state(tmp_path / "s.json")
        assert alive(state)
    assert not alive(read_state(tmp_path / "s.json"))  # done
    gone = dict(state, pid=2**22 + 12345)
    assert not alive(gone)
    reused = dict(state, started=time.time() - 10 * 365 * 86400)  # this pid began after it
    assert not alive(reused)
    elsewhere = dict(state, host="another-machine", updated=time.time())
    assert alive(elsewhere) and not alive(dict(elsewhere, updated=time.time() - 3600))
