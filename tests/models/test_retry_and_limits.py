"""Retry policy and rate limits, on a fake clock so the waits are exact and instant."""

import email.utils
import random

import pytest

from shredfold.calls import ModelCallError
from shredfold.models.ratelimit import RateLimiter, TokenBucket
from shredfold.models.retry import RetryableError, RetryPolicy, call_with_retries, parse_retry_after


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.now += s


def failing(errors: list[Exception], answer: str = "ok"):
    calls = []

    def attempt() -> str:
        calls.append(1)
        if errors:
            raise errors.pop(0)
        return answer

    return attempt, calls


def test_transient_errors_are_retried_until_success() -> None:
    clock = FakeClock()
    attempt, calls = failing([RetryableError("HTTP 500"), RetryableError("timeout")])
    assert call_with_retries(attempt, RetryPolicy(max_attempts=5), sleep=clock.sleep) == "ok"
    assert len(calls) == 3 and len(clock.sleeps) == 2


def test_retry_after_is_honoured_never_shortened() -> None:
    clock = FakeClock()
    attempt, _ = failing([RetryableError("HTTP 429", status=429, retry_after=7.0)])
    call_with_retries(attempt, RetryPolicy(base_s=0.01), sleep=clock.sleep)
    assert 7.0 <= clock.sleeps[0] <= 7.7  # at most 10 % jitter on top


def test_backoff_is_jittered_exponential_and_capped() -> None:
    policy = RetryPolicy(base_s=1.0, cap_s=5.0)
    rng = random.Random(0)
    for attempt in range(8):
        waits = [policy.backoff(attempt, rng) for _ in range(200)]
        bound = min(5.0, 2.0**attempt)
        assert min(waits) >= 0.0 and max(waits) <= bound
        assert max(waits) > 0.8 * bound  # full jitter spreads over the whole range


def test_attempts_are_bounded_and_the_error_says_how_many() -> None:
    clock = FakeClock()
    attempt, calls = failing([RetryableError(f"HTTP 503 #{i}", status=503) for i in range(10)])
    with pytest.raises(ModelCallError, match=r"after 3 attempt\(s\): HTTP 503 #2") as err:
        call_with_retries(attempt, RetryPolicy(max_attempts=3), sleep=clock.sleep)
    assert len(calls) == 3 and err.value.status == 503


def test_permanent_errors_are_not_retried() -> None:
    attempt, calls = failing([ModelCallError("HTTP 400: bad image", status=400)])
    with pytest.raises(ModelCallError, match="after 1 attempt"):
        call_with_retries(attempt, RetryPolicy(), sleep=FakeClock().sleep)
    assert len(calls) == 1


def test_an_absurd_retry_after_gives_up_on_the_item_for_this_run() -> None:
    attempt, calls = failing([RetryableError("HTTP 429", status=429, retry_after=3600.0)])
    with pytest.raises(ModelCallError, match="429"):
        call_with_retries(attempt, RetryPolicy(), sleep=FakeClock().sleep)
    assert len(calls) == 1


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after(" 0.25 ") == 0.25
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert parse_retry_after(date, now=1_000_000.0) == pytest.approx(30.0)
    assert parse_retry_after(date, now=2_000_000.0) == 0.0


def test_token_bucket_paces_requests_per_minute() -> None:
    clock = FakeClock()
    bucket = TokenBucket(120, clock=clock, sleep=clock.sleep)  # 2 per second, burst of 2
    for _ in range(6):
        bucket.acquire()
    # Two from the initial burst, then one every half second.
    assert clock.now == pytest.approx(2.0)


def test_token_budget_is_settled_with_the_true_count() -> None:
    clock = FakeClock()
    limiter = RateLimiter(None, 6000, clock=clock, sleep=clock.sleep)  # 100 tokens/s
    assert limiter.before(1000) == 0.0
    limiter.after(1000, 11000)  # the call used 10000 more than estimated: 5000 in debt
    limiter.before(1000)
    assert clock.now == pytest.approx(60.0)  # (5000 + 1000) / 100 per second


def test_parallel_jobs_split_the_quota() -> None:
    clock = FakeClock()
    limiter = RateLimiter(60, None, share=2, clock=clock, sleep=clock.sleep)
    for _ in range(4):
        limiter.before(0)
    assert clock.now == pytest.approx(6.0)  # 30 a minute each: one every 2 s after the first
