"""Spend before it is spent: a model's ``budget_usd``, kept in a ledger every job shares.

Each priced model's spend is an append-only ledger, ``<store>/.spend/<model id>.jsonl``, one
JSON object a line, kept whether or not it has a budget (without one nothing is refused). Every
call is recorded on its own, so a request asked again after an unreadable 200 is counted
twice, as a provider bills it. Before a call, the asker *reserves* the call's worst case (its estimated input
and ``max_tokens`` output, :func:`~shredfold.models.accounting.worst_case_usd`); the check
"recorded spend + this reservation ≤ budget" and the reservation itself happen under an
exclusive ``flock`` on the ledger, so parallel jobs (separate processes, one per cell) never
overbook. When the answer arrives the reservation is *settled* at the call's real cost.

What counts as spent: every settled cost, plus every reservation not yet settled — calls in
flight, and those a crash or ``kill -9`` left behind (they may have been paid, so they count
in full, conservatively). A call that failed with an HTTP error status is settled at 0
(providers bill no tokens for a request they refused); one that timed out, broke off or
returned an unreadable 200 is settled at its worst case (it may have been billed).

Once a call would exceed the budget, the asker refuses it and every later one of its job with
:class:`BudgetExceededError` (a :class:`~shredfold.calls.ModelCallError`): the items are
recorded as errors, never stored as answers, and the next run asks them again. Answers in
the store cost nothing and are never refused, so raising the budget resumes exactly where the
money ran out. The budget is not part of the model's identity: changing it changes no key.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from shredfold.calls import ModelCallError, Request, Response
from shredfold.models.accounting import worst_case_usd
from shredfold.models.image_tokens import png_size
from shredfold.spec import ModelConfig
from shredfold.store import Store

log = logging.getLogger(__name__)

SPEND_DIR = ".spend"  # a dot folder: not a stage, so `verify --store` and gc pass it by
# Float sums of the same costs in another order may differ in the last bits.
_SLACK = 1e-12


class BudgetExceededError(ModelCallError):
    """A call not made because it could take the model's spend past ``budget_usd``."""


@dataclass(frozen=True)
class Spend:
    settled: float  # the real cost of the calls answered (and the worst case of doubtful ones)
    reserved: float  # reservations not settled: calls in flight, or left by a crash

    @property
    def total(self) -> float:
        return self.settled + self.reserved


@dataclass(frozen=True)
class Ticket:
    id: str
    worst_usd: float


def ledger_path(store: Store, model_id: str) -> Path:
    return store.root / SPEND_DIR / f"{model_id}.jsonl"


class SpendLedger:
    """One model's ledger. Thread-safe, and safe across processes (``flock``); it reads only
    what other writers appended since its last look."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._mutex = threading.Lock()  # flock does not exclude threads sharing one process's lock
        self._offset = 0
        self._open: dict[str, float] = {}
        self._settled = 0.0

    @contextlib.contextmanager
    def _locked(self) -> Iterator[IO[bytes]]:
        with self._mutex:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a+b") as fh:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
                try:
                    self._catch_up(fh)
                    yield fh
                finally:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _catch_up(self, fh: IO[bytes]) -> None:
        size = os.fstat(fh.fileno()).st_size
        if size < self._offset:  # replaced or cut short by hand: read it all again
            self._offset, self._open, self._settled = 0, {}, 0.0
        fh.seek(self._offset)
        data = fh.read(size - self._offset)
        whole = data.rfind(b"\n") + 1
        for line in io.BytesIO(data[:whole]):
            self._apply(line)
        self._offset += whole
        if whole < len(data):
            # A writer died mid-line (we hold the lock, so no one is writing now): end the
            # line so that it is skipped. A torn reservation was never followed by its call,
            # and a torn settlement leaves its reservation counted in full: both err on the
            # side of spending less.
            log.warning("%s: an unfinished line (an interrupted write) is skipped", self.path)
            fh.write(b"\n")
            fh.flush()
            self._offset = size + 1

    def _apply(self, line: bytes) -> None:
        try:
            entry = json.loads(line)
            op, ticket, usd = entry["op"], str(entry["id"]), float(entry["usd"])
        except (ValueError, KeyError, TypeError):
            if line.strip():
                log.warning("%s: a line that is not a ledger entry is skipped", self.path)
            return
        if op == "reserve":
            self._open[ticket] = usd
        elif op == "settle":
            self._open.pop(ticket, None)
            self._settled += usd

    def _append(self, fh: IO[bytes], entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, sort_keys=True, allow_nan=False) + "\n").encode("utf-8")
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())  # a reservation must outlive a crash of the machine, too
        self._apply(line)
        self._offset += len(line)

    def peek(self) -> Spend:
        """The spend the file records now, read without locking or writing (for reports)."""
        if not self.path.is_file():
            return Spend(0.0, 0.0)
        data = self.path.read_bytes()
        view = SpendLedger(self.path)
        for line in io.BytesIO(data[: data.rfind(b"\n") + 1]):
            view._apply(line)
        return Spend(view._settled, sum(view._open.values()))

    def spend(self) -> Spend:
        with self._locked():
            return Spend(self._settled, sum(self._open.values()))

    def reserve(self, usd: float, cap: float, request: str = "") -> tuple[str | None, Spend]:
        """Reserve ``usd`` if the recorded spend plus it stays within ``cap``: (ticket, spend
        before it), or (None, spend) when it would not."""
        with self._locked() as fh:
            spend = Spend(self._settled, sum(self._open.values()))
            if spend.total + usd > cap + _SLACK:
                return None, spend
            ticket = uuid.uuid4().hex
            self._append(fh, {"op": "reserve", "id": ticket, "usd": usd, "request": request,
                              "pid": os.getpid(), "time": round(time.time(), 3)})  # fmt: skip
            return ticket, spend

    def settle(self, ticket: str, usd: float, why: str = "answered") -> None:
        """Replace a reservation by what the call cost."""
        with self._locked() as fh:
            self._append(fh, {"op": "settle", "id": ticket, "usd": usd, "why": why,
                              "time": round(time.time(), 3)})  # fmt: skip


def request_sides(request: Request) -> list[tuple[int, int]]:
    """The pixel size of every image of a request (PNG headers; other formats through Pillow)."""
    sides = []
    for data in request.images:
        try:
            sides.append(png_size(data))
        except ValueError:
            from PIL import Image

            with Image.open(io.BytesIO(data)) as img:
                sides.append(img.size)
    return sides


class Budget:
    """A model's budget as one job applies it: reserve before a call, settle after it, and
    stop at the first call that would not fit (every later call of the job is refused too)."""

    def __init__(self, config: ModelConfig, ledger: SpendLedger) -> None:
        self.config, self.ledger = config, ledger
        self.cap = config.budget_usd if config.budget_usd is not None else math.inf
        self._lock = threading.Lock()
        self._stopped: str | None = None

    @classmethod
    def of(cls, config: ModelConfig, store: Store) -> Budget | None:
        """The model's ledger and budget (no cap without ``budget_usd``: every call of a
        priced model is recorded all the same), or None when it costs nothing."""
        if config.price_input_per_mtok == 0 and config.price_output_per_mtok == 0:
            return None
        return cls(config, SpendLedger(ledger_path(store, config.id)))

    def reserve(self, request: Request, rkey: str) -> Ticket:
        with self._lock:
            if self._stopped is not None:
                raise BudgetExceededError(self._stopped)
        worst = worst_case_usd(self.config, request.text, request_sides(request))
        ticket, spend = self.ledger.reserve(worst, self.cap, rkey)
        if ticket is None:
            message = (
                f"budget: model {self.config.id} stopped at budget_usd ${self.cap:.4f}: "
                f"${spend.total:.4f} spent or reserved (${spend.reserved:.4f} reserved by calls in "
                f"flight or interrupted), and a call may cost up to ${worst:.4f}; not asked. "
                "Raise budget_usd (the model file, or the spec's budget_usd) and run again: "
                "answers already bought are reused"
            )
            with self._lock:
                self._stopped = message
            raise BudgetExceededError(message)
        return Ticket(ticket, worst)

    def settle(self, ticket: Ticket, response: Response) -> None:
        self.ledger.settle(ticket.id, response.cost_usd)

    def failed(self, ticket: Ticket, exc: ModelCallError) -> None:
        billed = exc.status is None or exc.status == 200
        self.ledger.settle(ticket.id, ticket.worst_usd if billed else 0.0, why="failed" if billed else "refused")
