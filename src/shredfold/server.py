"""``shredfold serve``: a built-in model behind an OpenAI-compatible ``/v1/chat/completions``.

For tests and local use. The server turns the Chat Completions body back into the very
:class:`~shredfold.calls.Request` the model would get in-process: roles, texts, the
PNG bytes of each data-URL image, and the template inferred from the prompt's wording. The
oracle also needs the sample key, which is never sent; with ``--results`` the server finds
it from the image bytes (every sample's pieces and composite are indexed by SHA-256).

Faults are injected by a deterministic schedule (see :class:`FaultPlan`), and every request
is logged as a JSON line (body hash, arrival number, status, fault, in-flight count) so tests
can count what was answered.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import socket
import struct
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from shredfold.calls import Message, ModelCallError, Request, Response
from shredfold.models.accounting import estimate_input_tokens
from shredfold.models.base import Model
from shredfold.models.openai_compat import image_size
from shredfold.prompts import origami as origami_prompts
from shredfold.prompts import shred as shred_prompts
from shredfold.spec import ModelConfig
from shredfold.store import Store, canonical_json, sha256_bytes

log = logging.getLogger(__name__)

FAULTS = ("ok", "429", "500", "503", "slow", "truncate", "malformed", "no-choices", "reset")


# ---------------------------------------------------------------- fault schedule


@dataclass(frozen=True)
class FaultPlan:
    """Which fault each arrival of a distinct request body gets.

    Syntax: rules separated by ``|``; a rule is a comma-separated sequence of faults for the
    1st, 2nd, … arrival of a body, after which it is answered normally; a trailing ``*``
    repeats the last fault for ever. A body follows rule ``sha256(body) mod len(rules)``.

    ``"429,500"``        every body: 429, then 500, then answered.
    ``"503|ok"``         about half the bodies get one 503 first.
    ``"500*|ok|ok"``     about a third of the bodies never succeed.
    """

    rules: tuple[tuple[str, ...], ...] = ()
    forever: tuple[bool, ...] = ()

    @classmethod
    def parse(cls, spec: str | None) -> FaultPlan:
        if not spec:
            return cls()
        rules, forever = [], []
        for raw in spec.split("|"):
            steps = [s.strip() for s in raw.split(",") if s.strip()]
            rep = bool(steps) and steps[-1].endswith("*")
            if rep:
                steps[-1] = steps[-1][:-1]
            bad = [s for s in steps if s not in FAULTS]
            if bad:
                raise ValueError(f"unknown fault(s) {bad} in {spec!r}; known: {', '.join(FAULTS)}")
            rules.append(tuple(steps))
            forever.append(rep)
        return cls(tuple(rules), tuple(forever))

    def fault(self, body_hash: str, arrival: int) -> str:
        if not self.rules:
            return "ok"
        i = int(body_hash, 16) % len(self.rules)
        steps = self.rules[i]
        if arrival < len(steps):
            return steps[arrival]
        return steps[-1] if self.forever[i] and steps else "ok"


# ---------------------------------------------------------------- request body (boundary)


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class _ImageURL(_Loose):
    url: str
    detail: str | None = None


class _Part(_Loose):
    type: str
    text: str | None = None
    image_url: _ImageURL | None = None


class _InMessage(_Loose):
    role: str
    content: str | list[_Part] | None = None


class ChatRequest(_Loose):
    model: str
    messages: list[_InMessage]


class BadRequest(ValueError):
    """The body cannot be turned into a Request (answered with HTTP 400)."""


def decode_data_url(url: str) -> bytes:
    head, sep, payload = url.partition(",")
    if not sep or not head.startswith("data:image/") or not head.endswith(";base64"):
        raise BadRequest("only base64 data:image URLs are supported")
    try:
        return base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise BadRequest(f"bad base64 image: {exc}") from None


def infer_template(prompt: str) -> str:
    """The benchmark template whose task wording the prompt contains."""
    errors = []
    for module in (shred_prompts, origami_prompts):
        try:
            return module.infer_template(prompt)
        except ValueError as exc:
            errors.append(str(exc))
    raise BadRequest("; ".join(errors))


def to_request(chat: ChatRequest) -> Request:
    messages = []
    for m in chat.messages:
        if isinstance(m.content, list):
            texts = [p.text or "" for p in m.content if p.type == "text"]
            images = [decode_data_url(p.image_url.url) for p in m.content if p.type == "image_url" and p.image_url]
            messages.append(Message(role=m.role, text="\n".join(texts), images=tuple(images)))
        else:
            messages.append(Message(role=m.role, text=m.content or ""))
    prompt = "\n\n".join(m.text for m in messages)
    template = infer_template(prompt)
    return Request(template=template, messages=tuple(messages))


# ---------------------------------------------------------------- models served


class Echo:
    """A server-only transport check: answers with the prompt's last line and image count.

    Not a benchmark contestant (it is not in the registry); used by ``bench/adapter_speed.py``
    to measure the HTTP path without a model's own cost.
    """

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    def identity(self) -> dict[str, Any]:
        return {"adapter": "echo", "version": 1}

    def complete(self, request: Request) -> Response:
        last = request.text.strip().splitlines()[-1] if request.text.strip() else ""
        return Response(text=f"{last} [{len(request.images)} images]", served_model="echo")


class SampleIndex:
    """SHA-256 of every stored sample image → sample key; rebuilt when a hash is unknown."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._by_hash: dict[str, str] = {}
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def _refresh(self) -> None:
        from shredfold.shred.sample_folder import SAMPLE_STAGE, load_public

        for key in self.store.keys(SAMPLE_STAGE):
            if key in self._seen:
                continue
            public = load_public(self.store.object(SAMPLE_STAGE, key))
            for png in [*public.pieces, public.composite]:
                self._by_hash[hashlib.sha256(png).hexdigest()] = key
            self._seen.add(key)

    def item_for(self, images: list[bytes]) -> str | None:
        if not images:
            return None
        digest = hashlib.sha256(images[0]).hexdigest()
        with self._lock:
            if digest not in self._by_hash:
                self._refresh()
            return self._by_hash.get(digest)


def build_served_model(name: str, results: Path | None) -> Model:
    if name == "echo":
        return Echo(ModelConfig(id="echo", adapter="oracle"))
    from shredfold.models import registry

    if name not in registry.builtin_names():
        raise ValueError(f"unknown model {name!r}; serve one of: echo, {', '.join(registry.builtin_names())}")
    store = Store((results or Path("results")) / "store")
    return registry.build_model(registry.builtin_config(name), store)


# ---------------------------------------------------------------- the server


class ChatServer(ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connect at once in the concurrency tests; the default backlog of 5 drops some.
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        model: Model,
        *,
        faults: FaultPlan | None = None,
        log_path: Path | None = None,
        index: SampleIndex | None = None,
        api_key: str | None = None,
        retry_after_s: float = 1.0,
        slow_s: float = 5.0,
        delay_s: float = 0.0,
    ) -> None:
        super().__init__(address, _Handler)
        self.model = model
        self.faults = faults or FaultPlan()
        self.index = index
        self.api_key = api_key
        self.retry_after_s = retry_after_s
        self.slow_s = slow_s
        self.delay_s = delay_s
        self._arrivals: dict[str, int] = {}
        self._lock = threading.Condition()
        self._in_flight = 0
        self.log_path = log_path
        self._log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/v1"

    def arrive(self, body_hash: str) -> tuple[int, int]:
        with self._lock:
            n = self._arrivals.get(body_hash, 0)
            self._arrivals[body_hash] = n + 1
            self._in_flight += 1
            return n, self._in_flight

    def leave(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._in_flight -= 1
            if self._log is not None and not self._log.closed:
                self._log.write(json.dumps(entry, sort_keys=True) + "\n")
                self._log.flush()
            self._lock.notify_all()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no request is being handled (its log line is written after the reply)."""
        with self._lock:
            return self._lock.wait_for(lambda: self._in_flight == 0, timeout)

    def server_close(self) -> None:
        super().server_close()
        with self._lock:
            if self._log is not None:
                self._log.close()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Status and JSON reply for a parsed body: the model's answer, or an error."""
        try:
            chat = ChatRequest.model_validate(body)
            request = to_request(chat)
        except (ValidationError, BadRequest) as exc:
            return 400, _error(f"bad request: {exc}", "invalid_request_error")
        if self.index is not None:
            request = request.model_copy(update={"item": self.index.item_for(request.images)})
        if self.delay_s:
            time.sleep(self.delay_s)
        try:
            response = self.model.complete(request)
        except ModelCallError as exc:
            return (503 if exc.transient else 422), _error(str(exc), "model_error")
        prompt_tokens = estimate_input_tokens(request.text, [image_size(p) for p in request.images])
        completion_tokens = estimate_input_tokens(response.text, [])
        return 200, {
            "id": "chatcmpl-" + sha256_bytes(canonical_json(chat.messages[-1].model_dump()))[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": chat.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": response.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind}}


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do
    # Headers and body go out in separate writes; with Nagle on, the client's delayed ACK
    # would stall every reply by ~40 ms.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None, cut: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if cut:
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            self._reset()
        else:
            self.wfile.write(payload)

    def _reset(self) -> None:
        # SO_LINGER 0: close() sends RST instead of FIN, as a crashed proxy would.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            name = getattr(self.server.model.config, "id", "model")
            self._send(200, json.dumps({"object": "list", "data": [{"id": name, "object": "model"}]}).encode())
        else:
            self._send(404, json.dumps(_error("not found", "not_found")).encode())

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, json.dumps(_error("not found", "not_found")).encode())
            return
        # The raw bytes identify a request: our adapter serialises a given request identically
        # every time, and hashing megabytes of re-serialised JSON would cost as much again.
        body_hash = sha256_bytes(raw)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        arrival, in_flight = self.server.arrive(body_hash)
        t0 = time.time()
        entry: dict[str, Any] = {"hash": body_hash, "arrival": arrival, "in_flight": in_flight, "t0": t0}
        entry.update(status=0, fault="ok")
        try:
            entry["status"] = self._serve(body, body_hash, arrival, entry)
        except (BrokenPipeError, ConnectionResetError):
            entry["client_gone"] = True
        finally:
            entry["t1"] = time.time()
            self.server.leave(entry)

    def _serve(self, body: Any, body_hash: str, arrival: int, entry: dict[str, Any]) -> int:
        """Answer one request (or fail it as scheduled); return the status sent (0: none)."""
        srv = self.server
        if srv.api_key is not None:
            given = self.headers.get("Authorization", "")
            if given != f"Bearer {srv.api_key}":
                # Like some real providers, echo what was sent: the client must scrub it.
                msg = f"invalid API key: {given.removeprefix('Bearer ')!r}"
                self._send(401, json.dumps(_error(msg, "authentication_error")).encode())
                return 401
        if not isinstance(body, dict):
            self._send(400, json.dumps(_error("body is not a JSON object", "invalid_request_error")).encode())
            return 400
        fault = entry["fault"] = srv.faults.fault(body_hash, arrival)
        if fault == "reset":
            self._reset()
            return 0
        if fault in ("429", "503"):
            self._send(
                int(fault),
                json.dumps(_error("slow down" if fault == "429" else "overloaded", "server_error")).encode(),
                {"Retry-After": f"{srv.retry_after_s:g}"},
            )
            return int(fault)
        if fault == "500":
            self._send(500, json.dumps(_error("internal error", "server_error")).encode())
            return 500
        if fault == "malformed":
            self._send(200, b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "unterminated')
            return 200
        if fault == "no-choices":
            self._send(200, json.dumps({"id": "chatcmpl-x", "choices": []}).encode())
            return 200
        if fault == "slow":
            time.sleep(srv.slow_s)
        status, reply = srv.answer(body)
        self._send(status, json.dumps(reply, ensure_ascii=False).encode("utf-8"), cut=fault == "truncate")
        return status


def serve(
    model: str,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    results: Path | None = None,
    faults: str | None = None,
    log_path: Path | None = None,
    api_key: str | None = None,
    retry_after_s: float = 1.0,
    slow_s: float = 5.0,
    delay_s: float = 0.0,
) -> ChatServer:
    """A bound (not yet serving) server; call ``serve_forever`` on it, or run it in a thread."""
    served = build_served_model(model, results)
    index = SampleIndex(Store(results / "store")) if results is not None and model == "oracle" else None
    return ChatServer(
        (host, port),
        served,
        faults=FaultPlan.parse(faults),
        log_path=log_path,
        index=index,
        api_key=api_key,
        retry_after_s=retry_after_s,
        slow_s=slow_s,
        delay_s=delay_s,
    )


def read_log(path: Path) -> list[dict[str, Any]]:
    """The request log as a list of entries (for tests and audits)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def answered_twice(entries: list[dict[str, Any]]) -> list[str]:
    """Body hashes that were answered successfully (HTTP 200, no fault) more than once."""
    seen: dict[str, int] = {}
    for e in entries:
        if e.get("status") == 200 and e.get("fault") == "ok" and not e.get("client_gone"):
            seen[e["hash"]] = seen.get(e["hash"], 0) + 1
    return sorted(h for h, n in seen.items() if n > 1)
