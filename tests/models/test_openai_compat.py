"""The OpenAI-compatible adapter against `shredfold serve` on loopback, faults included."""

from __future__ import annotations

import io
import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from PIL import Image

from shredfold.calls import ModelCallError, Request
from shredfold.chat_api import ChatRequest
from shredfold.models.openai_compat import MissingApiKeyError, OpenAICompatible
from shredfold.serve import answered_twice, read_log
from shredfold.serve.templates import to_request
from shredfold.shred.prompts import build_request
from shredfold.spec import ModelConfig


def png(color: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def config(url: str = "http://127.0.0.1:9/v1", **over: object) -> ModelConfig:
    fields: dict[str, object] = {
        "id": "echo-http",
        "base_url": url,
        "model": "echo",
        "timeout_s": 2.0,
        "max_attempts": 4,
        "backoff_s": 0.02,
    }
    fields.update(over)
    return ModelConfig.model_validate(fields)


def request(i: int = 0, n: int = 2) -> Request:
    images = [png((i % 256, k * 40, 200)) for k in range(n)]
    return build_request(kind="code", lang="en", n=n, images=images, composite=False, item=f"{i:064x}")


def log_of(server) -> list[dict]:
    # A request's line is written just after its reply, so let the handlers finish first.
    assert server.wait_idle(timeout=10)
    return read_log(server.log_path)


# ---------------------------------------------------------------- the request body


def test_images_travel_as_data_urls_and_come_back_as_the_same_request() -> None:
    adapter = OpenAICompatible(config(images={"detail": "high", "max_side": 1600}))
    req = request(n=3)
    body = adapter.body(req)
    system, user = body["messages"]
    assert system == {"role": "system", "content": req.messages[0].text}
    assert user["content"][0] == {"type": "text", "text": req.messages[1].text}
    urls = [p["image_url"]["url"] for p in user["content"][1:]]
    assert len(urls) == 3 and all(u.startswith("data:image/png;base64,") for u in urls)
    assert {p["image_url"]["detail"] for p in user["content"][1:]} == {"high"}
    assert "item" not in json.dumps(body) and "shredfold" not in json.dumps(body)
    # What the server rebuilds is exactly what the built-in would get in-process.
    assert to_request(ChatRequest.model_validate(body)).fingerprint() == req.fingerprint()


def test_decoding_parameters_map_onto_the_body() -> None:
    plain = OpenAICompatible(config()).body(request())
    assert plain["temperature"] == 0.0 and plain["max_tokens"] == 4096
    assert "seed" not in plain and "top_p" not in plain
    reasoning = OpenAICompatible(
        config(
            decoding={"temperature": None, "max_tokens": 900, "max_tokens_field": "max_completion_tokens", "seed": 7},
            extra_body={"reasoning_effort": "low"},
        )
    ).body(request())
    assert "temperature" not in reasoning and "max_tokens" not in reasoning
    assert reasoning["max_completion_tokens"] == 900 and reasoning["seed"] == 7
    assert reasoning["reasoning_effort"] == "low"


def test_large_images_are_downscaled_to_max_side() -> None:
    big = png((10, 20, 30), size=(3000, 1200))
    adapter = OpenAICompatible(config(images={"max_side": 1000}))
    req = build_request(kind="prose", lang="en", n=1, images=[big], composite=False, item=None)
    url = adapter.body(req)["messages"][1]["content"][1]["image_url"]["url"]
    sent = to_request(ChatRequest.model_validate(adapter.body(req))).images[0]
    assert url.startswith("data:image/png;base64,")
    assert Image.open(io.BytesIO(sent)).size == (1000, 400)


def test_identity_names_the_endpoint_so_different_servers_never_share_answers() -> None:
    # A provider's model and a local server exposing the same model name: different answers.
    provider = OpenAICompatible(config("https://API.Provider.example:443/compatible/v1/")).identity()
    local = OpenAICompatible(config("http://127.0.0.1:8000/v1")).identity()
    assert provider["endpoint"] == "https://api.provider.example/compatible/v1"
    assert local["endpoint"] == "http://127.0.0.1:8000/v1"
    assert provider != local
    assert {k: v for k, v in provider.items() if k != "endpoint"} == {
        k: v for k, v in local.items() if k != "endpoint"
    }
    # Spelling the same endpoint differently does not split the cache.
    same = OpenAICompatible(config("HTTPS://api.provider.example/compatible/v1")).identity()
    assert same == provider
    # User name and password never enter the identity (it is written to manifests).
    with_user = OpenAICompatible(config("http://someone:hunter2@127.0.0.1:8000/v1")).identity()
    assert with_user == local and "hunter2" not in json.dumps(with_user)
    c = OpenAICompatible(config(decoding={"temperature": 0.7})).identity()
    assert c["decoding"]["temperature"] == 0.7 and local["decoding"]["temperature"] == 0.0


def test_a_cache_scope_shares_answers_between_endpoints_declared_equal() -> None:
    a = OpenAICompatible(config("http://127.0.0.1:1111/v1", cache_scope="local-qwen")).identity()
    b = OpenAICompatible(config("http://other-host:2222/v1", cache_scope="local-qwen")).identity()
    other = OpenAICompatible(config("http://127.0.0.1:1111/v1", cache_scope="another")).identity()
    assert a == b and a["endpoint"] == "local-qwen"
    assert other != a
    # The scope stands for the endpoint only: another endpoint model is another identity.
    assert OpenAICompatible(config("http://other-host:2222/v1", cache_scope="local-qwen", model="qwen-7b")).identity() != a


# ---------------------------------------------------------------- calls on loopback


def test_an_answer_carries_tokens_cost_and_latency(loopback) -> None:
    server = loopback()
    adapter = OpenAICompatible(
        config(server.url, price_input_per_mtok=2.0, price_output_per_mtok=10.0)
    )
    response = adapter.complete(request())
    assert response.text.endswith("[2 images]") and response.served_model == "echo"
    assert response.input_tokens > 0 and response.output_tokens > 0
    assert response.cost_usd == pytest.approx(
        (2.0 * response.input_tokens + 10.0 * response.output_tokens) / 1e6
    )
    assert 0 < response.latency_s < 2.0


@pytest.mark.parametrize("fault", ["truncate", "malformed", "no-choices"])
def test_an_unreadable_200_is_not_retried_by_the_adapter(loopback, fault: str) -> None:
    # a provider bills it: asking again is the model file's retry_malformed, applied (and
    # recorded in the spend ledger) by the cached asker (tests/stages/test_query_malformed.py)
    server = loopback(faults=fault, retry_after_s=0.05, slow_s=1.0)
    adapter = OpenAICompatible(config(server.url, timeout_s=5.0))
    with pytest.raises(ModelCallError, match=r"after 1 attempt\(s\): (malformed body|body cut off) \(HTTP 200\)") as err:
        adapter.complete(request())
    adapter.close()
    assert err.value.status == 200 and not err.value.transient
    assert [e["fault"] for e in log_of(server)] == [fault]


@pytest.mark.parametrize("fault", ["429", "500", "503", "reset", "slow"])
def test_each_fault_is_survived_by_one_retry(loopback, fault: str) -> None:
    server = loopback(faults=fault, retry_after_s=0.05, slow_s=1.0)
    adapter = OpenAICompatible(config(server.url, timeout_s=0.4))
    assert adapter.complete(request()).text.endswith("[2 images]")
    adapter.close()
    entries = sorted(log_of(server), key=lambda e: e["arrival"])
    assert [e["fault"] for e in entries] == [fault, "ok"]
    assert entries[1]["status"] == 200 and not answered_twice(entries)


def test_retry_after_is_waited_out_between_attempts(loopback) -> None:
    server = loopback(faults="429,503", retry_after_s=0.3)
    OpenAICompatible(config(server.url)).complete(request())
    first, second, third = sorted(log_of(server), key=lambda e: e["arrival"])
    assert second["t0"] - first["t1"] >= 0.3 and third["t0"] - second["t1"] >= 0.3


def test_a_request_that_keeps_failing_is_an_error_naming_the_cause(loopback) -> None:
    server = loopback(faults="500*")
    with pytest.raises(ModelCallError, match=r"after 3 attempt\(s\): HTTP 500") as err:
        OpenAICompatible(config(server.url, max_attempts=3)).complete(request())
    assert err.value.status == 500
    assert len(log_of(server)) == 3


def test_timeouts_are_reported_as_such(loopback) -> None:
    server = loopback(faults="slow*", slow_s=1.0)
    with pytest.raises(ModelCallError, match=r"after 2 attempt\(s\): timeout"):
        OpenAICompatible(config(server.url, timeout_s=0.2, max_attempts=2)).complete(request())


def test_a_bad_request_is_not_retried(loopback) -> None:
    server = loopback()
    foreign = Request(template="other/v1", messages=request().messages[:1])  # no task wording
    with pytest.raises(ModelCallError, match=r"after 1 attempt\(s\): HTTP 400") as err:
        OpenAICompatible(config(server.url)).complete(foreign)
    assert not err.value.transient and len(log_of(server)) == 1


def test_concurrent_calls_share_one_client(loopback) -> None:
    server = loopback(delay_s=0.05)
    adapter = OpenAICompatible(config(server.url, max_concurrency=8))
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(adapter.complete, [request(i) for i in range(24)]))
    assert len(answers) == 24 and all(a.text.endswith("[2 images]") for a in answers)
    entries = log_of(server)
    assert len(entries) == 24 and not answered_twice(entries)
    assert 1 < max(e["in_flight"] for e in entries) <= 8


# ---------------------------------------------------------------- the API key


def test_the_key_comes_from_the_environment_at_call_time(loopback, monkeypatch) -> None:
    monkeypatch.setenv("SERVER_KEY", "sk-right")
    server = loopback(api_key="sk-right")
    adapter = OpenAICompatible(config(server.url, api_key_env="SHREDFOLD_TEST_API_KEY"))
    monkeypatch.delenv("SHREDFOLD_TEST_API_KEY", raising=False)
    with pytest.raises(MissingApiKeyError, match="SHREDFOLD_TEST_API_KEY is not set"):
        adapter.complete(request())
    monkeypatch.setenv("SHREDFOLD_TEST_API_KEY", "sk-right")
    assert adapter.complete(request()).text


def test_a_rejected_key_is_scrubbed_from_the_error(loopback, monkeypatch) -> None:
    sentinel = "sk-SENTINEL-5f2a9c"
    server = loopback(api_key="sk-right")
    monkeypatch.setenv("SHREDFOLD_TEST_API_KEY", sentinel)
    with pytest.raises(ModelCallError) as err:
        OpenAICompatible(config(server.url, api_key_env="SHREDFOLD_TEST_API_KEY")).complete(request())
    # The server echoed the key back in its 401 body, as some providers do.
    assert "HTTP 401" in str(err.value) and "***" in str(err.value)
    assert sentinel not in str(err.value) and sentinel not in repr(err.value.args)


def test_requests_per_minute_pace_the_calls_retries_included(loopback) -> None:
    server = loopback(faults="503", retry_after_s=0.0)
    adapter = OpenAICompatible(config(server.url, requests_per_minute=240, max_concurrency=8))
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(adapter.complete, [request(i) for i in range(4)]))
    assert len(answers) == 4 and all(a.text.endswith("[2 images]") for a in answers)  # each answered
    starts = sorted(e["t0"] for e in log_of(server))
    # 4 calls × (503 + success) = 8 attempts at 4 a second after a burst of 4: ≥ 1 s.
    assert len(starts) == 8 and starts[-1] - starts[0] >= 0.9
