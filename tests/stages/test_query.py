"""The query stage over real HTTP: each request is paid for once, failures are retried later."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shredfold.calls import RESPONSE_STAGE
from shredfold.models.asker import ReplayOnlyError
from shredfold.models.endpoints import endpoint_limits, endpoint_resource
from shredfold.models.openai_compat import MissingApiKeyError
from shredfold.plan import Plan, make_plan, resolve_attempts
from shredfold.resolve import load_spec
from shredfold.serve import ChatServer, answered_twice, read_log
from shredfold.spec import ModelConfig
from shredfold.stages.query import run_query
from shredfold.store import Store
from tests.models.samples import ITEMS, http_model, write_model, write_spec


def plan_for(work: Path, url: str, **over: object) -> Plan:
    write_model(work, "oracle-http", **http_model(url, **over))
    return make_plan(load_spec(write_spec(work, ["oracle-http"])))


def query_all(plan: Plan, work: Path, **kwargs: object) -> list[dict]:
    """Run every cell of the plan; return the manifests."""
    store = Store(work / "results" / "store")
    out = []
    for cell in plan.cells:
        path = work / cell.query_path
        run_query(plan, cell.query_key, cell.query_where, str(path), store, **kwargs)  # type: ignore[arg-type]
        out.append(json.loads(path.read_text()))
    return out


def requests_seen(server: ChatServer) -> list[dict]:
    assert server.wait_idle()
    assert server.log_path is not None
    return read_log(server.log_path)


def test_every_answer_is_stored_once_and_a_rerun_makes_no_call(work, oracle) -> None:
    server = oracle()
    plan = plan_for(work, server.url)
    first = query_all(plan, work)
    assert [m["called"] for m in first] == [2, 2] and all(m["errors"] == 0 for m in first)
    store = Store(work / "results" / "store")
    assert len(list(store.keys(RESPONSE_STAGE))) == 4
    answer = store.get_json(RESPONSE_STAGE, first[0]["items"][0]["response"])["response"]
    assert answer["text"] and answer["input_tokens"] > 0 and answer["cost_usd"] > 0

    second = query_all(plan, work)
    assert [m["cached"] for m in second] == [2, 2]
    assert len(requests_seen(server)) == 4  # the rerun asked nothing


def test_the_same_question_from_another_spec_is_not_asked_again(work, oracle) -> None:
    server = oracle()
    query_all(plan_for(work, server.url), work)
    # Another model file and port, same endpoint model and decoding: the same requests.
    write_model(work, "same-model-elsewhere", **http_model("http://127.0.0.1:1/v1", max_concurrency=2))
    other = make_plan(load_spec(write_spec(work, ["same-model-elsewhere"], "other.yaml")))
    assert [m["cached"] for m in query_all(other, work)] == [2, 2]
    assert len(requests_seen(server)) == 4


def test_calls_within_a_cell_run_concurrently_up_to_the_limit(work, oracle) -> None:
    server = oracle(delay_s=0.3)
    query_all(plan_for(work, server.url, max_concurrency=2), work)
    assert max(e["in_flight"] for e in requests_seen(server)) == 2


def test_failed_calls_are_errors_not_answers_and_are_asked_again(work, oracle) -> None:
    failing = oracle(faults="500*")
    plan = plan_for(work, failing.url, max_attempts=2)
    manifests = query_all(plan, work)
    rows = [row for m in manifests for row in m["items"]]
    assert len(rows) == ITEMS  # all() over no rows would pass
    assert all(r["response"] is None and "after 2 attempt(s): HTTP 500" in r["error"] for r in rows)
    assert list(Store(work / "results" / "store").keys(RESPONSE_STAGE)) == []
    assert len(requests_seen(failing)) == 8

    healthy = oracle()
    plan = plan_for(work, healthy.url, max_attempts=2)
    assert [m["called"] for m in query_all(plan, work)] == [2, 2]
    assert not answered_twice(requests_seen(failing) + requests_seen(healthy))


def test_replay_only_fails_before_any_call(work, oracle, monkeypatch) -> None:
    server = oracle()
    plan = plan_for(work, server.url)
    monkeypatch.setenv("SHREDFOLD_REPLAY_ONLY", "1")
    with pytest.raises(ReplayOnlyError, match="2 of 2 item"):
        query_all(plan, work)
    assert requests_seen(server) == []
    query_all(plan, work, replay_only=False)
    assert [m["cached"] for m in query_all(plan, work)] == [2, 2]  # a full cache replays


def test_a_missing_api_key_fails_the_job_before_any_call(work, oracle, monkeypatch) -> None:
    server = oracle()
    monkeypatch.delenv("SHREDFOLD_ABSENT_API_KEY", raising=False)
    plan = plan_for(work, server.url, api_key_env="SHREDFOLD_ABSENT_API_KEY")
    with pytest.raises(MissingApiKeyError, match="SHREDFOLD_ABSENT_API_KEY"):
        query_all(plan, work)
    assert requests_seen(server) == []


def test_a_cell_with_errors_moves_to_a_new_attempt(work, oracle) -> None:
    failing = oracle(faults="500*")
    plan = plan_for(work, failing.url, max_attempts=1)
    assert [c.attempt for c in resolve_attempts(plan, work).cells] == [0, 0]  # nothing run yet
    query_all(plan, work)

    retry = resolve_attempts(plan, work)
    assert [c.attempt for c in retry.cells] == [1, 1]
    assert retry.cells[0].query_path.endswith(f"{plan.cells[0].query_key}-r1.json")
    assert retry.cells[0].score_path.endswith(f"{plan.cells[0].score_key}-r1.parquet")
    assert retry.cells[0].query_key == plan.cells[0].query_key  # same content, new attempt

    healthy = oracle()
    retry = resolve_attempts(plan_for(work, healthy.url), work)
    query_all(retry, work)
    settled = resolve_attempts(retry, work)
    assert [c.attempt for c in settled.cells] == [1, 1]  # no errors left: stays put


def test_each_endpoint_is_a_snakemake_resource_with_the_strictest_slots() -> None:
    a = ModelConfig(id="a", base_url="https://api.example.com/v1", model="m", endpoint_slots=3)
    b = ModelConfig(id="b", base_url="https://api.example.com/v1/", model="n", endpoint_slots=2)
    c = ModelConfig(id="c", base_url="http://127.0.0.1:8001/v1", model="m")
    assert endpoint_resource(a) == endpoint_resource(b) == "endpoint_api_example_com"
    assert endpoint_resource(ModelConfig(id="oracle", adapter="oracle")) is None
    assert endpoint_limits([a, b, c]) == {"endpoint_api_example_com": 2, "endpoint_127_0_0_1_8001": 1}
