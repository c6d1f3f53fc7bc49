"""A model's budget over real HTTP (`shredfold serve --model oracle` on loopback): it stops the
calls that would exceed it, the rest are errors naming it, and raising it resumes exactly
there; the budget changes no key."""

from __future__ import annotations

from pathlib import Path

import pytest

from shredfold.calls import RESPONSE_STAGE
from shredfold.cost import estimate
from shredfold.models.budget import SpendLedger, ledger_path
from shredfold.plan import Plan, load_plan, make_plan, write_plan
from shredfold.resolve import load_spec
from shredfold.serve import ChatServer, read_log
from shredfold.store import Store
from tests.models.samples import (
    ITEMS,
    http_model,
    new_workdir,
    write_model,
    write_spec,
)
from tests.stages.conftest import query_all

MAX_TOKENS = 4096
PRICE_OUT = 4.0  # $ per million output tokens; input is free, so a call's worst case is exact:
WORST = MAX_TOKENS * PRICE_OUT / 1e6  # max_tokens at the output price




def plan_for(work: Path, url: str, **over: object) -> Plan:
    fields = {"price_input_per_mtok": 0.0, "price_output_per_mtok": PRICE_OUT,
              "decoding": {"max_tokens": MAX_TOKENS}, "max_concurrency": 1, **over}  # fmt: skip
    write_model(work, "oracle-http", **http_model(url, **fields))
    return make_plan(load_spec(write_spec(work, ["oracle-http"])))


def items(manifests: list[dict]) -> list[dict]:
    return [row for m in manifests for row in m["items"]]


def asked(server: ChatServer) -> int:
    assert server.wait_idle() and server.log_path is not None
    return len(read_log(server.log_path))


def real_costs(samples: Path, tmp_path: Path, url: str) -> list[float]:
    """What each item costs at the server, in the order the cells ask them (a run without a
    budget in a separate working directory)."""
    ref = new_workdir(samples, tmp_path / "reference")
    rows = items(query_all(plan_for(ref, url), ref))
    store = Store(ref / "results" / "store")
    return [store.get_json(RESPONSE_STAGE, r["response"])["response"]["cost_usd"] for r in rows]


def test_a_budget_that_affords_k_items_lets_exactly_k_calls_through(samples, work, oracle, tmp_path) -> None:
    server = oracle()
    costs = real_costs(samples, tmp_path, server.url)
    assert len(costs) == ITEMS and all(0 < c < WORST for c in costs)
    reference_calls = asked(server)
    k = 3
    # Call j is allowed while (what was spent before it) + WORST <= budget: the k-th fits,
    # the (k+1)-th is short by half the k-th item's real cost.
    budget = sum(costs[: k - 1]) + WORST + costs[k - 1] / 2
    first = items(query_all(plan_for(work, server.url, budget_usd=budget), work))

    assert asked(server) - reference_calls == k
    assert [r["error"] is None for r in first] == [True] * k + [False] * (ITEMS - k)
    assert all("budget_usd" in r["error"] and r["response"] is None for r in first[k:])
    assert len(list(Store(work / "results" / "store").keys(RESPONSE_STAGE))) == k  # errors are not answers
    spent = SpendLedger(ledger_path(Store(work / "results" / "store"), "oracle-http")).spend()
    assert spent.reserved == 0 and spent.settled == pytest.approx(sum(costs[:k]))
    bill = estimate(plan_for(work, server.url, budget_usd=budget), Store(work / "results" / "store"))
    assert (bill.models[0].budget_usd, bill.models[0].spent_usd) == (budget, pytest.approx(sum(costs[:k])))

    # Raising the budget asks only the rest; what was bought comes from the cache.
    again = items(query_all(plan_for(work, server.url, budget_usd=1.0), work))
    assert asked(server) - reference_calls == ITEMS
    assert [r["error"] for r in again] == [None] * ITEMS
    assert [r["cached"] for r in again] == [True] * k + [False] * (ITEMS - k)
    assert [r["response"] for r in again[:k]] == [r["response"] for r in first[:k]]


def test_the_budget_is_no_part_of_any_key(work) -> None:
    url = "http://127.0.0.1:9/v1"
    plain, capped = plan_for(work, url), plan_for(work, url, budget_usd=0.5)
    assert plain.identities == capped.identities
    assert [(c.query_key, c.score_key) for c in plain.cells] == [(c.query_key, c.score_key) for c in capped.cells]
    # ... yet a job, which loads the plan Snakemake wrote, applies it.
    job = load_plan(work / write_plan(capped, work))
    assert {c.model.budget_usd for c in job.cells} == {0.5}


def test_calls_in_flight_count_against_the_budget(samples, work, oracle, tmp_path) -> None:
    server = oracle()
    costs = real_costs(samples, tmp_path, server.url)
    before = asked(server)
    # Room for one worst case and less than any real cost more: whether the others are asked
    # while the first is in flight (its reservation counts) or after it (its cost counts),
    # exactly one call fits, however the threads interleave.
    budget = WORST + min(costs) / 2
    rows = items(query_all(plan_for(work, server.url, budget_usd=budget, max_concurrency=4), work))
    assert asked(server) - before == 1
    assert sum(r["error"] is None for r in rows) == 1
    assert all("budget_usd" in r["error"] for r in rows if r["error"] is not None)
    spent = SpendLedger(ledger_path(Store(work / "results" / "store"), "oracle-http")).spend()
    assert spent.reserved == 0 and spent.total <= budget
