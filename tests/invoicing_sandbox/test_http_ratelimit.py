"""The per-IP rate limiter: 10 requests per one-second window by default, 429 past it, headers always."""

from __future__ import annotations

import time

import httpx
import pytest

from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.ratelimit import FixedWindowLimiter, SlidingWindowLimiter, edge_limiter
from tests.invoicing_sandbox.conftest import client_for, small_config

# alone, after the parallel phase (scripts/test): the sandbox's one-second windows are met on the machine's clock
pytestmark = pytest.mark.serial


class FakeMonotonic:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_limiter_allows_the_limit_per_window_then_refuses():
    clock = FakeMonotonic(100.25)
    limiter = FixedWindowLimiter(SandboxConfig(rate_limit_per_s=10), monotonic=clock)
    decisions = [limiter.hit("10.0.0.1") for _ in range(11)]
    assert [d.allowed for d in decisions] == [True] * 10 + [False]
    assert [d.remaining for d in decisions] == [9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0]
    assert {d.ttl_s for d in decisions} == {1}
    assert limiter.hit("10.0.0.2").allowed  # per client IP
    clock.now = 101.0  # the next window
    assert limiter.hit("10.0.0.1").remaining == 9


def test_sliding_limiter_refuses_an_eleventh_request_in_any_one_second_span():
    # ten requests 100 ms apart at 100.00..100.90, then probes: a fixed window [100, 101) would take the one at
    # 101.00 and count afresh; the sliding second takes a request only once the one a second before it has left
    clock = FakeMonotonic(100.0)
    config = SandboxConfig(rate_limit_per_s=10, rate_limit_mode="sliding")
    assert isinstance(edge_limiter(config), SlidingWindowLimiter)
    limiter = SlidingWindowLimiter(config, monotonic=clock)
    first = []
    for i in range(10):
        clock.now = 100.0 + i / 10
        first.append(limiter.hit("10.0.0.1"))
    assert all(d.allowed for d in first) and [d.remaining for d in first] == list(range(9, -1, -1))
    clock.now = 100.95  # 10 in (99.95, 100.95]
    refused = limiter.hit("10.0.0.1")
    assert not refused.allowed and refused.remaining == 0 and refused.ttl_s == 1
    clock.now = 101.0  # the one at 100.00 is exactly a second old: out of the span (now - 1, now]
    assert limiter.hit("10.0.0.1").allowed
    clock.now = 101.05  # 100.10 .. 100.90 and 101.00: ten again (the refused one at 100.95 did not count)
    assert not limiter.hit("10.0.0.1").allowed
    assert limiter.hit("10.0.0.2").allowed  # per client IP
    assert limiter.max_in_any_second == 10
    assert isinstance(edge_limiter(SandboxConfig()), FixedWindowLimiter)
    with pytest.raises(ValueError, match="sliding"):
        edge_limiter(SandboxConfig(rate_limit_mode="token-bucket"))


def test_limiter_off_and_changed_at_run_time():
    config = SandboxConfig(rate_limit_per_s=0)
    limiter = FixedWindowLimiter(config, monotonic=FakeMonotonic())
    assert limiter.hit("10.0.0.1") is None
    config.rate_limit_per_s = 2
    assert [limiter.hit("10.0.0.1").allowed for _ in range(3)] == [True, True, False]


@pytest.fixture(scope="module")
def limited(module_sandbox_factory):
    return module_sandbox_factory(config=small_config(rate_limit_per_s=10), generate=False, real_date=True)


def wait_for_window_start() -> None:
    """Sleeps until just after a whole second of the monotonic clock the limiter's windows follow."""
    fraction = time.monotonic() % 1.0
    time.sleep(1.0 - fraction + 0.02)


def in_one_window(burst):
    """Runs `burst()` right after a window starts; again (at most 3 times) if a loaded machine made it
    spill into the next window, which would reset the count and void the test."""
    for _ in range(3):
        wait_for_window_start()
        window = int(time.monotonic())
        result = burst()
        if int(time.monotonic()) == window:
            return result
    raise AssertionError("could not send the burst inside one second")


def test_more_than_ten_requests_in_a_second_get_429(limited):
    with client_for(limited, "read") as client:
        responses = in_one_window(lambda: [client.get("/me") for _ in range(13)])
    statuses = [r.status_code for r in responses]
    assert statuses == [200] * 10 + [429] * 3
    refused = responses[10]
    assert refused.json() == {"error": "too many requests: limit is 10 per second", "code": 429}
    assert refused.headers["ratelimit-limit"] == "10"
    assert refused.headers["ratelimit-remaining"] == "0"
    assert refused.headers["ratelimit-ttl"] == "1"
    assert "retry-after" not in refused.headers
    assert [r.headers["ratelimit-remaining"] for r in responses[:10]] == [str(n) for n in range(9, -1, -1)]
    assert limited.stats["rate_limited"] >= 3


def test_nine_requests_per_second_for_three_seconds_pass(limited):
    with client_for(limited, "read") as client:
        wait_for_window_start()
        statuses = []
        sent = time.monotonic() - 1
        for _ in range(27):
            # never closer than 1/9 s to the previous request, even after a slow answer
            time.sleep(max(0.0, sent + 1 / 9 - time.monotonic()))
            sent = time.monotonic()
            statuses.append(client.get("/me").status_code)
    assert statuses == [200] * 27


def test_token_requests_count_toward_the_limit(limited):
    with httpx.Client(base_url=limited.base_url) as client:

        def burst():
            grants = [
                client.post(
                    "/oauth2/token",
                    auth=(limited.client_id, limited.client_secret),
                    data={"grant_type": "client_credentials", "scope": "read"},
                )
                for _ in range(10)
            ]
            token = grants[0].json()["access_token"]
            return grants, client.get("/me", headers={"Authorization": f"Bearer {token}"})

        grants, me = in_one_window(burst)
    assert [g.status_code for g in grants] == [200] * 10
    assert me.status_code == 429


def test_limit_can_be_turned_off_while_running(make_sandbox):
    server = make_sandbox(small_config(rate_limit_per_s=3), generate=False)
    with client_for(server, "read") as client:
        statuses = in_one_window(lambda: [client.get("/me").status_code for _ in range(4)])
        assert statuses == [200, 200, 200, 429]
        server.config.rate_limit_per_s = 0
        unlimited = [client.get("/me") for _ in range(20)]
    assert {r.status_code for r in unlimited} == {200}
    assert "ratelimit-limit" not in unlimited[0].headers
