"""Progress of a long step, watched while it runs: items done of total, errors, cached,
tokens, dollars, rate and ETA.

A :class:`Progress` is reported three ways:

- a ``tqdm`` bar on stderr when stderr is a terminal (a job run by hand, a plan);
- otherwise a log line every ``interval_s`` seconds (``SHREDFOLD_PROGRESS_S``, default 15),
  from a timer thread, so a job that waits an hour on one slow request still says so in its
  log (a Snakemake job's stderr is its log file);
- a small JSON state file (``state_path``), rewritten atomically at the same interval and at
  the end, which ``shredfold status`` reads while the pipeline runs.

One progress is *current* per process (:func:`current`, set by :meth:`Progress.__enter__`):
the building blocks a stage calls — a task's loops, the item builder, the cached asker —
report into it without it being passed down, from any thread (a cell of an HTTP model asks
from a pool of threads). With none active, :func:`current` is a progress that reports
nothing.
"""

from __future__ import annotations

import logging
import os
import resource
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from shredfold.store import atomic_write_json

T = TypeVar("T")

INTERVAL_ENV = "SHREDFOLD_PROGRESS_S"
DEFAULT_INTERVAL_S = 15.0
STATE_FORMAT = 1

# What a state file's ``state`` says.
RUNNING, DONE, FAILED = "running", "done", "failed"

Spend = Callable[[], tuple[float, float | None]]  # (dollars recorded for the model, its budget)


def interval_s() -> float:
    """Seconds between two reports (``SHREDFOLD_PROGRESS_S``; bad values fall back)."""
    try:
        value = float(os.environ.get(INTERVAL_ENV, DEFAULT_INTERVAL_S))
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if 0 < value < float("inf") else DEFAULT_INTERVAL_S


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, and its waited-for children's, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024.0  # Linux reports kilobytes


def _emit(log: logging.Logger, line: str) -> None:
    if log.hasHandlers():
        log.info("%s", line)
    else:  # a plan in Snakemake's own process: no logging is set up there
        print(line, file=sys.stderr, flush=True)


class Progress:
    """Counts of one step, reported at a steady interval (see the module's text)."""

    def __init__(
        self,
        what: str,
        total: int | None,
        *,
        unit: str = "item",
        log: logging.Logger | None = None,
        state_path: str | os.PathLike[str] | None = None,
        spend: Spend | None = None,
        interval: float | None = None,
        bar: bool | None = None,
        quiet: bool = False,
        brief: bool = False,
    ) -> None:
        self.what, self.total, self.unit = what, total, unit
        self.log = log or logging.getLogger("shredfold.progress")
        self.state_path = Path(state_path) if state_path is not None else None
        self.spend = spend
        self.interval = interval if interval is not None else interval_s()
        self.quiet = quiet
        # brief: no line at the start, nor at the end of a step that never reached a tick
        self.brief = brief
        self._ticked = False
        self._bar_wanted = (not quiet) and (sys.stderr.isatty() if bar is None else bar)
        self._bar: Any = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._previous: Progress | None = None
        self.done = self.errors = self.cached = 0
        self.input_tokens = self.output_tokens = 0
        self.cost_usd = 0.0
        self.state = RUNNING
        self.started = time.time()
        self._t0 = time.monotonic()

    # ------------------------------------------------------------ counting

    def advance(self, n: int = 1, *, error: bool = False, cached: bool = False) -> None:
        """``n`` items finished (all failed with ``error``, or all answered from the cache)."""
        if n <= 0:
            return
        with self._lock:
            self.done += n
            self.errors += n if error else 0
            self.cached += n if cached else 0
            if self._bar is not None:
                self._bar.update(n)
                self._bar.set_postfix_str(self._postfix(), refresh=False)

    def usage(self, input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0) -> None:
        """A model call this step paid for."""
        with self._lock:
            self.input_tokens += int(input_tokens or 0)
            self.output_tokens += int(output_tokens or 0)
            self.cost_usd += float(cost_usd or 0.0)

    # ------------------------------------------------------------ what it says

    def _spend(self) -> tuple[float, float | None] | None:
        if self.spend is None:
            return None
        try:
            return self.spend()
        except (OSError, ValueError):  # a ledger being rewritten by hand: report without it
            return None

    def snapshot(self) -> dict[str, Any]:
        """The counts now, as the state file records them."""
        from tqdm import tqdm

        with self._lock:
            elapsed = time.monotonic() - self._t0
            fresh = self.done - self.cached  # cached items take no time: not in the rate
            rate = fresh / elapsed if elapsed > 0 and fresh > 0 else None
            left = max(self.total - self.done, 0) if self.total is not None else None
            out: dict[str, Any] = {
                "format": STATE_FORMAT,
                "what": self.what,
                "unit": self.unit,
                "state": self.state,
                "total": self.total,
                "done": self.done,
                "errors": self.errors,
                "cached": self.cached,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cost_usd": round(self.cost_usd, 6),
                "elapsed_s": round(elapsed, 3),
                "rate_per_s": round(rate, 6) if rate else None,
                "eta_s": round(left / rate, 1) if rate and left is not None and self.state == RUNNING else None,
                "eta": tqdm.format_interval(left / rate) if rate and left is not None and self.state == RUNNING else None,
                "peak_rss_mb": round(peak_rss_mb(), 1),
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "started": round(self.started, 3),
                "updated": round(time.time(), 3),
            }
        spend = self._spend()
        if spend is not None:
            out["spent_usd"], out["budget_usd"] = round(spend[0], 6), spend[1]
        return out

    def _postfix(self) -> str:  # (called under the lock)
        parts = []
        if self.errors:
            parts.append(f"{self.errors} error{'s' * (self.errors != 1)}")
        if self.cached:
            parts.append(f"{self.cached} cached")
        if self.cost_usd:
            parts.append(f"${self.cost_usd:.4f}")
        return ", ".join(parts)

    def line(self, snap: dict[str, Any] | None = None) -> str:
        """One log line: ``progress WHAT: 12/126 items (9.5%), 1 error, 5 cached, …``."""
        from tqdm import tqdm

        s = snap or self.snapshot()
        if s["total"] is None:  # not known ahead (a folder walked as it is read)
            parts = [f"{s['done']} {s['unit']}s so far"]
        else:
            share = f" ({100.0 * s['done'] / s['total']:.1f}%)" if s["total"] else ""
            parts = [f"{s['done']}/{s['total']} {s['unit']}s{share}"]
        parts += [f"{s['errors']} errors", f"{s['cached']} cached"]
        if s["input_tokens"] or s["output_tokens"]:
            parts.append(f"{s['input_tokens']:,} tokens in, {s['output_tokens']:,} out")
        if "spent_usd" in s:
            budget = f" of ${s['budget_usd']:.2f} budget" if s.get("budget_usd") is not None else ""
            parts.append(f"${s['cost_usd']:.4f} this job, ${s['spent_usd']:.4f} recorded{budget}")
        elif s["cost_usd"]:
            parts.append(f"${s['cost_usd']:.4f} this job")
        if s["rate_per_s"]:
            parts.append(f"{s['rate_per_s']:.3g} {s['unit']}s/s")
        if s["eta"]:
            parts.append(f"ETA {s['eta']}")
        parts.append(f"elapsed {tqdm.format_interval(s['elapsed_s'])}")
        parts.append(f"peak RSS {s['peak_rss_mb']:.0f} MB")
        return f"progress {s['what']}: {', '.join(parts)}"

    def report(self, tick: bool = False) -> None:
        """Write the state file and, without a bar, one log line."""
        self._ticked = self._ticked or tick
        snap = self.snapshot()
        if self.state_path is not None:
            try:
                atomic_write_json(self.state_path, snap, indent=None)
            except OSError as exc:  # a full disk must not fail the job it reports on
                self.log.warning("progress: cannot write %s: %s", self.state_path, exc)
        if self.quiet or (self.brief and not self._ticked):
            return
        if self._bar is None or self.state != RUNNING:
            _emit(self.log, self.line(snap))

    # ------------------------------------------------------------ running

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self.report(tick=True)

    def __enter__(self) -> Progress:
        global _current
        if self._bar_wanted:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.total, desc=self.what, unit=self.unit, file=sys.stderr,
                dynamic_ncols=True, leave=False, delay=2,
            )  # fmt: skip
        self._previous, _current = _current, self
        self.report()
        self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
        self._ticker.start()
        return self

    def close(self, state: str = DONE) -> None:
        global _current
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        with self._lock:
            self.state = state
        self.report()
        if _current is self:
            _current = self._previous if self._previous is not None else _NULL

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        self.close(FAILED if kind is not None else DONE)


class _NullProgress(Progress):
    """What :func:`current` gives when no step reports: it counts, and says nothing."""

    def __init__(self) -> None:
        super().__init__("", 0, quiet=True, bar=False)

    def report(self, tick: bool = False) -> None:
        return None


_NULL: Progress = _NullProgress()
_current: Progress = _NULL


def current() -> Progress:
    """The progress of the step this process runs now (a silent one when none does)."""
    return _current


def track(items: Iterable[T], what: str, total: int | None = None, *, unit: str = "item",
          log: logging.Logger | None = None) -> Iterator[T]:  # fmt: skip
    """``items``, reporting progress as they are taken (for steps of a plan that may take a
    while: a bar after two seconds on a terminal, else a line every interval)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with Progress(what, total, unit=unit, log=log, brief=True) as p:
        for item in items:
            yield item
            p.advance()


def read_state(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A state file as written by :meth:`Progress.report`, or None when it is absent or not
    (yet) readable: status may read it while a job rewrites it."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        return None
    return data


def alive(state: dict[str, Any], stale_after_s: float | None = None) -> bool:
    """Whether the job that wrote a ``running`` state is still running: its process exists
    (same machine), or, from another machine, it wrote within ``stale_after_s``."""
    if state.get("state") != RUNNING:
        return False
    if state.get("host") == socket.gethostname():
        import psutil

        try:
            proc = psutil.Process(int(state["pid"]))
            # a pid the system gave to another process since: started after the job did
            return proc.create_time() <= float(state["started"]) + 1.0
        except (psutil.Error, ValueError, KeyError, TypeError):
            return False
    limit = stale_after_s if stale_after_s is not None else 4 * interval_s()
    return time.time() - float(state.get("updated", 0)) < limit
