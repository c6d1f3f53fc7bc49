"""Bounded retries with exponential backoff and full jitter that honour ``Retry-After``.

Kept free of HTTP so the policy can be tested with a fake clock: the adapter turns each
failed attempt into a :class:`~shredfold.calls.ModelCallError` (``transient`` and an
optional ``retry_after``) and :func:`call_with_retries` decides whether and how long to wait.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from shredfold.calls import ModelCallError

T = TypeVar("T")

# Status codes worth another try: rate limited, timed out upstream, or a server-side fault.
TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class RetryableError(ModelCallError):
    """A transient failure, with the server's ``Retry-After`` (seconds) when it sent one."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(message, transient=True, status=status)
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    base_s: float = 0.5
    cap_s: float = 30.0
    # A server asking for more than this is treated as "give up on this item for now": the
    # item becomes an error and is retried on the next run rather than stalling the cell.
    max_retry_after_s: float = 120.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Full jitter (AWS architecture blog): uniform in [0, min(cap, base·2^attempt)]."""
        return rng.uniform(0.0, min(self.cap_s, self.base_s * (2**attempt)))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP-date.

    Fractional seconds are accepted too (not in RFC 9110, but harmless and handy in tests).
    """
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def call_with_retries(
    attempt_once: Callable[[], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
    on_retry: Callable[[int, ModelCallError, float], None] | None = None,
) -> T:
    """Call ``attempt_once`` until it succeeds, fails permanently, or attempts run out.

    The wait before attempt ``k+1`` is the server's ``Retry-After`` when given (never less),
    else exponential backoff with full jitter. The last error is raised, prefixed with the
    number of attempts made, so the item's recorded error names its cause.
    """
    rng = rng or random.Random()
    for attempt in range(policy.max_attempts):
        try:
            return attempt_once()
        except ModelCallError as exc:
            last = attempt + 1 == policy.max_attempts
            retry_after = getattr(exc, "retry_after", None)
            if not exc.transient or last or (
                retry_after is not None and retry_after > policy.max_retry_after_s
            ):
                raise ModelCallError(
                    f"after {attempt + 1} attempt(s): {exc}", transient=exc.transient, status=exc.status
                ) from None
            if retry_after is not None:
                # A little jitter on top, so clients told the same instant do not stampede.
                wait = retry_after + rng.uniform(0.0, 0.1 * retry_after)
            else:
                wait = policy.backoff(attempt, rng)
            if on_retry is not None:
                on_retry(attempt + 1, exc, wait)
            sleep(wait)
    raise AssertionError("unreachable: max_attempts >= 1")
