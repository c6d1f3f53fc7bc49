"""Token buckets for requests and tokens per minute, shared by the threads of one adapter.

Token counts are only known after a call, so a caller takes an estimate up front and
:meth:`TokenBucket.settle` books the difference afterwards; the balance may go negative,
which simply delays the next callers until the bucket has refilled.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class TokenBucket:
    """``rate_per_minute`` units refill continuously up to ``capacity``; ``acquire`` blocks."""

    def __init__(
        self,
        rate_per_minute: float,
        capacity: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rate_per_minute <= 0:
            raise ValueError("rate_per_minute must be positive")
        self.rate = rate_per_minute / 60.0
        # Default burst: one second's worth, at least one unit, so a fresh bucket does not
        # fire a whole minute's quota at once (providers meter over shorter windows too).
        self.capacity = max(1.0, self.rate) if capacity is None else float(capacity)
        self._clock = clock
        self._sleep = sleep
        self._level = self.capacity
        self._stamp = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    def acquire(self, amount: float = 1.0) -> float:
        """Take ``amount`` units, waiting as needed; return the seconds waited.

        A request larger than the capacity waits for a full bucket and then takes it all
        (otherwise it could never run).
        """
        need = min(float(amount), self.capacity)
        waited = 0.0
        while True:
            with self._lock:
                self._refill()
                if self._level >= need:
                    self._level -= float(amount)
                    return waited
                delay = (need - self._level) / self.rate
            self._sleep(delay)
            waited += delay

    def settle(self, delta: float) -> None:
        """Book ``delta`` more units (negative gives some back) once the true cost is known."""
        with self._lock:
            self._refill()
            self._level = min(self.capacity, self._level - delta)


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits of one endpoint in one process."""

    def __init__(
        self,
        requests_per_minute: float | None,
        tokens_per_minute: float | None,
        *,
        share: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        # ``share``: parallel Snakemake jobs allowed on the endpoint; each gets its part of
        # the provider's per-key quota, so together they stay within it.
        self.requests = (
            TokenBucket(requests_per_minute / share, clock=clock, sleep=sleep)
            if requests_per_minute
            else None
        )
        self.tokens = (
            TokenBucket(tokens_per_minute / share, capacity=tokens_per_minute / share, clock=clock, sleep=sleep)
            if tokens_per_minute
            else None
        )

    def before(self, estimated_tokens: int) -> float:
        waited = 0.0
        if self.requests is not None:
            waited += self.requests.acquire(1.0)
        if self.tokens is not None:
            waited += self.tokens.acquire(estimated_tokens)
        return waited

    def after(self, estimated_tokens: int, actual_tokens: int) -> None:
        if self.tokens is not None:
            self.tokens.settle(actual_tokens - estimated_tokens)
