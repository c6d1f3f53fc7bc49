"""``shredfold serve``: a built-in model behind an OpenAI-compatible endpoint.

For tests and local use: ``POST /v1/chat/completions`` (plain or streamed, ``n`` choices),
``GET /v1/models`` and ``GET /v1/models/{id}``; every failure is answered with OpenAI's JSON
error object and its status, never a dropped connection (the shapes are in
:mod:`shredfold.chat_api`). Bodies are bounded (``max_body_bytes``, checked before reading).

The server turns the Chat Completions body back into the very
:class:`~shredfold.calls.Request` the model would get in-process: roles, texts, the
PNG bytes of each data-URL image, and the template inferred from the prompt's wording. The
oracle also needs the sample key, which is never sent; with ``--results`` the server finds
it from the image bytes (every sample's pieces and composite are indexed by SHA-256).

Faults are injected by a deterministic schedule (see :class:`FaultPlan`), and every request
is logged as a JSON line (body hash, arrival number, status, fault, in-flight count) so tests
can count what was answered.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from shredfold.calls import ModelCallError, Request, Response
from shredfold.chat_api import (
    ApiError,
    BadRequest,
    ChatRequest,
    chunks,
    completion,
    model_object,
    parse_body,
    sse,
    to_request,
    usage,
)
from shredfold.models.accounting import estimate_input_tokens
from shredfold.models.base import Model
from shredfold.models.openai_compat import image_size
from shredfold.spec import ModelConfig
from shredfold.store import Store, canonical_json, sha256_bytes

log = logging.getLogger(__name__)

FAULTS = ("ok", "429", "500", "503", "slow", "truncate", "malformed", "no-choices", "reset")



class ServeError(ValueError):
    """``shredfold serve`` cannot start: an unknown model, a bad fault schedule, an address
    it cannot listen on. The message names the cause (the CLI prints it and exits 2)."""


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
    """SHA-256 of every stored sample image → sample key; rebuilt when a hash is unknown.

    Besides the stored pieces and composite, each composite's paper-protocol rendition
    (:func:`~shredfold.shred.presentation.paper_image`) is indexed: it is made when a request
    is built, never stored."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._by_hash: dict[str, str] = {}
        self._seen: set[str] = set()
        self._rendered: set[str] = set()
        self._lock = threading.Lock()

    def _refresh(self, renditions: bool) -> None:
        from shredfold.shred.presentation import paper_image
        from shredfold.shred.sample_folder import COMPOSITE_FILE, SAMPLE_STAGE, load_public

        seen = self._rendered if renditions else self._seen
        for key in self.store.keys(SAMPLE_STAGE):
            if key in seen:
                continue
            obj = self.store.object(SAMPLE_STAGE, key)
            if not obj.has(COMPOSITE_FILE):  # a sample of an older layout: no request shows it
                seen.add(key)
                continue
            public = load_public(obj)
            # The paper rendition costs an encode per sample: only looked for when the
            # stored images do not match.
            images = [paper_image(public.composite)] if renditions else [*public.pieces, public.composite]
            for data in images:
                self._by_hash[hashlib.sha256(data).hexdigest()] = key
            seen.add(key)

    def item_for(self, images: list[bytes]) -> str | None:
        if not images:
            return None
        digest = hashlib.sha256(images[0]).hexdigest()
        with self._lock:
            for renditions in (False, True):
                if digest not in self._by_hash:
                    self._refresh(renditions)
            return self._by_hash.get(digest)


def build_served_model(name: str, results: Path | None) -> Model:
    if name == "echo":
        return Echo(ModelConfig(id="echo", adapter="oracle"))
    from shredfold.models import registry

    if name not in registry.builtin_names():
        raise ServeError(f"unknown model {name!r}; serve one of: echo, {', '.join(registry.builtin_names())}")
    store = Store((results or Path("results")) / "store")
    return registry.build_model(registry.builtin_config(name), store)


# ---------------------------------------------------------------- the server


MAX_BODY_BYTES = 64 * 2**20
# After refusing a body it did not read, the server reads and drops what the client is still
# sending, for at most this long, so that closing does not reset the connection before the
# client has read the refusal.
LINGER_S = 2.0

# Path → the one method it answers.
ROUTES = {"/v1/chat/completions": "POST", "/v1/models": "GET"}


def _route(path: str) -> str | None:
    path = path.rstrip("/")
    return ROUTES.get(path) or ("GET" if path.startswith("/v1/models/") else None)


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
        max_body_bytes: int = MAX_BODY_BYTES,
        read_timeout_s: float = 120.0,
    ) -> None:
        # Everything server_close needs is set before binding: a failed bind calls it.
        self._lock = threading.Condition()
        self._log = None
        self.model = model
        self.name = str(getattr(model.config, "id", "model"))
        self.created = int(time.time())
        self.faults = faults or FaultPlan()
        self.index = index
        self.api_key = api_key
        self.retry_after_s = retry_after_s
        self.slow_s = slow_s
        self.delay_s = delay_s
        self.max_body_bytes = max_body_bytes
        self.read_timeout_s = read_timeout_s
        self._arrivals: dict[str, int] = {}
        self._in_flight = 0
        self.log_path = log_path
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)
        if log_path is not None:
            try:
                self._log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115
            except OSError as exc:
                self.server_close()
                raise ServeError(f"cannot write the request log {log_path}: {exc.strerror or exc}") from None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/v1"

    def arrive(self, body_hash: str) -> tuple[int, int]:
        with self._lock:
            n = self._arrivals.get(body_hash, 0)
            self._arrivals[body_hash] = n + 1
            self._in_flight += 1
            return n, self._in_flight

    def leave(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._in_flight -= 1
            self._write(entry)
            self._lock.notify_all()

    def note(self, entry: dict[str, Any]) -> None:
        """Log a request refused before its body was read (it never arrived as a body)."""
        with self._lock:
            self._write(entry)

    def _write(self, entry: dict[str, Any]) -> None:
        if self._log is not None and not self._log.closed:
            self._log.write(json.dumps(entry, sort_keys=True) + "\n")
            self._log.flush()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no request is being handled (its log line is written after the reply)."""
        with self._lock:
            return self._lock.wait_for(lambda: self._in_flight == 0, timeout)

    def server_close(self) -> None:
        super().server_close()
        with self._lock:
            if self._log is not None:
                self._log.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A handler that failed past the point where it could answer (the client went away
        # mid-reply, say): one line, not socketserver's traceback on stderr.
        exc = sys.exc_info()[1]
        log.warning("request from %s failed: %s: %s", client_address, type(exc).__name__, exc)

    # -- answering

    def answer(self, chat: ChatRequest) -> tuple[Request, Response]:
        """The served model's answer to a validated body, or :class:`ApiError`."""
        if chat.model != self.name:
            raise ApiError(
                404,
                f"the model {chat.model!r} does not exist; this server serves {self.name!r}",
                param="model",
                code="model_not_found",
            )
        try:
            request = to_request(chat)
        except BadRequest as exc:
            raise ApiError(400, str(exc), param=exc.param) from None
        try:
            if self.index is not None:
                request = request.model_copy(update={"item": self.index.item_for(request.images)})
            if self.delay_s:
                time.sleep(self.delay_s)
            return request, self.model.complete(request)
        except ModelCallError as exc:
            raise ApiError(503 if exc.transient else 422, str(exc), code="model_error") from None
        except Exception as exc:  # noqa: BLE001 — any model failure is answered, never dropped
            log.warning("%s failed on a request: %s: %s", self.name, type(exc).__name__, exc)
            raise ApiError(
                500,
                f"model {self.name} failed on this request: {type(exc).__name__}: {str(exc)[:300]}",
                code="model_error",
            ) from None


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do
    # Headers and body go out in separate writes; with Nagle on, the client's delayed ACK
    # would stall every reply by ~40 ms.
    disable_nagle_algorithm = True
    # What an unparsable request line is answered in: a status line and headers, not
    # HTTP/0.9's bare body (no client speaks 0.9; every one reads a status).
    default_request_version = "HTTP/1.1"

    @property  # type: ignore[override]
    def timeout(self) -> float:
        # Socket reads and writes: a client that stops sending mid-body cannot hold a thread.
        return self.server.read_timeout_s

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    # -- sending

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None, cut: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command == "HEAD":
            return
        if cut:
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self._reset()
        else:
            self.wfile.write(payload)

    def _send_json(self, status: int, obj: dict[str, Any], headers: dict[str, str] | None = None, cut: bool = False) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode("utf-8"), headers, cut)

    def _fail(self, err: ApiError) -> None:
        self._send_json(err.status, err.body(), err.headers)

    def _refuse(self, err: ApiError) -> None:
        """Answer without reading the body: then the connection cannot carry another request."""
        self.close_connection = True
        self._fail(err)
        self.wfile.flush()
        self._linger()

    def _linger(self) -> None:
        try:
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + LINGER_S
            while (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(65536):
                    break
        except OSError:  # includes the timeout: the client kept sending; give up on it
            pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # Malformed request lines, oversized headers, unknown methods: JSON like every error.
        self.close_connection = True
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "error"
        self._fail(ApiError(code, message or phrase, code=phrase.lower().replace(" ", "_")))

    def _reset(self) -> None:
        # SO_LINGER 0: close() sends RST instead of FIN, as a crashed proxy would.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    # -- methods

    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        srv = self.server
        if path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [model_object(srv.name, srv.created)]})
        elif path.startswith("/v1/models/"):
            name = unquote(path.removeprefix("/v1/models/"))
            if name == srv.name:
                self._send_json(200, model_object(srv.name, srv.created))
            else:
                self._fail(ApiError(404, f"the model {name!r} does not exist", param="model", code="model_not_found"))
        elif _route(path) is not None:
            self._not_allowed()
        else:
            self._fail(ApiError(404, f"no such endpoint: GET {path or '/'}", code="not_found"))

    def _not_allowed(self) -> None:
        path = urlsplit(self.path).path
        allowed = _route(path)
        if allowed is None:
            err = ApiError(404, f"no such endpoint: {self.command} {path or '/'}", code="not_found")
        else:
            err = ApiError(
                405,
                f"method {self.command} is not allowed on {path}; use {allowed}",
                code="method_not_allowed",
                headers={"Allow": allowed},
            )
        # A body we did not read (a PUT's, say) would be taken for the next request.
        if self.headers.get("Content-Length", "0").strip() not in ("", "0") or "Transfer-Encoding" in self.headers:
            self._refuse(err)
        else:
            self._fail(err)

    do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    def _body_length(self) -> int:
        """The declared body length, checked before a byte of the body is read."""
        if "Transfer-Encoding" in self.headers:
            raise ApiError(400, "chunked request bodies are not supported; send Content-Length",
                           code="unsupported_transfer_encoding")  # fmt: skip
        values = {v.strip() for v in self.headers.get_all("Content-Length") or []}
        if not values:
            raise ApiError(400, "a Content-Length header is required", code="missing_content_length")
        if len(values) > 1 or not re.fullmatch(r"[0-9]{1,19}", next(iter(values))):
            shown = ", ".join(sorted(v[:30] for v in values))
            raise ApiError(400, f"bad Content-Length: {shown!r}", code="bad_content_length")
        length = int(next(iter(values)))
        if length > self.server.max_body_bytes:
            raise ApiError(
                413,
                f"request body of {length} bytes is over this server's limit of "
                f"{self.server.max_body_bytes} bytes (--max-body-mb)",
                code="request_too_large",
            )
        return length

    def _refuse_body(self, err: ApiError, t0: float) -> None:
        # Logged before the reply, so that a client holding the reply finds the line.
        self.server.note({"hash": None, "arrival": None, "in_flight": None, "t0": t0,
                          "t1": time.time(), "status": err.status, "fault": "ok"})  # fmt: skip
        self._refuse(err)

    def handle_expect_100(self) -> bool:
        # "Expect: 100-continue" (curl sends it for large bodies): refuse before the client
        # sends a body we would not read.
        if _route(urlsplit(self.path).path) == "POST" and self.command == "POST":
            try:
                self._body_length()
            except ApiError as err:
                self._refuse_body(err, time.time())
                return False
        return super().handle_expect_100()

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if _route(path) != "POST":
            self._not_allowed()
            return
        t0 = time.time()
        try:
            length = self._body_length()
        except ApiError as err:
            self._refuse_body(err, t0)
            return
        raw = self.rfile.read(length)
        if len(raw) < length:  # the client went away mid-body
            self.close_connection = True
            return
        # The raw bytes identify a request: our adapter serialises a given request identically
        # every time, and hashing megabytes of re-serialised JSON would cost as much again.
        body_hash = sha256_bytes(raw)
        arrival, in_flight = self.server.arrive(body_hash)
        entry: dict[str, Any] = {"hash": body_hash, "arrival": arrival, "in_flight": in_flight, "t0": t0}
        entry.update(status=0, fault="ok")
        try:
            entry["status"] = self._serve(raw, body_hash, arrival, entry)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            entry["client_gone"] = True
            self.close_connection = True
        finally:
            entry["t1"] = time.time()
            self.server.leave(entry)

    def _serve(self, raw: bytes, body_hash: str, arrival: int, entry: dict[str, Any]) -> int:
        """Answer one request (or fail it as scheduled); return the status sent (0: none)."""
        srv = self.server
        if srv.api_key is not None:
            given = self.headers.get("Authorization", "")
            if given != f"Bearer {srv.api_key}":
                # Like some real providers, echo what was sent: the client must scrub it.
                msg = f"invalid API key: {given.removeprefix('Bearer ')!r}"
                self._fail(ApiError(401, msg, code="invalid_api_key", kind="authentication_error"))
                return 401
        try:
            chat = parse_body(raw)
        except ApiError as err:
            self._fail(err)
            return err.status
        entry["stream"] = bool(chat.stream)
        fault = entry["fault"] = srv.faults.fault(body_hash, arrival)
        if fault == "reset":
            self._reset()
            return 0
        if fault in ("429", "503"):
            busy = fault == "429"
            self._fail(ApiError(
                int(fault), "slow down" if busy else "overloaded",
                code="rate_limit_exceeded" if busy else "overloaded",
                kind="rate_limit_error" if busy else "server_error",
                headers={"Retry-After": f"{srv.retry_after_s:g}"},
            ))  # fmt: skip
            return int(fault)
        if fault == "500":
            self._fail(ApiError(500, "internal error", code="internal_error"))
            return 500
        if fault == "malformed" and not chat.stream:
            self._send(200, b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "unterminated')
            return 200
        if fault == "no-choices" and not chat.stream:
            self._send_json(200, {"id": "chatcmpl-x", "object": "chat.completion", "choices": []})
            return 200
        if fault == "slow":
            time.sleep(srv.slow_s)
        try:
            request, response = srv.answer(chat)
        except ApiError as err:
            self._fail(err)
            return err.status
        prompt_tokens = estimate_input_tokens(request.text, [image_size(p) for p in request.images])
        completion_tokens = estimate_input_tokens(response.text, []) * chat.choices
        tokens = usage(prompt_tokens, completion_tokens)
        chat_id = "chatcmpl-" + sha256_bytes(canonical_json(chat.messages[-1].model_dump()))[:24]
        created = int(time.time())
        if chat.stream:
            events = list(chunks(chat_id, chat.model, created, response.text, chat.choices,
                                 tokens if chat.include_usage else None))  # fmt: skip
            if fault == "no-choices":
                events = [{**events[0], "choices": []}]
            self._stream(events, fault)
            return 200
        reply = completion(chat_id, chat.model, created, response.text, chat.choices, tokens)
        self._send_json(200, reply, cut=fault == "truncate")
        return 200

    def _stream(self, events: list[dict[str, Any]], fault: str) -> None:
        """Server-sent events in chunked transfer encoding, ``data: [DONE]`` last; the
        ``truncate`` fault resets the connection halfway, ``malformed`` sends a broken event."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        payloads = [sse(e) for e in events]
        if fault == "truncate":
            payloads = payloads[: max(1, len(payloads) // 2)]
        elif fault == "malformed":
            payloads.insert(1, b'data: {"id": "chatcmpl-x", "choices": [{"delta": {"content": "unterminated\n\n')
        for data in payloads:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        if fault == "truncate":
            self.wfile.flush()
            self._reset()
            return
        done = sse("[DONE]")
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))


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
    max_body_bytes: int = MAX_BODY_BYTES,
) -> ChatServer:
    """A bound (not yet serving) server; call ``serve_forever`` on it, or run it in a thread.

    Raises :class:`ServeError` naming the cause when it cannot be made.
    """
    try:
        plan = FaultPlan.parse(faults)
    except ValueError as exc:
        raise ServeError(f"--faults: {exc}") from None
    served = build_served_model(model, results)
    index = SampleIndex(Store(results / "store")) if results is not None and model == "oracle" else None
    try:
        return ChatServer(
            (host, port),
            served,
            faults=plan,
            log_path=log_path,
            index=index,
            api_key=api_key,
            retry_after_s=retry_after_s,
            slow_s=slow_s,
            delay_s=delay_s,
            max_body_bytes=max_body_bytes,
        )
    except (OSError, OverflowError) as exc:
        # OverflowError: a port outside 0-65535.
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ServeError(f"cannot listen on {host}:{port}: {reason}") from None

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
