"""Crease orders: a design without a fold sequence gets an order of adding its crease lines,
every step flat-foldable through the crease action, or the reason it has none; MCQ items are
built on such designs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shredfold.origami import solve_layers
from shredfold.origami_bench import crease_order as co
from shredfold.origami_bench.crease_order import Budget, OrderBook, crease_lines, find_crease_order
from shredfold.origami_bench.design import Design
from shredfold.origami_bench.designs import builtin_designs, design_from_file
from shredfold.origami_bench.env import render_folded
from shredfold.origami_bench.mcq import StateCache, build_mcq, plan_mcq
from shredfold.store import Store

# small shared designs: a 9-line pleat that has an order, a 21-line sailboat that has none
PLEAT = "009_ku_Unassigned_Triangle_Pleat.fold"
SAILBOAT = "001_traditional_Sailboat.fold"


def builtin(name: str) -> Design:
    (d,) = [d for d in builtin_designs() if d.id == f"builtin/{name}"]
    return d.model_copy(update={"tier": "easy"})  # the catalogue gives tiers


def shared(shared_dir: Path, name: str) -> Design:
    path = shared_dir / "flat-folder" / "instagram" / name
    return design_from_file(path, "flat_folder").model_copy(update={"tier": "easy"})


def check_order(design: Design) -> co.CreaseOrder:
    """The order's every prefix folds flat (the layer solver says so again, on the replayed
    state) and the last one is the design's pattern."""
    order = find_crease_order(design)
    assert order.found, order.reason
    assert order.steps is not None and len(order.steps) >= 2
    states = co.replay_order(co.bare_sheet(design.pattern()), order.steps)
    assert len(states) == len(order.steps) + 1
    for st in states[1:]:
        assert st.flat_foldable and solve_layers(st.pattern, limit=1).satisfiable
    assert co.same_pattern(states[-1].pattern, design.pattern())
    assert not co.same_pattern(states[-2].pattern, design.pattern())
    # every crease line is added once
    added = sorted((tuple(a["start"]), tuple(a["end"])) for step in order.steps for a in step)
    lines = sorted((ln.start, ln.end) for ln in crease_lines(design.pattern()))
    assert added == lines
    return order


def test_the_waterbomb_base_is_creased_in_two_flat_steps() -> None:
    design = builtin("waterbomb-base")
    assert design.sequence is None
    lines = crease_lines(design.pattern())
    # two mountain diagonals through the centre, one valley midline
    assert sorted(ln.assignment for ln in lines) == ["M", "M", "V"]
    order = check_order(design)
    # no two of its lines fold flat together: one line, then the other two at once
    assert [len(s) for s in order.steps or ()] == [1, 2]


def test_a_shared_design_gets_an_order_of_single_lines(shared_dir: Path) -> None:
    order = check_order(shared(shared_dir, PLEAT))
    assert order.lines == 9 and all(len(s) == 1 for s in order.steps or ())


def test_the_order_is_deterministic() -> None:
    design = builtin("preliminary-base")
    a, b = find_crease_order(design), find_crease_order(design)
    assert a.steps == b.steps and (a.nodes, a.solves) == (b.nodes, b.solves)


def test_a_design_without_an_order_says_why(shared_dir: Path) -> None:
    sailboat = find_crease_order(shared(shared_dir, SAILBOAT))
    assert not sailboat.found and sailboat.reason.startswith("no order:")
    assert "21 lines" in sailboat.reason
    tiny = find_crease_order(shared(shared_dir, PLEAT), Budget(nodes=3))
    assert not tiny.found and tiny.reason == "budget: more than 3 candidate line sets examined"
    # a single line can only be added all at once, and that is no order
    book = builtin("book-fold").model_copy(update={"sequence": None})
    one = find_crease_order(book)
    assert not one.found and "1 lines" in one.reason


def test_orders_are_stored_by_design_key_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "store")
    design = builtin("waterbomb-base")
    first = OrderBook(store, write=True).get(design)
    monkeypatch.setattr(co, "find_crease_order", lambda *a, **k: pytest.fail("searched again"))
    again = OrderBook(store).get(design)
    assert again.steps == first.steps and OrderBook(store).known(design) is not None
    assert OrderBook(Store(tmp_path / "other")).known(design) is None


def test_mcq_items_build_on_a_flat_folder_design(shared_dir: Path) -> None:
    pleat = shared(shared_dir, PLEAT)
    designs = [pleat, *(d.model_copy(update={"tier": "easy"}) for d in builtin_designs()[:4])]
    orders = OrderBook()
    specs = plan_mcq(designs, "mcq_causal", 10, seed=3, size=64, orders=orders)
    mine = [s for s in specs if s.design.key == pleat.key]
    assert mine, "the Flat-Folder design takes part"
    # without crease orders the design is left out, as before
    assert all(s.design.key != pleat.key for s in plan_mcq(designs, "mcq_causal", 10, seed=3, size=64))
    cache = StateCache(orders)
    states = cache.prefixes(pleat)
    assert len(states) == 10  # the sheet and nine steps
    for s in mine[:2]:
        item = build_mcq(s, designs, 64, cache)
        assert item.kinds[s.answer] == "answer" and len(set(item.options)) == 4
        assert item.reference == render_folded(states[s.k], 64)
        assert item.options[s.answer] == render_folded(states[s.k + 1], 64)
        assert set(item.kinds) - {"answer"} <= {"later", "earlier", "other-assignment", "unrelated"}
    # the associative variant on designs that all lack a fold sequence
    bases = [pleat, builtin("waterbomb-base"), builtin("preliminary-base")]
    assoc = plan_mcq(bases, "mcq_assoc", 3, seed=0, size=64, orders=orders)
    assert {s.design.id for s in assoc} == {d.id for d in bases}
    (on_pleat,) = [s for s in assoc if s.design.key == pleat.key]
    item = build_mcq(on_pleat, bases, 64, cache)
    assert item.kinds.count("answer") == 1 and set(item.kinds) == {"answer", "unrelated"}
    assert len(set(item.options)) == 4


def test_crease_lines_join_collinear_creases_of_one_assignment(shared_dir: Path) -> None:
    pattern = shared(shared_dir, SAILBOAT).pattern()
    lines = crease_lines(pattern)
    creases = np.flatnonzero(pattern.assignments != "B")
    assert sorted(e for ln in lines for e in ln.edges) == creases.tolist()
    for ln in lines:
        a, b = np.array(ln.start), np.array(ln.end)
        d = (b - a) / np.hypot(*(b - a))
        pts = pattern.vertices[list(ln.vertices)] - a
        assert np.abs(pts[:, 0] * d[1] - pts[:, 1] * d[0]).max() < 1e-9  # straight
        assert {pattern.assignments[e] for e in ln.edges} == {ln.assignment}


def test_the_vertex_filter_never_rejects_what_the_local_checks_pass(shared_dir: Path) -> None:
    """Over every subset of a small design's lines, the search's filter and the engine's
    local checks agree (the filter only spares the solver; it must not lose an order)."""
    from shredfold.origami import check_local

    pattern = shared(shared_dir, "244_komatsuoripa_Smallbird_Base.fold").pattern()
    lines = crease_lines(pattern)
    vf = co._VertexFilter(pattern, lines)
    passed = 0
    for bits in range(1, 2 ** len(lines)):
        present = np.array([(bits >> i) & 1 for i in range(len(lines))], bool)
        local_ok = check_local(co.subpattern(pattern, lines, present)).ok
        filter_ok = not any(vf.bad(x, present) for x in range(len(pattern.vertices)))
        assert filter_ok == local_ok, present
        passed += local_ok
    assert passed == 4  # three proper subsets and the whole design


def test_a_design_whose_only_flat_subset_is_the_whole_has_no_order(shared_dir: Path) -> None:
    # the traditional "cheating boat": no proper subset of its 11 lines passes the local
    # checks (checked over all 2046), so the search is exhausted at once
    order = find_crease_order(shared(shared_dir, "067_traditionaloripa_damashi_bune.fold"))
    assert not order.found and order.reason.startswith("no order:") and order.solves == 0
