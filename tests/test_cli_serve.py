"""`shredfold serve` started the way a user starts it: a bad start is one line and exit 2, and
a SIGINT the moment it says it is serving stops it cleanly."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from shredfold import cli


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shredfold", "serve", *args],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_an_unknown_model_is_named() -> None:
    line = one_line(serve("--model", "gpt-9", "--port", "0"))
    assert "unknown model 'gpt-9'" in line and "oracle" in line


def test_a_bad_fault_schedule_is_named() -> None:
    line = one_line(serve("--model", "echo", "--port", "0", "--faults", "429,teapot"))
    assert line.startswith("shredfold serve: --faults:") and "teapot" in line


def test_a_port_in_use_is_named() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        line = one_line(serve("--model", "echo", "--port", str(port)))
    assert f"cannot listen on 127.0.0.1:{port}" in line and "in use" in line


def test_a_log_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    log = tmp_path / "no-such-folder" / "log.jsonl"
    line = one_line(serve("--model", "echo", "--port", "0", "--log", str(log)))
    assert str(log) in line


@pytest.mark.parametrize(("flag", "value"), [("--port", "70000"), ("--port", "-1"), ("--max-body-mb", "0")])
def test_bad_numbers_are_refused_by_the_parser(flag: str, value: str) -> None:
    proc = serve("--model", "echo", flag, value)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and flag in proc.stderr


class _InterruptedStdout(io.StringIO):
    """A terminal whose reader sends SIGINT the moment the readiness line is out."""

    def flush(self) -> None:
        super().flush()
        if "serving" in self.getvalue():
            raise KeyboardInterrupt


def test_a_sigint_right_after_the_readiness_line_still_stops_cleanly(monkeypatch, tmp_path: Path) -> None:
    # The window between printing the line and entering the serving loop is a few bytecodes
    # wide; a signal landing there must be handled like one landing in the loop.
    out = _InterruptedStdout()
    monkeypatch.setattr(sys, "stdout", out)
    log = tmp_path / "requests.jsonl"
    assert cli.main(["serve", "--model", "echo", "--port", "0", "--log", str(log)]) == 0
    assert out.getvalue().startswith("serving echo at http://127.0.0.1:")
