"""Token-bucket and sliding-window rate limiters for an API client."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable


class TokenBucket:
    """Allow bursts up to ``capacity`` and a steady ``rate`` of tokens per second."""

    def __init__(
        self,
        rate: float,
        capacity: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate <= 0 or capacity <= 0:
            raise ValueError("rate and capacity must be positive")
        self.rate = rate
        self.capacity = capacity
        self._clock = clock
        self._tokens = capacity
        self._updated = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        elapsed = now - self._updated
        self._tokens = min(self.capacity, self._tokens + elapsed * self.rate)
        self._updated = now

    def try_acquire(self, tokens: float = 1.0) -> bool:
        with self._lock:
            self._refill()
            if self._tokens >= tokens:
                self._tokens -= tokens
                return True
            return False

    def wait_time(self, tokens: float = 1.0) -> float:
        """Seconds until ``tokens`` would be available."""
        with self._lock:
            self._refill()
            missing = tokens - self._tokens
            return max(0.0, missing / self.rate)

    def acquire(self, tokens: float = 1.0) -> None:
        if tokens > self.capacity:
            raise ValueError("request larger than bucket capacity")
        while not self.try_acquire(tokens):
            time.sleep(self.wait_time(tokens))


class SlidingWindow:
    """Allow at most ``limit`` events in any window of ``window`` seconds."""

    def __init__(
        self,
        limit: int,
        window: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._events: deque[float] = deque()

    def allow(self) -> bool:
        now = self._clock()
        while self._events and now - self._events[0] >= self.window:
            self._events.popleft()
        if len(self._events) < self.limit:
            self._events.append(now)
            return True
        return False


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


if __name__ == "__main__":
    clock = FakeClock()
    bucket = TokenBucket(rate=2.0, capacity=5.0, clock=clock)
    granted = [bucket.try_acquire() for _ in range(7)]
    print("burst:", granted)
    clock.advance(1.5)
    print("after 1.5 s:", [bucket.try_acquire() for _ in range(4)])
    window = SlidingWindow(limit=3, window=10.0, clock=clock)
    results = []
    for step in range(6):
        results.append(window.allow())
        clock.advance(4.0 if step % 2 else 1.0)
    print("window:", results)
