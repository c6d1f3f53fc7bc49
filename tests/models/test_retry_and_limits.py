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


def test_a_retry_after_above_the_backoff_cap_is_still_honoured_in_full() -> None:
    # The backoff cap (30 s) bounds our own exponential waits, not what a server asks for:
    # a 45 s Retry-After (below the 120 s give-up limit) is waited in full.
    clock = FakeClock()
    attempt, calls = failing([RetryableError("HTTP 429", status=429, retry_after=45.0)])
    policy = RetryPolicy(cap_s=30.0, max_retry_after_s=120.0)
    assert call_with_retries(attempt, policy, sleep=clock.sleep, rng=random.Random(3)) == "ok"
    assert len(calls) == 2 and 45.0 <= clock.sleeps[0] <= 49.5


def test_retry_after_sets_the_wait_exactly_plus_seeded_jitter() -> None:
    # Jitter is uniform in [0, 10 %] of the server's wait, drawn from the injected generator.
    clock = FakeClock()
    attempt, _ = failing([RetryableError("HTTP 503", status=503, retry_after=20.0)])
    call_with_retries(attempt, RetryPolicy(), sleep=clock.sleep, rng=random.Random(7))
    assert clock.sleeps == [20.0 + random.Random(7).uniform(0.0, 2.0)]


def test_without_retry_after_the_wait_is_the_policy_backoff() -> None:
    clock = FakeClock()
    attempt, _ = failing([RetryableError("HTTP 500"), RetryableError("HTTP 500")])
    policy = RetryPolicy(base_s=1.0, cap_s=30.0)
    retries: list[tuple[int, float]] = []
    call_with_retries(
        attempt, policy, sleep=clock.sleep, rng=random.Random(5),
        on_retry=lambda n, exc, wait: retries.append((n, wait)),
    )
    rng = random.Random(5)
    want = [rng.uniform(0.0, 1.0), rng.uniform(0.0, 2.0)]  # base * 2^attempt, attempts 0, 1
    assert clock.sleeps == want and retries == [(1, want[0]), (2, want[1])]


def test_a_retry_after_at_the_give_up_limit_is_still_waited() -> None:
    clock = FakeClock()
    attempt, calls = failing([RetryableError("HTTP 429", status=429, retry_after=120.0)])
    call_with_retries(attempt, RetryPolicy(max_retry_after_s=120.0), sleep=clock.sleep)
    assert len(calls) == 2 and clock.sleeps[0] >= 120.0


def test_the_default_policy() -> None:
    # Five attempts, waits of at most 0.5 s * 2^attempt capped at 30 s, a Retry-After of up
    # to 120 s honoured and one beyond it given up on.
    attempt, calls = failing([RetryableError(f"HTTP 503 #{i}", status=503) for i in range(9)])
    with pytest.raises(ModelCallError, match="after 5 attempt"):
        call_with_retries(attempt, RetryPolicy(), sleep=FakeClock().sleep)
    assert len(calls) == 5
    rng = random.Random(1)
    assert max(RetryPolicy().backoff(0, rng) for _ in range(300)) == pytest.approx(0.5, abs=0.01)
    assert max(RetryPolicy().backoff(10, rng) for _ in range(300)) == pytest.approx(30.0, abs=0.5)
    assert min(RetryPolicy().backoff(10, rng) for _ in range(300)) < 1.0  # from 0, not from 1
    clock = FakeClock()
    attempt, calls = failing([RetryableError("HTTP 429", status=429, retry_after=120.0)])
    call_with_retries(attempt, RetryPolicy(), sleep=clock.sleep)
    assert len(calls) == 2 and clock.sleeps[0] >= 120.0
    attempt, calls = failing([RetryableError("HTTP 429", status=429, retry_after=120.5)])
    with pytest.raises(ModelCallError):
        call_with_retries(attempt, RetryPolicy(), sleep=FakeClock().sleep)
    assert len(calls) == 1


def test_a_policy_cannot_be_changed_after_it_is_made() -> None:
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        RetryPolicy().max_attempts = 50  # type: ignore[misc]


def test_which_statuses_are_worth_another_try() -> None:
    from shredfold.models.retry import TRANSIENT_STATUS

    # Timeouts, conflicts, "too early", rate limits and gateway/server faults (Cloudflare's
    # 52x and Anthropic's 529 overload included) are transient; client errors and
    # "not implemented" / "version not supported" are not.
    assert {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529} == TRANSIENT_STATUS


def test_a_negative_retry_after_means_now() -> None:
    assert parse_retry_after("-5") == 0.0
    assert parse_retry_after("0") == 0.0
