"""An API key echoed by a server never survives into what the adapter returns or logs, wherever
in the reply it sits (a cut at 300 characters included)."""

from __future__ import annotations

import json
import logging
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import pytest

from shredfold.calls import ModelCallError
from shredfold.models.openai_compat import MissingApiKeyError, OpenAICompatible
from shredfold.models.secrets import MIN_PREFIX, MIN_RUN, excerpt, scrub, scrub_answer
from shredfold.shred.prompts import build_request
from shredfold.spec import ModelConfig

if TYPE_CHECKING:
    from tests.conftest import Loopback

KEY = "sk-probe-SENTINEL-0123456789abcdefghijklmnop"


def leaked(text: str, key: str = KEY) -> bool:
    """Whether ``text`` holds any start of the key of MIN_PREFIX characters or more, or any
    run of MIN_RUN characters of it from anywhere in the key."""
    starts = any(key[:k] in text for k in range(MIN_PREFIX, len(key) + 1))
    return starts or any(key[i : i + MIN_RUN] in text for i in range(len(key) - MIN_RUN + 1))


# What a server may echo of the key: all of it, or a part (the probe: all but the
# first five characters), starting anywhere.
PARTS = [KEY, KEY[5:], KEY[9:], KEY[3:-3], KEY[12 : 12 + MIN_RUN], KEY[:MIN_PREFIX]]


# ---------------------------------------------------------------- the pure functions


def test_scrub_masks_the_key_and_every_start_of_it() -> None:
    assert scrub(f"bad key {KEY}!", KEY) == "bad key ***!"
    assert scrub(f"bad key {KEY[:9]}", KEY) == "bad key ***"
    assert scrub(f"{KEY}{KEY[:7]}", KEY) == "******"
    # Shorter starts are too little of a key to matter, and are ordinary text.
    assert scrub(f"sk-pr and {KEY[:MIN_PREFIX - 1]}", KEY) == f"sk-pr and {KEY[:MIN_PREFIX - 1]}"
    assert scrub("nothing here", KEY) == "nothing here" and scrub("x", None) == "x"


def test_scrub_masks_every_run_of_eight_characters_from_anywhere_in_the_key() -> None:
    assert scrub(f"key starts {KEY[5:]} ends", KEY) == "key starts *** ends"
    for part in PARTS:
        for text in (part, f"<{part}>", f"{part} and {part[::-1]} and {part}"):
            assert not leaked(scrub(text, KEY)), (part, scrub(text, KEY))
    # seven characters from the middle are not a leak, and are left alone
    assert scrub(f"a {KEY[12:19]} b", KEY) == f"a {KEY[12:19]} b"


def test_masking_cannot_spell_the_key_again() -> None:
    key = "abc***abc***xyz"  # a key that contains the mask itself
    for text in [key, "abc" + key, key[:6] + key, "abc***" + key + "abc***"]:
        assert not leaked(scrub(text, key), key)


def test_an_excerpt_cut_anywhere_keeps_no_start_of_the_key() -> None:
    for at in range(0, 401):
        for body in ("x" * at + KEY + " y" * 200, "x" * at + KEY + KEY[:20], "x" * at + KEY[5:] + " y" * 200):
            cut = excerpt(body, KEY, 300)
            assert len(cut) <= 300 and not leaked(cut), at


def test_an_excerpt_is_the_start_of_the_scrubbed_text_wherever_the_key_falls() -> None:
    # A key straddling the cut is masked whole: the excerpt shows "***" where it began and
    # keeps no fragment of it, as if the whole reply had been scrubbed and then cut. (Scrub
    # only up to the cut and the first characters of the key survive at its end.)
    for at in range(250, 320):
        for part in (KEY, KEY[5:], KEY[:MIN_PREFIX + 1]):
            body = "x" * at + part + " y" * 200
            assert excerpt(body, KEY, 300) == scrub(body, KEY)[:300].strip(), (at, part)
    # many keys in a row shrink the masked window: it is widened until it covers the cut
    body = " ".join([KEY] * 40) + " tail"
    assert excerpt(body, KEY, 100) == scrub(body, KEY)[:100].strip()


def test_placeholder_keys_leave_answers_alone() -> None:
    # A local server's key is often "EMPTY"; code that says EMPTY must keep saying it.
    assert scrub_answer("EMPTY = object()", "EMPTY") == "EMPTY = object()"
    assert scrub_answer(f"echo {KEY}", KEY) == "echo ***"


# ---------------------------------------------------------------- through real HTTP


class Echoer(ThreadingHTTPServer):
    """Answers every request with ``status`` and a body holding the Bearer key at ``at``."""

    daemon_threads = True
    status = 503
    at = 0
    kind = "error"  # "error": plain body; "answer": a 200 chat.completion echoing the key
    echo = None  # what the answer says, made from the key it was sent (default: the key at `at`)


class _EchoHandler(BaseHTTPRequestHandler):
    server: Echoer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else each reply waits ~40 ms for a delayed ACK

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        key = self.headers["Authorization"].removeprefix("Bearer ")
        text = "x" * self.server.at + key + " and more" * 40
        if self.server.echo is not None:
            text = self.server.echo(key)
        if self.server.kind == "answer":
            body = json.dumps({
                "model": f"served {key}",
                "choices": [{"message": {"content": text}, "finish_reason": key}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1},
            }).encode()  # fmt: skip
            status = 200
        else:
            body, status = text.encode(), self.server.status
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def echoer(loopback: Loopback) -> Echoer:
    return loopback.run(Echoer(("127.0.0.1", 0), _EchoHandler))


def adapter(server: Echoer, monkeypatch: pytest.MonkeyPatch) -> OpenAICompatible:
    monkeypatch.setenv("SHREDFOLD_PROBE_KEY", KEY)
    host, port = server.server_address[:2]
    return OpenAICompatible(
        ModelConfig(
            id="probe", base_url=f"http://{host}:{port}/v1", model="m", api_key_env="SHREDFOLD_PROBE_KEY",
            max_attempts=2, backoff_s=0.0, timeout_s=5.0,
        ),  # fmt: skip
        sleep=lambda s: None,
    )


REQUEST = build_request(kind="prose", lang="en", n=1, images=[], composite=False, item=None)


@pytest.mark.parametrize("status", [503, 401])
def test_an_error_body_echoing_the_key_at_any_offset_leaks_none_of_it(
    echoer: Echoer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, status: int
) -> None:
    echoer.status = status  # 503: retried (and logged) before it gives up; 401: not retried
    model = adapter(echoer, monkeypatch)
    caplog.set_level(logging.DEBUG)
    try:
        for at in range(0, 401):
            echoer.at = at
            with pytest.raises(ModelCallError) as err:
                model.complete(REQUEST)
            message = str(err.value)
            assert f"HTTP {status}" in message, message
            assert not leaked(message), f"offset {at}: {message!r}"
            assert not leaked(repr(err.value.args))
    finally:
        model.close()
    assert not leaked(caplog.text)
    if status == 503:
        assert "retrying" in caplog.text  # the retry lines were logged, and scrubbed


@pytest.mark.parametrize("part", PARTS[1:4])
def test_an_answer_echoing_part_of_the_key_stores_none_of_it(
    echoer: Echoer, monkeypatch: pytest.MonkeyPatch, tmp_path, part: str
) -> None:
    from shredfold.models.asker import CachedAsker
    from shredfold.store import Store

    echoer.kind, echoer.echo = "answer", lambda key: f"key starts {part} ends"
    model = adapter(echoer, monkeypatch)
    store = Store(tmp_path / "store")
    asker = CachedAsker("probe", model.config, model.identity(), store, model=model)
    try:
        answer = asker.ask(REQUEST)
    finally:
        asker.close()
    assert answer.text == "key starts *** ends"
    stored = [p for p in (tmp_path / "store").rglob("*") if p.is_file()]
    assert stored and not any(leaked(p.read_text(errors="replace")) for p in stored)


def test_an_answer_echoing_the_key_leaks_none_of_it(echoer: Echoer, monkeypatch: pytest.MonkeyPatch) -> None:
    echoer.kind = "answer"
    model = adapter(echoer, monkeypatch)
    try:
        for at in range(0, 401):
            echoer.at = at
            response = model.complete(REQUEST)
            assert response.text.startswith("x" * at + "***")
            assert not leaked(response.model_dump_json())
    finally:
        model.close()


@pytest.mark.parametrize("value", [KEY + "\n", "sk-with space", "sk-ключ"])
def test_a_key_that_cannot_be_a_header_is_refused_without_showing_it(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("SHREDFOLD_PROBE_KEY", value)
    model = OpenAICompatible(ModelConfig(id="probe", base_url="http://127.0.0.1:9/v1", model="m",
                                         api_key_env="SHREDFOLD_PROBE_KEY"))  # fmt: skip
    with pytest.raises(MissingApiKeyError, match="SHREDFOLD_PROBE_KEY holds whitespace") as err:
        model.check_ready()
    assert value.strip() not in str(err.value)
