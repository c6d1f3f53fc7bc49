"""A centered interval tree for stabbing and overlap queries."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Interval:
    start: float
    end: float
    label: str = ""

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"interval end {self.end} is before start {self.start}")

    def contains(self, point: float) -> bool:
        return self.start <= point <= self.end

    def overlaps(self, other: Interval) -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass
class _Node:
    center: float
    by_start: list[Interval] = field(default_factory=list)
    by_end: list[Interval] = field(default_factory=list)
    left: _Node | None = None
    right: _Node | None = None


class IntervalTree:
    def __init__(self, intervals: list[Interval]) -> None:
        self._size = len(intervals)
        self._root = self._build(sorted(intervals))

    def __len__(self) -> int:
        return self._size

    def _build(self, intervals: list[Interval]) -> _Node | None:
        if not intervals:
            return None
        points = sorted(p for iv in intervals for p in (iv.start, iv.end))
        center = points[len(points) // 2]
        left = [iv for iv in intervals if iv.end < center]
        right = [iv for iv in intervals if iv.start > center]
        here = [iv for iv in intervals if iv.contains(center)]
        node = _Node(center)
        node.by_start = sorted(here, key=lambda iv: iv.start)
        node.by_end = sorted(here, key=lambda iv: iv.end, reverse=True)
        node.left = self._build(left)
        node.right = self._build(right)
        return node

    def stab(self, point: float) -> list[Interval]:
        """All intervals that contain ``point``."""
        found: list[Interval] = []
        node = self._root
        while node is not None:
            if point < node.center:
                for iv in node.by_start:
                    if iv.start > point:
                        break
                    found.append(iv)
                node = node.left
            else:
                for iv in node.by_end:
                    if iv.end < point:
                        break
                    found.append(iv)
                node = node.right
        return sorted(found)

    def overlapping(self, query: Interval) -> list[Interval]:
        """All intervals that share at least one point with ``query``."""
        found: list[Interval] = []
        stack = [self._root]
        while stack:
            node = stack.pop()
            if node is None:
                continue
            found.extend(iv for iv in node.by_start if iv.overlaps(query))
            if query.start < node.center:
                stack.append(node.left)
            if query.end > node.center:
                stack.append(node.right)
        return sorted(found)


if __name__ == "__main__":
    meetings = [
        Interval(9.0, 10.5, "standup"),
        Interval(10.0, 11.0, "design review"),
        Interval(13.0, 14.0, "lunch talk"),
        Interval(13.5, 15.0, "interview"),
        Interval(16.0, 16.5, "retro"),
    ]
    tree = IntervalTree(meetings)
    print([iv.label for iv in tree.stab(10.25)])
    print([iv.label for iv in tree.overlapping(Interval(12.0, 13.75))])
