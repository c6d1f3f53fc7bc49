"""Breadth-first, Dijkstra and A* search on a small weighted grid graph."""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterator

Cell = tuple[int, int]

GRID = """
S..#......
.#.#.####.
.#...#....
.####.#.#.
......#.#G
""".strip().splitlines()


def find(symbol: str) -> Cell:
    for r, row in enumerate(GRID):
        c = row.find(symbol)
        if c >= 0:
            return r, c
    raise KeyError(symbol)


def neighbors(cell: Cell) -> Iterator[tuple[Cell, int]]:
    r, c = cell
    for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        nr, nc = r + dr, c + dc
        if 0 <= nr < len(GRID) and 0 <= nc < len(GRID[nr]) and GRID[nr][nc] != "#":
            # Moving down or up costs more, as if climbing a slope.
            yield (nr, nc), 2 if dr else 1


def rebuild(parent: dict[Cell, Cell | None], goal: Cell) -> list[Cell]:
    path: list[Cell] = []
    node: Cell | None = goal
    while node is not None:
        path.append(node)
        node = parent[node]
    return path[::-1]


def bfs(start: Cell, goal: Cell) -> list[Cell]:
    parent: dict[Cell, Cell | None] = {start: None}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell == goal:
            return rebuild(parent, goal)
        for nxt, _ in neighbors(cell):
            if nxt not in parent:
                parent[nxt] = cell
                queue.append(nxt)
    return []


def manhattan(a: Cell, b: Cell) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def astar(start: Cell, goal: Cell, guided: bool = True) -> tuple[int, list[Cell]]:
    """Cheapest path; with ``guided=False`` this is Dijkstra's algorithm."""
    best: dict[Cell, int] = {start: 0}
    parent: dict[Cell, Cell | None] = {start: None}
    frontier = [(0, 0, start)]
    while frontier:
        _, cost, cell = heapq.heappop(frontier)
        if cell == goal:
            return cost, rebuild(parent, goal)
        if cost > best[cell]:
            continue
        for nxt, step in neighbors(cell):
            new_cost = cost + step
            if new_cost < best.get(nxt, 1 << 30):
                best[nxt] = new_cost
                parent[nxt] = cell
                guess = manhattan(nxt, goal) if guided else 0
                heapq.heappush(frontier, (new_cost + guess, new_cost, nxt))
    return -1, []


def draw(path: list[Cell]) -> str:
    rows = [list(row) for row in GRID]
    for r, c in path[1:-1]:
        rows[r][c] = "*"
    return "\n".join("".join(row) for row in rows)


if __name__ == "__main__":
    start, goal = find("S"), find("G")
    print("bfs steps:", len(bfs(start, goal)) - 1)
    cost, path = astar(start, goal)
    print("a* cost:", cost, "dijkstra cost:", astar(start, goal, False)[0])
    print(draw(path))
