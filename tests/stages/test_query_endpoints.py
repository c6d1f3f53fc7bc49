"""The query stage against two servers: answers are shared between endpoints only when the
model files say so, and an API key a server echoes never reaches a manifest, the store or a log."""

from __future__ import annotations

import logging
from pathlib import Path

from shredfold.models.secrets import MIN_PREFIX
from shredfold.plan import Plan, make_plan
from shredfold.resolve import load_spec
from shredfold.serve import ChatServer, read_log
from tests.models.samples import http_model, write_model, write_spec
from tests.stages.conftest import query_all


def plan_for(work: Path, model_id: str, url: str, **over: object) -> Plan:
    write_model(work, model_id, **http_model(url, **over))
    return make_plan(load_spec(write_spec(work, [model_id], f"{model_id}.yaml")))


def asked(server: ChatServer) -> int:
    assert server.wait_idle() and server.log_path is not None
    return len(read_log(server.log_path))


def test_two_servers_with_the_same_model_name_do_not_share_answers(work, oracle) -> None:
    provider, local = oracle(), oracle()
    query_all(plan_for(work, "qwen-provider", provider.url, cache_scope=None), work)
    # Another server exposing the same model name, decoding and image handling: asked anew.
    again = query_all(plan_for(work, "qwen-local", local.url, cache_scope=None), work)
    assert [m["called"] for m in again] == [2, 2] and asked(local) == 4
    # Declared interchangeable (one cache scope in both files): the second one asks nothing.
    query_all(plan_for(work, "scoped-a", provider.url, cache_scope="qwen"), work)
    shared = query_all(plan_for(work, "scoped-b", local.url, cache_scope="qwen"), work)
    assert [m["cached"] for m in shared] == [2, 2] and asked(local) == 4


def test_a_key_echoed_across_the_error_cut_reaches_no_file_or_log(work, oracle, monkeypatch, caplog) -> None:
    # `shredfold serve --api-key-env` echoes a wrong key in its 401 body, about 40 characters
    # in; a long key runs across the adapter's 300-character excerpt.
    key = "sk-PROBE-" + "0123456789abcdef" * 25
    monkeypatch.setenv("SHREDFOLD_LONG_API_KEY", key)
    server = oracle(api_key="sk-the-right-one")
    caplog.set_level(logging.DEBUG)
    manifests = query_all(plan_for(work, "probe", server.url, api_key_env="SHREDFOLD_LONG_API_KEY"), work)
    errors = [row["error"] for m in manifests for row in m["items"]]
    assert len(errors) == 4 and all("HTTP 401" in e and "***" in e for e in errors)
    start = key[:MIN_PREFIX].encode()
    assert [p for p in work.rglob("*") if p.is_file() and start in p.read_bytes()] == []
    assert key[:MIN_PREFIX] not in caplog.text
