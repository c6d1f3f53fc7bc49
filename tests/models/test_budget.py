"""The spend ledger: check-and-reserve is atomic across processes, reservations count until
settled, a crash leaves them counted, and a torn line costs nothing but itself."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from shredfold.calls import Message, ModelCallError, Request, Response
from shredfold.models.budget import Budget, BudgetExceededError, SpendLedger, ledger_path
from shredfold.spec import ModelConfig
from shredfold.store import Store


def test_a_reservation_counts_until_it_is_settled_at_the_real_cost(tmp_path: Path) -> None:
    ledger = SpendLedger(tmp_path / "m.jsonl")
    ticket, before = ledger.reserve(0.5, cap=1.0)
    assert ticket is not None and before.total == 0
    assert ledger.spend().reserved == 0.5
    assert ledger.reserve(0.6, cap=1.0)[0] is None  # 0.5 reserved + 0.6 > 1.0
    ledger.settle(ticket, 0.1)
    assert ledger.spend().settled == pytest.approx(0.1) and ledger.spend().reserved == 0
    assert ledger.reserve(0.6, cap=1.0)[0] is not None  # the real cost freed the rest


def test_a_crash_leaves_its_reservation_counted(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    SpendLedger(path).reserve(0.7, cap=1.0)  # then the process "dies": never settled
    other = SpendLedger(path)  # another job, later
    assert other.spend().total == pytest.approx(0.7)
    assert other.reserve(0.4, cap=1.0)[0] is None


def test_a_torn_last_line_is_skipped_and_the_ledger_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    ledger = SpendLedger(path)
    ledger.settle(ledger.reserve(0.2, cap=1.0)[0] or "", 0.2)
    with open(path, "ab") as fh:
        fh.write(b'{"op": "reserve", "id": "x", "us')  # a writer killed mid-line
    fresh = SpendLedger(path)
    assert fresh.spend().total == pytest.approx(0.2)
    fresh.settle(fresh.reserve(0.3, cap=1.0)[0] or "", 0.3)
    assert SpendLedger(path).spend().total == pytest.approx(0.5)
    torn, *rest = [line for line in path.read_bytes().splitlines() if b'"usd"' not in line]
    assert torn.endswith(b'"us') and rest == []  # ended by a newline, the only odd line
    assert [json.loads(line)["op"] for line in path.read_bytes().splitlines() if line != torn] == [
        "reserve", "settle", "reserve", "settle"]


def _reserve_many(path: str, attempts: int) -> int:
    ledger = SpendLedger(path)
    return sum(ledger.reserve(1.0, cap=7.0)[0] is not None for _ in range(attempts))


def test_parallel_processes_never_reserve_past_the_cap(tmp_path: Path) -> None:
    path = str(tmp_path / "m.jsonl")
    with multiprocessing.get_context("fork").Pool(4) as pool:
        granted = pool.starmap(_reserve_many, [(path, 10)] * 4)
    assert sum(granted) == 7
    assert SpendLedger(path).spend().total == pytest.approx(7.0)


def test_peek_reads_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "none" / "m.jsonl"
    assert SpendLedger(path).peek().total == 0 and not path.parent.exists()


def _config(**over: object) -> ModelConfig:
    return ModelConfig.model_validate({
        "id": "m", "base_url": "http://127.0.0.1:1/v1", "model": "x",
        "price_input_per_mtok": 0.0, "price_output_per_mtok": 1.0,
        "decoding": {"max_tokens": 1000}, "budget_usd": 0.0025, **over,
    })  # fmt: skip


REQUEST = Request(template="t/v1", messages=(Message(role="user", text="hi"),))


def test_a_budget_reserves_the_worst_case_and_stops_for_good(tmp_path: Path) -> None:
    budget = Budget.of(_config(), Store(tmp_path))
    assert budget is not None
    first = budget.reserve(REQUEST, "k1")
    assert first.worst_usd == pytest.approx(1000 / 1e6)  # no input price; max_tokens out
    budget.settle(first, Response(text="a", cost_usd=0.0002))
    second = budget.reserve(REQUEST, "k2")
    # A refused call: an HTTP error status is not billed ...
    budget.failed(second, ModelCallError("HTTP 400", status=400))
    third = budget.reserve(REQUEST, "k3")
    # ... a timeout may have been: it keeps its worst case.
    budget.failed(third, ModelCallError("timeout", transient=True))
    assert budget.ledger.spend().total == pytest.approx(0.0002 + 0.001)
    fourth = budget.reserve(REQUEST, "k4")  # 0.0012 + 0.001 fits in 0.0025
    with pytest.raises(BudgetExceededError, match=r"budget_usd \$0.0025"):
        budget.reserve(REQUEST, "k5")  # 0.0022 + 0.001 would not
    budget.failed(fourth, ModelCallError("HTTP 500", status=500))  # room again, but ...
    with pytest.raises(BudgetExceededError, match="budget_usd"):
        budget.reserve(REQUEST, "k6")  # ... the job has stopped calling this model
    assert SpendLedger(ledger_path(Store(tmp_path), "m")).spend().total == pytest.approx(0.0012)


def test_free_models_keep_no_ledger_and_priced_ones_without_a_budget_record_without_a_cap(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert Budget.of(_config(price_output_per_mtok=0.0), store) is None
    assert not (tmp_path / ".spend").exists()
    uncapped = Budget.of(_config(budget_usd=None), store)
    assert uncapped is not None
    for k in range(50):  # however much: recorded, never refused
        uncapped.settle(uncapped.reserve(REQUEST, f"k{k}"), Response(text="x", cost_usd=1.0))
    assert SpendLedger(ledger_path(store, "m")).spend().settled == pytest.approx(50.0)
