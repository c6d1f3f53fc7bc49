"""An HTTP 200 whose body cannot be read was billed by a paying provider: it is asked again
only as often as the model file says (``retry_malformed``, default once), and every such 200
is in the spend ledger at its worst case — over real HTTP, `shredfold serve` on loopback."""

from __future__ import annotations

import pytest

from shredfold.models.budget import SpendLedger, ledger_path
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.serve import read_log
from shredfold.store import Store
from tests.models.samples import ITEMS, http_model, write_model, write_spec
from tests.stages.conftest import query_all

MAX_TOKENS, PRICE_OUT = 4096, 4.0
WORST = MAX_TOKENS * PRICE_OUT / 1e6  # input is free: a call's worst case is exact


def run(work, server, **over):
    fields = {"price_input_per_mtok": 0.0, "price_output_per_mtok": PRICE_OUT, "max_concurrency": 1,
              "decoding": {"max_tokens": MAX_TOKENS}, "max_attempts": 3, "backoff_s": 0.0, **over}  # fmt: skip
    write_model(work, "oracle-http", **http_model(server.url, **fields))
    rows = [r for m in query_all(make_plan(load_spec(write_spec(work, ["oracle-http"]))), work) for r in m["items"]]
    assert server.wait_idle() and server.log_path is not None
    entries = read_log(server.log_path)
    ledger = [line for line in SpendLedger(ledger_path(Store(work / "results" / "store"), "oracle-http")).path.read_text().splitlines()]
    return rows, entries, ledger


@pytest.mark.parametrize("fault", ["malformed", "no-choices", "truncate"])
def test_an_unreadable_200_is_asked_again_once_and_both_are_in_the_ledger(work, oracle, fault) -> None:
    server = oracle(faults=fault)  # every body: first arrival unreadable, then answered
    rows, entries, ledger = run(work, server)
    assert all(r["error"] is None for r in rows) and len(rows) == ITEMS
    assert sorted(e["fault"] for e in entries) == sorted([fault] * ITEMS + ["ok"] * ITEMS)
    spend = SpendLedger(ledger_path(Store(work / "results" / "store"), "oracle-http")).spend()
    # no budget in the model file, and still every call is recorded: 2 per item
    assert sum('"op": "reserve"' in line for line in ledger) == 2 * ITEMS and spend.reserved == 0
    answered = sum(Store(work / "results" / "store").get_json("response", r["response"])["response"]["cost_usd"] for r in rows)
    assert spend.settled == pytest.approx(ITEMS * WORST + answered)


def test_retry_malformed_is_the_model_files_choice(work, oracle) -> None:
    server = oracle(faults="malformed,malformed")
    rows, entries, ledger = run(work, server)  # default: once, so both arrivals fail
    assert len(rows) == ITEMS and all("malformed body (HTTP 200)" in r["error"] and "retry_malformed is 1" in r["error"] for r in rows)
    assert len(entries) == 2 * ITEMS
    spend = SpendLedger(ledger_path(Store(work / "results" / "store"), "oracle-http")).spend()
    assert spend.settled == pytest.approx(2 * ITEMS * WORST)

    server = oracle(faults="malformed")
    rows, entries, _ = run(work, server, retry_malformed=0)  # never ask again after a billed 200
    assert len(rows) == ITEMS and all("malformed body (HTTP 200)" in r["error"] for r in rows) and len(entries) == ITEMS
