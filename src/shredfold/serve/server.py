"""The server: a built-in model behind the OpenAI-compatible routes, counting arrivals of
each request body (for the fault schedule) and logging every request as a JSON line."""

from __future__ import annotations

import json
import logging
import socket
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from shredfold.calls import ModelCallError, Request, Response
from shredfold.chat_api import ApiError, BadRequest, ChatRequest
from shredfold.models.base import Model
from shredfold.serve.errors import ServeError
from shredfold.serve.faults import FaultPlan
from shredfold.serve.handler import Handler
from shredfold.serve.models import ItemIndex, build_served_model, served_index
from shredfold.serve.templates import to_request

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 2**20


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
        index: ItemIndex | None = None,
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
        super().__init__(address, Handler)
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
    index = served_index(model, results)
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
