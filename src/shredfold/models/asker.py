"""The one cached asker: a model call is paid for once, whoever asks.

Every request is keyed by the model's identity and the request itself
(:func:`~shredfold.calls.response_key`); an answer in the store is returned as is, a new
one is stored the moment it arrives (so a crash loses nothing answered). Failed calls raise
:class:`~shredfold.calls.ModelCallError` and are never stored. In replay-only mode any
call that would be made raises :class:`ReplayOnlyError` instead (audits). A model with a
``budget_usd`` reserves each call's worst case before it is made and settles it after
(:mod:`shredfold.models.budget`); a call that would exceed the budget is refused with a
``ModelCallError``. Thread-safe: a cell of an HTTP model asks ``max_concurrency`` requests at a
time through one asker.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from shredfold.calls import ModelCallError, Request, Response, response_key
from shredfold.models.base import Model
from shredfold.models.budget import Budget
from shredfold.models.envelope import cached_response, has_response, store_response
from shredfold.models.registry import build_model
from shredfold.spec import ModelConfig
from shredfold.store import Store

log = logging.getLogger(__name__)


class ReplayOnlyError(RuntimeError):
    """Raised in replay-only mode when a request is not in the cache."""


def replay_only_from_env() -> bool:
    return os.environ.get("SHREDFOLD_REPLAY_ONLY", "").lower() in ("1", "true", "yes")


@dataclass
class Answer:
    text: str
    meta: dict[str, Any] = field(default_factory=dict)  # response key, tokens, latency, cost, cached


def answer_meta(rkey: str, r: Response, cached: bool) -> dict[str, Any]:
    return {
        "response": rkey,
        "input_tokens": r.input_tokens,
        "output_tokens": r.output_tokens,
        "latency_s": r.latency_s,
        "cost_usd": r.cost_usd,
        "cached": cached,
    }


def billed_unreadable(exc: ModelCallError) -> bool:
    """An HTTP 200 whose body could not be used: billed, and asked again only
    ``retry_malformed`` times."""
    return exc.status == 200 and not exc.transient


class CachedAsker:
    """Answers requests from the response cache, calling the model only for new ones."""

    def __init__(
        self,
        name: str,
        config: ModelConfig,
        identity: dict[str, Any],
        store: Store,
        *,
        replay_only: bool = False,
        model: Model | None = None,
    ) -> None:
        self.name, self.config, self.identity, self.store = name, config, identity, store
        self.replay_only = replay_only
        self._model = model
        self.budget = Budget.of(config, store)
        self._lock = threading.Lock()
        self.called = self.cached = 0

    def key(self, request: Request) -> str:
        return response_key(self.identity, request)

    def has(self, rkey: str) -> bool:
        return has_response(self.store, rkey)

    def model(self) -> Model:
        with self._lock:
            if self._model is None:
                self._model = build_model(self.config, self.store)
                check_ready = getattr(self._model, "check_ready", None)
                if check_ready is not None:
                    check_ready()
            return self._model

    def ask(self, request: Request, rkey: str | None = None) -> Answer:
        rkey = rkey or self.key(request)
        hit = cached_response(self.store, rkey)
        if hit is not None:
            with self._lock:
                self.cached += 1
            return Answer(hit.text, answer_meta(rkey, hit, True))
        if self.replay_only:
            raise ReplayOnlyError(f"{self.name}: request {rkey[:12]} is not cached (replay-only)")
        model = self.model()
        budget = self.budget
        tries = 1 + self.config.retry_malformed
        for attempt in range(1, tries + 1):
            # Each call is reserved and settled on its own: an unreadable 200 was billed.
            ticket = budget.reserve(request, rkey) if budget is not None else None
            t0 = time.perf_counter()
            try:
                response = model.complete(request)
                break
            except ModelCallError as exc:
                if budget is not None and ticket is not None:
                    budget.failed(ticket, exc)
                if not billed_unreadable(exc):
                    raise
                if attempt == tries:
                    raise ModelCallError(
                        f"{exc} (a 200 whose body could not be read, {tries} time(s): retry_malformed is "
                        f"{self.config.retry_malformed})", transient=False, status=200,
                    ) from None  # fmt: skip
                log.warning("%s: request %s: %s; asking again (retry_malformed: %d)",
                            self.name, rkey[:12], exc, self.config.retry_malformed)  # fmt: skip
        if not response.latency_s:
            response.latency_s = time.perf_counter() - t0
        store_response(self.store, rkey, self.identity, request, response)
        if budget is not None and ticket is not None:
            budget.settle(ticket, response)
        with self._lock:
            self.called += 1
        return Answer(response.text, answer_meta(rkey, response, False))

    def __call__(self, request: Request) -> tuple[str, dict[str, Any]]:
        """The ``(text, meta)`` form an episode loop asks with."""
        a = self.ask(request)
        return a.text, a.meta

    def close(self) -> None:
        close = getattr(self._model, "close", None)
        if close is not None:
            close()
