"""Counting layer orders of one component: enumeration for few, decomposition for many."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from shredfold.origami import states
from shredfold.origami.states import enumerate_orders, solve_component


def brute_force(n: int, clauses: list[list[int]]) -> int:
    count = 0
    for bits in itertools.product((False, True), repeat=n):
        if all(any(bits[abs(x) - 1] == (x > 0) for x in c) for c in clauses):
            count += 1
    return count


def random_cnf(seed: int, n: int, m: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(m):
        k = int(rng.integers(2, 4))
        vs = rng.choice(n, size=k, replace=False) + 1
        out.append([int(v) if rng.random() < 0.5 else -int(v) for v in vs])
    return out


def satisfies(values: np.ndarray, clauses: list[list[int]]) -> bool:
    return all(any((values[abs(x) - 1] == 1) == (x > 0) for x in c) for c in clauses)


@pytest.mark.parametrize("small_split", [0, 10**9], ids=["numpy-split", "python-split"])
@pytest.mark.parametrize("seed", range(12))
def test_counts_agree_with_brute_force_with_and_without_a_limit(seed, small_split, monkeypatch):
    # no enumeration budget and no minimum: everything past the first solution goes
    # through the search
    monkeypatch.setattr(states, "ENUMERATE_SECONDS", 0.0)
    monkeypatch.setattr(states, "ENUMERATE_MIN", 0)
    monkeypatch.setattr(states, "SMALL_SPLIT", small_split)
    n = 13
    clauses = random_cnf(seed, n, m=8 + seed)
    exact = brute_force(n, clauses)
    count, values = solve_component(n, clauses, None, None)
    assert count == exact
    if exact:
        assert values is not None and satisfies(values, clauses)
    capped, _ = solve_component(n, clauses, 100, None)
    assert capped == min(exact, 100)


@pytest.mark.parametrize("small_split", [0, 10**9], ids=["numpy-split", "python-split"])
def test_independent_parts_multiply_without_visiting_every_solution(small_split, monkeypatch):
    monkeypatch.setattr(states, "ENUMERATE_SECONDS", 0.0)
    monkeypatch.setattr(states, "ENUMERATE_MIN", 0)
    monkeypatch.setattr(states, "SMALL_SPLIT", small_split)
    # 20 independent "exactly one of two" pairs: 2**20 solutions, counted by decomposition
    clauses = [c for i in range(20) for c in ([2 * i + 1, 2 * i + 2], [-(2 * i + 1), -(2 * i + 2)])]
    count, values = solve_component(40, clauses, None, None)
    assert count == 2**20
    assert values is not None and satisfies(values, clauses)
    assert solve_component(40, clauses, 10000, None)[0] == 10000


def test_unsatisfiable_component_has_no_order():
    assert solve_component(2, [[1], [-1, 2], [-2]], None, None) == (0, None)


def test_variables_read_by_no_clause_take_both_values():
    count, values = solve_component(3, [], None, None)
    assert count == 8 and values is not None and len(values) == 3
    assert solve_component(3, [], 5, None)[0] == 5


@pytest.mark.parametrize("seed", range(4))
def test_deep_searches_finish_by_enumeration_with_the_same_count(seed, monkeypatch):
    monkeypatch.setattr(states, "ENUMERATE_SECONDS", 0.0)
    monkeypatch.setattr(states, "ENUMERATE_MIN", 0)
    monkeypatch.setattr(states, "MAX_DEPTH", 1)
    clauses = random_cnf(100 + seed, 12, m=10)
    assert solve_component(12, clauses, None, None)[0] == brute_force(12, clauses)


@pytest.mark.parametrize("small_split", [0, 10**9], ids=["numpy-split", "python-split"])
def test_a_capped_count_still_needs_every_later_part_satisfiable(small_split, monkeypatch):
    monkeypatch.setattr(states, "ENUMERATE_SECONDS", 0.0)
    monkeypatch.setattr(states, "ENUMERATE_MIN", 0)
    monkeypatch.setattr(states, "SMALL_SPLIT", small_split)
    # a = 1 is the most constrained variable, so the search branches on it first. With
    # a true, c1..c4 are free (16 orders, past the cap) and b1, b2 form a separate part with
    # no solution that unit propagation alone cannot see; with a false everything is forced.
    # The one solution is a = b = c = false, whatever the cap.
    a, c, b = 1, [2, 3, 4, 5], [6, 7]
    clauses = [[-a, s1 * b[0], s2 * b[1]] for s1 in (1, -1) for s2 in (1, -1)]
    clauses += [[a, -v] for v in c + b]
    assert brute_force(7, clauses) == 1
    for limit in (None, 10, 2):
        count, values = solve_component(7, clauses, limit, None)
        assert count == 1, limit
        assert values is not None and satisfies(values, clauses)


@pytest.mark.parametrize("enumerate_seconds", [0.0, 10.0], ids=["search", "enumeration"])
def test_a_valid_preferred_order_comes_back_whole(enumerate_seconds, monkeypatch):
    monkeypatch.setattr(states, "ENUMERATE_SECONDS", enumerate_seconds)
    # 6 "exactly one of two" pairs: any choice per pair is valid, so the preference decides
    clauses = [c for i in range(6) for c in ([2 * i + 1, 2 * i + 2], [-(2 * i + 1), -(2 * i + 2)])]
    for first in itertools.product((1, 2), repeat=6):
        prefer = np.array([v for f in first for v in (f, 3 - f)], np.int8)
        count, values = solve_component(12, clauses, None, None, prefer=prefer)
        assert count == 2**6
        assert values.tolist() == prefer.tolist()


def test_a_preference_for_unconstrained_variables_is_followed_where_given():
    count, values = solve_component(3, [], None, None, prefer=np.array([2, 0, 1], np.int8))
    assert count == 8 and values.tolist() == [2, 1, 1]
    assert solve_component(3, [], None, None)[1].tolist() == [1, 1, 1]


def exactly_one_of_pairs(k: int) -> list[list[int]]:
    """k independent "exactly one of two" pairs: 2**k solutions, any choice per pair."""
    return [c for i in range(k) for c in ([2 * i + 1, 2 * i + 2], [-(2 * i + 1), -(2 * i + 2)])]


@pytest.mark.parametrize("limit", [1, 5, 16])
def test_an_enumerated_count_stops_at_the_limit(limit):
    # 64 solutions; below ENUMERATE_MIN the enumeration alone answers, and stops at the limit
    count, values = solve_component(12, exactly_one_of_pairs(6), limit, None)
    assert count == limit
    assert satisfies(values, exactly_one_of_pairs(6))


def test_enumeration_out_of_time_keeps_the_first_solution_and_says_it_is_incomplete():
    found, complete = enumerate_orders(12, exactly_one_of_pairs(6), None, None, budget=0.0)
    assert (len(found), complete) == (1, False)
    assert satisfies(found[0], exactly_one_of_pairs(6))


def test_enumeration_with_time_to_spare_finds_every_solution():
    found, complete = enumerate_orders(12, exactly_one_of_pairs(6), None, None, budget=600.0)
    assert complete and len(found) == 64
    assert len({tuple(v.tolist()) for v in found}) == 64


def test_a_preference_of_zero_leaves_the_choice_to_the_solver():
    clauses = exactly_one_of_pairs(6)
    free = solve_component(12, clauses, None, None)
    count, values = solve_component(12, clauses, None, None, prefer=np.zeros(12, np.int8))
    assert count == free[0] == 64
    assert values.tolist() == free[1].tolist()
