"""A small least-recently-used cache with optional time-to-live."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """Keep at most ``capacity`` entries, evicting the least recently used."""

    def __init__(
        self,
        capacity: int,
        ttl: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self.ttl = ttl
        self._clock = clock
        self._data: OrderedDict[K, tuple[V, float]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data and not self._expired(key)  # type: ignore[arg-type]

    def _expired(self, key: K) -> bool:
        if self.ttl is None:
            return False
        _, stamp = self._data[key]
        return self._clock() - stamp > self.ttl

    def get(self, key: K, default: V | None = None) -> V | None:
        if key not in self._data or self._expired(key):
            self._data.pop(key, None)
            self.misses += 1
            return default
        self._data.move_to_end(key)
        self.hits += 1
        return self._data[key][0]

    def put(self, key: K, value: V) -> None:
        if key in self._data:
            self._data.move_to_end(key)
        self._data[key] = (value, self._clock())
        while len(self._data) > self.capacity:
            self._data.popitem(last=False)

    def pop(self, key: K) -> V:
        value, _ = self._data.pop(key)
        return value

    def clear(self) -> None:
        self._data.clear()
        self.hits = self.misses = 0

    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


IntFunc = Callable[[int], int]


def memoize(capacity: int = 128) -> Callable[[IntFunc], IntFunc]:
    """Decorate a one-argument function with an LRU cache."""

    def wrap(func: IntFunc) -> IntFunc:
        cache: LRUCache[int, int] = LRUCache(capacity)

        def inner(arg: int) -> int:
            found = cache.get(arg)
            if found is not None:
                return found
            result = func(arg)
            cache.put(arg, result)
            return result

        return inner

    return wrap


@memoize(capacity=64)
def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


if __name__ == "__main__":
    cache: LRUCache[str, int] = LRUCache(capacity=2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    print(sorted(k for k in ("a", "b", "c") if k in cache))
    print(fib(80), f"{cache.hit_rate():.2f}")
