"""Adapter for any OpenAI-compatible Chat Completions endpoint (OpenAI, Gemini, DashScope,
Mistral, Zhipu, vLLM, SGLang, Ollama, ``shredfold serve``).

Built on httpx rather than the ``openai`` SDK: httpx is already a pinned dependency, and we
need control the SDK hides or duplicates — our own retry policy (bounded, jittered, honours
``Retry-After`` and counts attempts per item), a plain ``POST`` that providers with partial
compatibility accept, errors that never echo the API key, and no extra fields sent.

Images go as base64 PNG data URLs, downscaled to ``images.max_side`` when larger. The API
key is read from the environment at call time and travels only in the Authorization header;
every string made from a reply (error excerpts, answers) is scrubbed of it
(:mod:`shredfold.models.secrets`) before it can reach a log, a manifest or the store.
Replies are read up to a bounded size and time, whatever the server sends.
"""

from __future__ import annotations

import io
import json
import logging
import os
import random
import threading
import time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shredfold.calls import ModelCallError, Request, Response
from shredfold.models.accounting import cost_usd, estimate_input_tokens
from shredfold.models.adapter import AdapterBase, adapter
from shredfold.models.base import data_url
from shredfold.models.endpoints import check_base_url, endpoint_url
from shredfold.models.image_tokens import sent_size
from shredfold.models.ratelimit import RateLimiter
from shredfold.models.retry import (
    TRANSIENT_STATUS,
    RetryableError,
    RetryPolicy,
    call_with_retries,
    parse_retry_after,
)
from shredfold.models.secrets import excerpt, scrub, scrub_answer
from shredfold.spec import ModelConfig

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)
# One INFO line per HTTP request would drown the job log; failures are logged by us.
logging.getLogger("httpx").setLevel(logging.WARNING)

# Bump when the request body built from the same Request changes: it is part of the identity,
# so answers to differently built bodies are never mixed up in the cache.
WIRE_VERSION = 1


# A reply larger than this is refused (answers are text; nothing sane comes near it), and an
# error body is read only this far: a broken or hostile server cannot exhaust our memory.
MAX_REPLY_BYTES = 32 * 2**20
MAX_ERROR_BYTES = 64 * 2**10
ERROR_EXCERPT_CHARS = 300


class MissingApiKeyError(RuntimeError):
    """The model names an API-key variable that is not set (or holds a value that cannot be
    sent): a configuration error that fails the job (before any call) rather than turning
    every item into an error."""


# ---------------------------------------------------------------- response body (boundary)


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _ChatMessage(_Lenient):
    content: str | list[dict[str, Any]] | None = None


class _Choice(_Lenient):
    message: _ChatMessage
    finish_reason: str | None = None


class _Usage(_Lenient):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ChatCompletion(_Lenient):
    """The part of a Chat Completions response we use; anything else is ignored."""

    model: str | None = None
    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None

    @property
    def text(self) -> str:
        content = self.choices[0].message.content
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        # Some servers return content as a list of typed parts.
        return "".join(p.get("text", "") for p in content if p.get("type") in ("text", None))


# ---------------------------------------------------------------- the adapter


def prepare_image(data: bytes, max_side: int) -> bytes:
    """The image as sent: unchanged when it fits in ``max_side``, else downscaled (Lanczos)
    in its own format (PNG stays PNG; JPEG stays JPEG at quality 95)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        size = sent_size(*img.size, max_side)
        if size == img.size:
            return data
        jpeg = img.format == "JPEG"
        # a palette piece is resampled in colour (Pillow resizes palette indices by nearest)
        small = (img.convert("RGBA") if img.mode == "P" else img).resize(size, Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        if jpeg:
            small.save(buf, format="JPEG", quality=95, optimize=False)
        else:
            small.save(buf, format="PNG", optimize=False)
        return buf.getvalue()


def image_size(png: bytes) -> tuple[int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        return img.size


@adapter("openai", builtin=False, concurrent=True)
class OpenAICompatible(AdapterBase):
    """A model behind a Chat Completions endpoint. Thread-safe: one client, shared pool.

    httpx and Pillow are imported where they are used: the registry imports this module to
    know the adapter, and planning must stay light.
    """

    @classmethod
    def config_problems(cls, config: ModelConfig) -> list[tuple[str, str]]:
        if not config.base_url or not config.model:
            return [("adapter", "adapter 'openai' needs 'base_url' and 'model'")]
        try:
            check_base_url(config.base_url)
        except ValueError as exc:
            return [("base_url", str(exc))]
        return []

    @classmethod
    def identity_of(cls, config: ModelConfig) -> dict[str, Any]:
        """Endpoint, adapter, endpoint model, decoding and what shapes the images sent.

        Two servers exposing the same model name (a provider's Qwen and a local vLLM Qwen)
        need not give the same answers, so the endpoint (normalised base URL) is part of it,
        unless the model file declares a ``cache_scope``: then that name stands in for the
        endpoint, and every endpoint declared with it shares answers (a local server that
        restarts on another port, a proxy in front of a provider).
        """
        assert config.base_url is not None
        return {
            "adapter": "openai",
            "wire": WIRE_VERSION,
            "endpoint": config.cache_scope if config.cache_scope is not None else endpoint_url(config.base_url),
            "model": config.model,
            "decoding": config.decoding.model_dump(mode="json"),
            "images": {"detail": config.images.detail, "max_side": config.images.max_side},
            "extra_body": config.extra_body,
        }

    def __init__(
        self,
        config: ModelConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Any = time.sleep,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        if config.base_url is None or config.model is None:
            raise ValueError(f"model {config.id!r}: adapter 'openai' needs base_url and model")
        self.config = config
        self.policy = RetryPolicy(max_attempts=config.max_attempts, base_s=config.backoff_s)
        self.limiter = RateLimiter(
            config.requests_per_minute, config.tokens_per_minute, share=config.endpoint_slots
        )
        self._sleep = sleep
        self.max_reply_bytes = max_reply_bytes
        self._rng = random.Random()
        self._lock = threading.Lock()
        self._transport = transport
        self._client: httpx.Client | None = None

    def _http(self) -> httpx.Client:
        import httpx

        # Made on first call, not in __init__: an httpx client (with its TLS context) costs a
        # good part of a second, which a model that fails check_ready or is never asked skips.
        with self._lock:
            if self._client is None:
                cfg = self.config
                self._client = httpx.Client(
                    base_url=cfg.base_url or "",
                    timeout=httpx.Timeout(cfg.timeout_s, connect=min(10.0, cfg.timeout_s)),
                    limits=httpx.Limits(
                        max_connections=cfg.max_concurrency,
                        max_keepalive_connections=cfg.max_concurrency,
                    ),
                    headers={"User-Agent": "shredfold", "Content-Type": "application/json"},
                    transport=self._transport,
                )
            return self._client

    # -- identity and body

    def body(self, request: Request) -> dict[str, Any]:
        """The JSON body sent for ``request`` (no secrets, no bookkeeping fields)."""
        cfg = self.config
        messages: list[dict[str, Any]] = []
        for m in request.messages:
            if not m.images:
                messages.append({"role": m.role, "content": m.text})
                continue
            parts: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text else []
            for png in m.images:
                image_url: dict[str, Any] = {"url": data_url(prepare_image(png, cfg.images.max_side))}
                if cfg.images.detail != "auto":
                    image_url["detail"] = cfg.images.detail
                parts.append({"type": "image_url", "image_url": image_url})
            messages.append({"role": m.role, "content": parts})
        dec = cfg.decoding
        body: dict[str, Any] = {"model": cfg.model, "messages": messages, dec.max_tokens_field: dec.max_tokens}
        if dec.temperature is not None:
            body["temperature"] = dec.temperature
        if dec.top_p is not None:
            body["top_p"] = dec.top_p
        if dec.seed is not None:
            body["seed"] = dec.seed
        body.update(cfg.extra_body)
        return body

    # -- secrets

    def _api_key(self) -> str | None:
        name = self.config.api_key_env
        if name is None:
            return None
        key = os.environ.get(name)
        if not key:
            raise MissingApiKeyError(
                f"model {self.config.id!r}: environment variable {name} is not set (it should "
                "hold the API key; for a local server without auth, set it to any value such "
                "as EMPTY, or set api_key_env: null in the model file)"
            )
        if not all("!" <= c <= "~" for c in key):
            # httpx would refuse the header with an error quoting it; say why, not what.
            raise MissingApiKeyError(
                f"model {self.config.id!r}: environment variable {name} holds whitespace, "
                "control or non-ASCII characters, which an API key cannot have (a trailing "
                "newline from a file?)"
            )
        return key

    def check_ready(self) -> None:
        """Fail early, before any call, when the key is missing."""
        self._api_key()

    # -- calls

    def complete(self, request: Request) -> Response:
        key = self._api_key()
        payload = json.dumps(self.body(request), ensure_ascii=False).encode("utf-8")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        # Tokens-per-minute budget: the input estimate plus the most the answer may take.
        budget = estimate_input_tokens(request.text, [image_size(p) for p in request.images])
        budget += self.config.decoding.max_tokens
        client = self._http()

        def once() -> tuple[ChatCompletion, float]:
            # Every attempt counts against the provider's limits, retries included.
            self.limiter.before(budget)
            try:
                completion, latency = post()
            except ModelCallError:
                self.limiter.after(budget, 0)
                raise
            usage = completion.usage or _Usage()
            self.limiter.after(budget, usage.prompt_tokens + usage.completion_tokens)
            return completion, latency

        def post() -> tuple[ChatCompletion, float]:
            import httpx

            t0 = time.perf_counter()
            status = 0
            try:
                with client.stream("POST", "chat/completions", content=payload, headers=headers) as reply:
                    status = reply.status_code
                    content = self._read(reply, t0, MAX_ERROR_BYTES if status != 200 else None)
                    retry_after = parse_retry_after(reply.headers.get("Retry-After"))
                    encoding = reply.encoding or "utf-8"
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                if status == 200:
                    # An answer cut off (or stalled) after its 200: billed, and asked again
                    # only as the model file says (retry_malformed, in the cached asker).
                    raise ModelCallError(
                        scrub(f"body cut off (HTTP 200): {type(exc).__name__}: {exc}", key), transient=False, status=200
                    ) from None
                if isinstance(exc, httpx.TimeoutException):
                    raise RetryableError(f"timeout ({type(exc).__name__}) after {self.config.timeout_s:g}s") from None
                if isinstance(exc, httpx.RemoteProtocolError):
                    raise RetryableError(scrub(f"truncated or broken response: {exc}", key)) from None
                raise RetryableError(
                    scrub(f"connection error: {type(exc).__name__}: {exc}", key)
                ) from None
            latency = time.perf_counter() - t0
            if status != 200:
                # Scrubbed before it is cut: a key echoed near the cut must not leave its start.
                text = content.decode(encoding, errors="replace")
                detail = excerpt(text, key, ERROR_EXCERPT_CHARS)
                msg = f"HTTP {status}" + (f": {detail}" if detail else "")
                if status in TRANSIENT_STATUS:
                    raise RetryableError(msg, status=status, retry_after=retry_after)
                raise ModelCallError(msg, transient=False, status=status)
            try:
                return ChatCompletion.model_validate_json(content), latency
            except ValidationError as exc:
                # Not retried here: a provider bills a 200 whatever its body, so asking again
                # is the model file's choice (retry_malformed, applied by the cached asker,
                # which records each in the spend ledger).
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "body"
                raise ModelCallError(
                    scrub(f"malformed body (HTTP 200): {where}: {first['msg']}", key), transient=False, status=200
                ) from None

        def on_retry(attempt: int, exc: ModelCallError, wait: float) -> None:
            log.info(
                "%s: attempt %d failed (%s); retrying in %.2fs",
                self.config.id, attempt, scrub(str(exc), key), wait,
            )

        with self._lock:
            rng = random.Random(self._rng.random())
        try:
            completion, latency = call_with_retries(
                once, self.policy, sleep=self._sleep, rng=rng, on_retry=on_retry
            )
        except ModelCallError as exc:
            # The message is what the stages log and record on the item: one last pass over
            # all of it, whatever was added around the scrubbed parts.
            raise ModelCallError(scrub(str(exc), key), transient=exc.transient, status=exc.status) from None
        usage = completion.usage or _Usage()
        choice = completion.choices[0]
        return Response(
            text=scrub_answer(completion.text, key),
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            latency_s=latency,
            cost_usd=cost_usd(self.config, usage.prompt_tokens, usage.completion_tokens),
            finish_reason=None if choice.finish_reason is None else scrub_answer(choice.finish_reason, key),
            served_model=None if completion.model is None else scrub_answer(completion.model, key),
        )

    def _read(self, reply: httpx.Response, t0: float, limit: int | None) -> bytes:
        """The reply's body, at most ``limit`` bytes of it (an error body) or refused past
        :attr:`max_reply_bytes`; the attempt's whole time is bounded by ``timeout_s`` (httpx's
        timeout is per read, so a server dripping bytes would otherwise hold it for ever)."""
        import httpx

        chunks: list[bytes] = []
        size = 0
        for chunk in reply.iter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if limit is not None and size >= limit:
                return b"".join(chunks)[:limit]
            if size > self.max_reply_bytes:
                raise ModelCallError(
                    f"HTTP {reply.status_code}: reply larger than {self.max_reply_bytes} bytes; "
                    "refused",
                    transient=False,
                    status=reply.status_code,
                )
            if time.perf_counter() - t0 > self.config.timeout_s:
                raise httpx.ReadTimeout("reply still arriving")
        return b"".join(chunks)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
