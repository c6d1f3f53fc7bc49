"""`shredfold serve` as the official `openai` client sees it, and as a hostile client pokes it:
streaming, models, n choices, and a JSON error with the right status for every failure."""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import openai
import pytest
from PIL import Image

from shredfold.models.openai_compat import OpenAICompatible
from shredfold.origami_bench.prompts import mcq_request
from shredfold.serve import ChatServer, read_log
from shredfold.shred.prompts import build_request
from shredfold.spec import ModelConfig
from tests.origami_bench.solvers.test_picker import RIGHT_M, RIGHT_V
from tests.origami_bench.solvers.test_picker import _door_item as door_item
from tests.origami_bench.solvers.test_picker import _named as named_fold

if TYPE_CHECKING:
    from tests.conftest import Loopback


@pytest.fixture
def start(loopback: Loopback, capfd: pytest.CaptureFixture[str]) -> Iterator[Loopback]:
    """Servers on loopback (tests/conftest.py); no traceback may reach stderr, up to their shutdown."""
    yield loopback
    loopback.close()
    assert "Traceback" not in capfd.readouterr().err


def png(color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), color).save(buf, format="PNG")
    return buf.getvalue()


def messages(n_images: int = 2) -> list[dict]:
    """The messages our adapter sends for a ShredBench code request."""
    req = build_request(kind="code", lang="en", n=n_images, images=[png((k, 0, 0)) for k in range(n_images)],
                        composite=False, item=None)  # fmt: skip
    return OpenAICompatible(ModelConfig(id="m", base_url="http://127.0.0.1:9/v1", model="echo")).body(req)["messages"]


def client(server: ChatServer, **kw: object) -> openai.OpenAI:
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 20.0)
    return openai.OpenAI(base_url=server.url, api_key="unused", **kw)  # type: ignore[arg-type]


def raw(server: ChatServer, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes, read the reply to the end: status, headers (lowercase), body."""
    with socket.create_connection(server.server_address[:2], timeout=20) as s:
        s.sendall(data)
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def assert_error(body: bytes | dict, *, code: str | None = None, param: str | None = None) -> dict:
    err = (json.loads(body) if isinstance(body, bytes) else body)["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["message"]
    if code is not None:
        assert err["code"] == code
    if param is not None:
        assert err["param"] == param
    return err


# ---------------------------------------------------------------- what the client gets


def test_a_streamed_answer_reassembles_to_the_same_text_as_a_plain_one(start) -> None:
    server = start()
    c = client(server)
    plain = c.chat.completions.create(model="echo", messages=messages())
    text = plain.choices[0].message.content
    assert text and text.endswith("[2 images]") and plain.choices[0].finish_reason == "stop"

    stream = c.chat.completions.create(
        model="echo", messages=messages(), stream=True, stream_options={"include_usage": True}
    )
    deltas, finish, usages = [], [], []
    for chunk in stream:
        assert chunk.object == "chat.completion.chunk" and chunk.model == "echo"
        for choice in chunk.choices:
            deltas.append(choice.delta.content or "")
            finish.append(choice.finish_reason)
        if chunk.usage is not None:
            usages.append(chunk.usage)
    assert "".join(deltas) == text and len(deltas) > 3  # really in pieces
    assert finish[-1] == "stop" and set(finish[:-1]) == {None}
    assert [u.total_tokens for u in usages] == [plain.usage.total_tokens]
    assert server.wait_idle()
    assert [e["stream"] for e in read_log(server.log_path)] == [False, True]


def test_the_stream_is_server_sent_events_ending_with_done(start) -> None:
    server = start()
    body = {"model": "echo", "messages": messages(), "stream": True}
    with httpx.stream("POST", server.url + "/chat/completions", json=body) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = [line for line in reply.iter_lines() if line]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert len({c["id"] for c in chunks}) == 1 and "usage" not in chunks[0]  # not asked for


def test_n_choices_are_answered_alike_since_served_models_are_deterministic(start) -> None:
    server = start()
    c = client(server)
    one = c.chat.completions.create(model="echo", messages=messages())
    three = c.chat.completions.create(model="echo", messages=messages(), n=3)
    assert [ch.index for ch in three.choices] == [0, 1, 2]
    assert {ch.message.content for ch in three.choices} == {one.choices[0].message.content}
    assert three.usage.completion_tokens == 3 * one.usage.completion_tokens
    streamed: dict[int, str] = {}
    for chunk in c.chat.completions.create(model="echo", messages=messages(), n=2, stream=True):
        for ch in chunk.choices:
            streamed[ch.index] = streamed.get(ch.index, "") + (ch.delta.content or "")
    assert streamed == {0: one.choices[0].message.content, 1: one.choices[0].message.content}
    for bad in (0, 129):
        with pytest.raises(openai.BadRequestError) as err:
            c.chat.completions.create(model="echo", messages=messages(), n=bad)
        assert err.value.param == "n"


def test_models_are_listed_and_retrieved_and_unknown_ones_are_404(start) -> None:
    c = client(start("echo"))
    assert [m.id for m in c.models.list()] == ["echo"]
    model = c.models.retrieve("echo")
    assert model.id == "echo" and model.object == "model" and model.owned_by == "shredfold"
    with pytest.raises(openai.NotFoundError) as err:
        c.models.retrieve("gpt-9")
    assert err.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError) as err:
        c.chat.completions.create(model="gpt-9", messages=messages())
    assert err.value.code == "model_not_found" and err.value.param == "model"


# ---------------------------------------------------------------- failures: status and JSON


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (b"{not json", None),
        (b"[1, 2]", None),
        (b"[" * 50_000 + b"]" * 50_000, None),  # nested beyond the parser's recursion limit
        (json.dumps({"messages": []}).encode(), "model"),
        (json.dumps({"model": "echo", "messages": []}).encode(), "messages"),
        (json.dumps({"model": "echo", "messages": [{"content": "x"}]}).encode(), "messages[0].role"),
        (json.dumps({"model": "echo", "messages": [{"role": "user", "content": 5}]}).encode(), "messages[0].content"),
        (json.dumps({"model": "echo", "messages": messages(), "stream": "yes"}).encode(), "stream"),
        (json.dumps({"model": "echo", "messages": [{"role": "user", "content": "hello"}]}).encode(), "messages"),
    ],
    ids=["not-json", "not-an-object", "deep", "no-model", "no-messages", "no-role", "bad-content", "bad-stream", "no-benchmark-prompt"],
)
def test_a_bad_body_is_a_400_naming_the_parameter(start, body: bytes, param: str | None) -> None:
    server = start()
    reply = httpx.post(server.url + "/chat/completions", content=body)
    assert reply.status_code == 400
    err = assert_error(reply.content, param=param)
    assert err["type"] == "invalid_request_error"


@pytest.mark.parametrize("payload", [b"hello, not an image", png()[:60]], ids=["text", "truncated-png"])
def test_base64_that_is_not_an_image_is_a_400(start, payload: bytes) -> None:
    import base64

    server = start()
    msgs = messages(1)
    msgs[1]["content"][1]["image_url"]["url"] = "data:image/png;base64," + base64.b64encode(payload).decode()
    with pytest.raises(openai.BadRequestError) as err:
        client(server).chat.completions.create(model="echo", messages=msgs)
    assert err.value.param == "messages[1].content[1].image_url.url"
    assert "not an image" in err.value.message


def test_a_model_that_cannot_answer_a_request_is_a_422_as_readme_says(start, tmp_path, repo_root) -> None:
    # 422: the model says this request cannot be answered (not worth retrying); 503: it
    # failed for a moment; 500: it failed unexpectedly (the test below).
    server = start("oracle", results=tmp_path / "empty-results")
    with pytest.raises(openai.UnprocessableEntityError) as err:
        client(server).chat.completions.create(model="oracle", messages=messages(1))
    assert err.value.status_code == 422 and err.value.code == "model_error"
    assert "oracle: no stored sample" in err.value.message
    readme = (repo_root / "README.md").read_text()
    assert "422 when the model cannot answer the request" in readme and "500 when it fails unexpectedly" in readme


def test_a_model_exception_is_a_500_and_the_server_keeps_serving(start) -> None:
    server = start("ocr-islands")
    # An OrigamiBench question sent to a ShredBench model.
    question = mcq_request(png(), [png((0, k * 60, 0)) for k in range(4)], item=None)
    body = OpenAICompatible(ModelConfig(id="m", base_url=server.url, model="ocr-islands")).body(question)
    c = client(server)
    for _ in range(2):  # the same connection pool, the same answer: nothing dropped
        with pytest.raises(openai.InternalServerError) as err:
            c.chat.completions.create(model="ocr-islands", messages=body["messages"])
        assert err.value.status_code == 500 and err.value.code == "model_error"
        assert "ocr-islands failed" in err.value.message
    assert c.models.retrieve("ocr-islands").id == "ocr-islands"


def test_unknown_paths_are_404(start) -> None:
    server = start()
    root = server.url.removesuffix("/v1")
    for reply in (httpx.get(root + "/"), httpx.get(root + "/v1/embeddings"), httpx.post(root + "/v1/completions", json={})):
        assert reply.status_code == 404 and reply.headers["content-type"] == "application/json"
        assert_error(reply.content, code="not_found")


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE"])
@pytest.mark.parametrize(("path", "allow"), [("/chat/completions", "POST"), ("/models", "GET"), ("/models/echo", "GET")])
def test_other_methods_are_405_with_an_allow_header(start, method: str, path: str, allow: str) -> None:
    server = start()
    with httpx.Client() as http:  # one connection: a 405 must leave it usable
        reply = http.request(method, server.url + path, content=b'{"a": 1}' if method in ("PUT", "PATCH") else None)
        assert reply.status_code == 405 and reply.headers["allow"] == allow
        if method == "HEAD":
            assert reply.content == b""  # HEAD replies carry no body
        else:
            assert_error(reply.content, code="method_not_allowed")
        assert http.get(server.url + "/models").status_code == 200
    wrong = httpx.get(server.url + "/chat/completions")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"


def test_an_unknown_method_is_a_json_501(start) -> None:
    server = start()
    status, headers, body = raw(server, b"BREW /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 501 and headers["content-type"] == "application/json"
    assert_error(body)


def test_a_body_over_the_limit_is_413(start) -> None:
    server = start(max_body_bytes=100_000)
    msgs = [{"role": "user", "content": "x" * 200_000}]
    with pytest.raises(openai.APIStatusError) as err:
        client(server).chat.completions.create(model="echo", messages=msgs)
    assert err.value.status_code == 413 and err.value.code == "request_too_large"
    # The limit is checked before reading: nothing arrived, and the refusal was logged.
    assert server.wait_idle()
    assert [(e["status"], e["hash"]) for e in read_log(server.log_path)] == [(413, None)]


def test_an_absurd_content_length_is_refused_before_reading(start) -> None:
    server = start()  # default limit: 64 MB
    status, headers, body = raw(
        server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000000\r\n\r\n{"
    )
    assert status == 413 and headers["connection"] == "close"
    assert "64" in assert_error(body, code="request_too_large")["message"]
    # The same, announced with "Expect: 100-continue" (as curl does): refused, never "continue".
    status, _, body = raw(
        server,
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
        b"Content-Length: 100000000000\r\n\r\n",
    )
    assert status == 413
    assert client(server).models.retrieve("echo").id == "echo"


@pytest.mark.parametrize(
    "header",
    [b"Content-Length: -5\r\n", b"Content-Length: abc\r\n", b"Content-Length: 1_0\r\n",
     b"Content-Length: +5\r\n", b"Content-Length: \r\n", b"", b"Content-Length: 5\r\nContent-Length: 6\r\n",
     b"Transfer-Encoding: chunked\r\n"],  # fmt: skip
    ids=["negative", "letters", "underscore", "plus", "empty", "missing", "two-values", "chunked"],
)
def test_a_bad_or_missing_content_length_is_a_400(start, header: bytes) -> None:
    server = start()
    status, headers, body = raw(server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n{}")
    assert status == 400 and headers["content-type"] == "application/json"
    assert_error(body)
    assert client(server).models.retrieve("echo").id == "echo"


@pytest.mark.parametrize("line", [b"\x16\x03\x01 nonsense", b"GET / HTTX/9", b"GET /" + b"x" * 70_000 + b" HTTP/1.1"])
def test_a_garbage_request_line_gets_a_json_error(start, line: bytes) -> None:
    server = start()
    status, headers, body = raw(server, line + b"\r\n\r\n")
    assert status in (400, 414) and headers["content-type"] == "application/json"
    assert_error(body)


# ---------------------------------------------------------------- faults under streaming


@pytest.mark.parametrize("fault", ["429", "500", "503", "reset", "slow"])
def test_faults_before_a_stream_are_retried_by_the_client(start, fault: str) -> None:
    server = start(faults=fault, retry_after_s=0.05, slow_s=1.5)
    c = client(server, max_retries=2, timeout=0.5)  # "slow" outlasts the timeout
    text = "".join(
        ch.choices[0].delta.content or ""
        for ch in c.chat.completions.create(model="echo", messages=messages(), stream=True)
        if ch.choices
    )
    assert text.endswith("[2 images]")
    assert server.wait_idle()
    assert [e["fault"] for e in sorted(read_log(server.log_path), key=lambda e: e["arrival"])] == [fault, "ok"]


@pytest.mark.parametrize("fault", ["truncate", "malformed", "no-choices"])
def test_faults_inside_a_stream_reach_the_client_and_the_next_try_succeeds(start, fault: str) -> None:
    server = start(faults=fault)
    c = client(server)

    def streamed() -> str:
        pieces: list[str] = []
        try:
            for ch in c.chat.completions.create(model="echo", messages=messages(), stream=True):
                pieces += [x.delta.content or "" for x in ch.choices]
        except (openai.APIError, httpx.HTTPError, json.JSONDecodeError):
            pieces.append("<failed>")
        return "".join(pieces)

    first, second = streamed(), streamed()
    # The fault struck the first arrival of the body, and only the first.
    assert first == "" if fault == "no-choices" else first.endswith("<failed>")
    assert second.endswith("[2 images]") and "<failed>" not in second


@pytest.mark.parametrize(("named", "letter"), [(RIGHT_V, "C"), (RIGHT_M, "A")])
def test_a_causal_mcq_question_is_served_with_the_step_it_names(start, named: tuple, letter: str) -> None:
    server = start("origami-search")
    ref, *options = door_item()
    question = mcq_request(ref, options, item=None, step=named_fold(*named))
    body = OpenAICompatible(ModelConfig(id="m", base_url=server.url, model="origami-search")).body(question)
    reply = client(server).chat.completions.create(model="origami-search", messages=body["messages"])
    assert json.loads(reply.choices[0].message.content or "") == {"answer": letter}
