"""HTTP for ``shredfold serve``: routes, bounded bodies, JSON errors for every failure,
plain and streamed replies, and the scheduled faults applied to them."""

from __future__ import annotations

import json
import logging
import re
import socket
import struct
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from shredfold.chat_api import ApiError, chunks, completion, model_object, parse_body, sse, usage
from shredfold.models.accounting import estimate_input_tokens
from shredfold.models.openai_compat import image_size
from shredfold.store import canonical_json, sha256_bytes

if TYPE_CHECKING:
    from shredfold.serve.server import ChatServer

log = logging.getLogger(__name__)

# After refusing a body it did not read, the server reads and drops what the client is still
# sending, for at most this long, so that closing does not reset the connection before the
# client has read the refusal.
LINGER_S = 2.0

# Path → the one method it answers.
ROUTES = {"/v1/chat/completions": "POST", "/v1/models": "GET"}


def _route(path: str) -> str | None:
    path = path.rstrip("/")
    return ROUTES.get(path) or ("GET" if path.startswith("/v1/models/") else None)


class Handler(BaseHTTPRequestHandler):
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

