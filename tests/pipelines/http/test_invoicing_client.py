"""The httpx client against an in-memory API: token, pacing, 429/5xx, connection errors, messages."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import httpx
import pytest

from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.client import USER_AGENT, InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.http.ratelimit import RateLimiter
from tests.pipelines.invoicing_fakes import BASE_URL, CLIENT_ID, CLIENT_SECRET, SERVER_NOW, FakeApi, FakeClock


def make_client(api: FakeApi, clock: FakeClock | None = None, **options) -> InvoicingClient:
    clock = clock or FakeClock()
    options.setdefault("rate_limit_per_s", 0)
    options.setdefault("shared_budget", False)  # a simulated clock cannot pace on the machine's real budget
    return InvoicingClient(ClientSettings(BASE_URL, CLIENT_ID, CLIENT_SECRET, **options), transport=api.transport(),
                           clock=clock, sleep=clock.sleep)


def token_requests(api: FakeApi) -> int:
    return sum(1 for r in api.requests if r.url.path.endswith("/oauth2/token"))


def test_token_is_requested_once_with_basic_auth_and_read_scope_then_reused():
    api = FakeApi()
    with make_client(api) as client:
        for _ in range(5):
            assert client.get("/me") == {"id": "u1", "name": "Ada"}
    assert token_requests(api) == 1
    token_request = api.requests[0]
    assert token_request.method == "POST"
    assert dict(httpx.QueryParams(token_request.content.decode())) == {
        "grant_type": "client_credentials", "scope": "read"}
    assert all(r.headers["authorization"] == "Bearer token-1" for r in api.requests[1:])


def test_every_request_names_the_client_in_its_user_agent():
    api = FakeApi()
    with make_client(api) as client:
        client.get("/me")
    assert USER_AGENT == "invoicing-warehouse/0.1.0"
    assert [r.headers["user-agent"] for r in api.requests] == [USER_AGENT, USER_AGENT]


def test_token_is_renewed_shortly_before_expires_in_runs_out():
    api, clock = FakeApi(expires_in=300), FakeClock()
    with make_client(api, clock) as client:
        client.get("/me")
        clock.t += 200  # 100 s left: still used
        client.get("/me")
        assert token_requests(api) == 1
        clock.t += 50  # 50 s left: inside the renewal margin
        client.get("/me")
    assert token_requests(api) == 2
    assert api.requests[-1].headers["authorization"] == "Bearer token-2"


def test_accesstoken_expireat_header_shortens_the_tokens_life():
    # expires_in says a week, but the server says the token ends in 90 s (by its own Date header)
    api, clock = FakeApi(expire_at=SERVER_NOW + timedelta(seconds=90)), FakeClock()
    with make_client(api, clock) as client:
        client.get("/me")
        clock.t += 20  # 70 s left
        client.get("/me")
        assert token_requests(api) == 1
        clock.t += 20  # 50 s left
        client.get("/me")
    assert token_requests(api) == 2


def test_a_401_fetches_a_new_token_once_and_resends():
    api = FakeApi()
    with make_client(api) as client:
        client.get("/me")
        api.valid_tokens.clear()  # revoked server-side
        assert client.get("/me")["id"] == "u1"
    assert token_requests(api) == 2
    assert [(path, auth.split()[0] if auth.startswith("Basic") else auth) for path, auth in api.sent] == [
        ("/oauth2/token", "Basic"), ("/me", "Bearer token-1"),
        ("/me", "Bearer token-1"), ("/oauth2/token", "Basic"), ("/me", "Bearer token-2")]


def test_a_second_401_is_an_error_and_not_a_loop():
    api = FakeApi()
    api.valid_tokens = type("Never", (set,), {"__contains__": lambda self, item: False})()
    with make_client(api) as client, pytest.raises(InvoicingApiError) as caught:
        client.get("/documents")
    assert token_requests(api) == 2
    assert caught.value.kind == "credentials" and caught.value.status == 401
    assert "GET /documents" in str(caught.value) and "invalid token" in str(caught.value)


def test_a_401_for_a_token_another_thread_replaced_is_resent_with_the_newer_one():
    # Drives the auth flow by hand: request A was sent with token-1; while it was in flight another
    # thread got a 401 too and fetched token-2, which has since been revoked as well (a server revoking
    # tokens every few requests). A must be re-sent with token-2, then fetch token-3 itself, and succeed.
    from pipelines.invoicing.http.auth import TokenAuth, TokenGrant

    issued = iter(["token-1", "token-2", "token-3", "token-4"])
    auth = TokenAuth(lambda: TokenGrant(next(issued), 3600))
    flow = auth.auth_flow(httpx.Request("GET", "http://127.0.0.1/me"))
    sent = flow.send(None)
    assert sent.headers["Authorization"] == "Bearer token-1"
    auth._valid_token(stale="token-1")  # the other thread's refresh
    sent = flow.send(httpx.Response(401))
    assert sent.headers["Authorization"] == "Bearer token-2"  # no fetch of its own for this one
    sent = flow.send(httpx.Response(401))
    assert sent.headers["Authorization"] == "Bearer token-3"
    with pytest.raises(StopIteration):
        flow.send(httpx.Response(200))
    assert auth.tokens_fetched == 3  # token-1, the other thread's token-2, A's own token-3


def test_bad_credentials_name_the_token_endpoint_and_the_api_text_but_not_the_secret():
    api = FakeApi()
    client = InvoicingClient(ClientSettings(BASE_URL, CLIENT_ID, "wrong-secret-xyz", rate_limit_per_s=0),
                             transport=api.transport())
    with client, pytest.raises(InvoicingApiError) as caught:
        client.get("/me")
    message = str(caught.value)
    assert caught.value.kind == "credentials"
    assert "POST /oauth2/token" in message and "HTTP 401" in message
    assert "client authentication failed" in message and "CLIENT_SECRET" in message
    assert "wrong-secret-xyz" not in message


def test_a_refused_read_scope_is_a_scope_error():
    api = FakeApi()
    api.token_scope_refused = True
    with make_client(api) as client, pytest.raises(InvoicingApiError) as caught:
        client.get("/me")
    assert caught.value.kind == "scope"
    assert "not allowed" in str(caught.value) and "'read' scope" in str(caught.value)


def test_insufficient_scope_403_carries_the_api_message():
    api = FakeApi()
    text = "The request is not authorized because the authorized scope is insufficient"
    with make_client(api) as client:
        client.get("/me")
        api.queued.append(httpx.Response(403, json={"error": text, "code": 403}))
        with pytest.raises(InvoicingApiError) as caught:
            client.get("/documents")
    assert caught.value.kind == "scope" and caught.value.status == 403
    assert "GET /documents" in str(caught.value) and text in str(caught.value)


def test_malformed_json_is_reported_with_the_endpoint():
    api = FakeApi()
    with make_client(api) as client:
        client.get("/me")
        api.queued.append(httpx.Response(200, text="<html>maintenance</html>"))
        with pytest.raises(InvoicingApiError) as caught:
            client.get("/items")
        api.queued.append(httpx.Response(200, json={"items": []}))
        with pytest.raises(InvoicingApiError) as missing_data:
            client.get("/items")
    assert caught.value.kind == "malformed" and "GET /items" in str(caught.value)
    assert "not JSON" in str(caught.value) and "<html>maintenance" in str(caught.value)
    assert "no 'data'" in str(missing_data.value)


def test_5xx_is_retried_with_backoff_then_succeeds():
    api, clock = FakeApi(), FakeClock()
    with make_client(api, clock, backoff_base_s=1.0) as client:
        client.get("/me")
        api.queued += [httpx.Response(503, json={"error": "busy", "code": 503}), httpx.Response(502,
                                                                                                text="bad gateway")]
        assert client.get("/me")["id"] == "u1"
        assert client.stats.snapshot()["retried"] == {"other": 2}
    assert 0.5 <= clock.sleeps[0] <= 1.0 and 1.0 <= clock.sleeps[1] <= 2.0  # exponential, jittered


def test_5xx_gives_up_after_the_bound_with_a_clear_error():
    api, clock = FakeApi(), FakeClock()
    with make_client(api, clock, max_retries=3) as client:
        client.get("/me")
        api.queued += [httpx.Response(500, json={"error": "database down", "code": 500})] * 10
        with pytest.raises(InvoicingApiError) as caught:
            client.get("/customers")
    assert caught.value.kind == "server" and caught.value.status == 500
    assert "database down" in str(caught.value) and "after 4 attempts" in str(caught.value)
    assert len(api.queued) == 10 - 4


def test_connection_errors_are_retried_after_first_contact():
    api, clock = FakeApi(), FakeClock()
    with make_client(api, clock) as client:
        client.get("/me")
        api.queued += [httpx.ReadError("connection reset"), httpx.RemoteProtocolError("dropped")]
        assert client.get("/me")["id"] == "u1"


def test_an_unreachable_base_url_fails_fast_with_the_url_in_the_message():
    api, clock = FakeApi(), FakeClock()
    api.queued += [httpx.ConnectError("[Errno 111] Connection refused")] * 10
    with make_client(api, clock) as client, pytest.raises(InvoicingApiError) as caught:
        client.get("/me")
    assert caught.value.kind == "unreachable"
    message = str(caught.value)
    assert BASE_URL in message and "Connection refused" in message and "BASE_URL" in message
    assert len(api.requests) == 3  # first attempt and two retries: a wrong URL is reported within seconds


def test_429_waits_as_ratelimit_ttl_says():
    api, clock = FakeApi(), FakeClock()
    with make_client(api, clock) as client:
        client.get("/me")
        api.queued.append(httpx.Response(429, json={"error": "too many requests", "code": 429},
                                         headers={"RateLimit-Limit": "10", "RateLimit-Remaining": "0",
                                                  "RateLimit-TTL": "2"}))
        started = clock.t
        assert client.get("/me")["id"] == "u1"
        assert 2.0 <= clock.t - started <= 2.2
        assert client.stats.snapshot()["throttled"] == {"other": 1}


def test_429_waits_until_a_retry_after_given_as_an_http_date():
    """RFC 9110: Retry-After is delay-seconds or an HTTP date; the date counts from the answer's own Date (one
    clock), here 7 s later (issue 44)."""
    api, clock = FakeApi(), FakeClock()
    with make_client(api, clock) as client:
        client.get("/me")
        api.queued.append(httpx.Response(429, json={"error": "too many requests", "code": 429},
                                         headers={"Date": "Sat, 28 Nov 2026 10:00:00 GMT",
                                                  "Retry-After": "Sat, 28 Nov 2026 10:00:07 GMT"}))
        started = clock.t
        assert client.get("/me")["id"] == "u1"
        assert 7.0 <= clock.t - started <= 7.2


def test_retry_after_values_as_rfc_9110_reads_them():
    from datetime import UTC, datetime

    from pipelines.invoicing.http.client import wait_seconds

    now = datetime(2026, 11, 28, 10, 0, 0, tzinfo=UTC)
    assert wait_seconds("3") == 3.0
    assert wait_seconds("Sat, 28 Nov 2026 10:01:30 GMT", now=now) == 90.0  # no Date: from the local clock
    assert wait_seconds("Sat, 28 Nov 2026 10:01:30 GMT", "Sat, 28 Nov 2026 10:01:00 GMT", now=now) == 30.0
    assert wait_seconds("Sat, 28 Nov 2026 09:00:00 GMT", now=now) == 0.0  # a date past: retry now
    assert wait_seconds("Sat, 28 Nov 2026 10:01:30 -0000", now=now) is None  # zone unknown (RFC 5322): absent
    for noise in ("soon", "-1", "inf", "nan", ""):
        assert wait_seconds(noise, now=now) is None


def test_429_without_headers_backs_off_with_jitter():
    api, clock = FakeApi(), FakeClock()
    with make_client(api, clock, backoff_base_s=1.0) as client:
        client.get("/me")
        api.queued += [httpx.Response(429, json={"error": "slow down", "code": 429})] * 2
        started = clock.t
        client.get("/me")
    assert 0.5 + 1.0 <= clock.t - started <= 1.0 + 2.0


def test_server_time_comes_from_the_date_header():
    api = FakeApi()
    with make_client(api) as client:
        client.get("/me")
        assert client.first_server_time == SERVER_NOW
        api.now = SERVER_NOW + timedelta(seconds=30)
        client.get("/me")
        assert client.first_server_time == SERVER_NOW
        assert client.last_server_time == SERVER_NOW + timedelta(seconds=30)


def test_limiter_never_grants_more_than_the_limit_in_any_one_second_window():
    clock = FakeClock()
    limiter = RateLimiter(10, clock=clock, sleep=clock.sleep)
    grants = []
    for _ in range(95):
        limiter.acquire()
        grants.append(clock.t)
    for start in grants:
        assert sum(1 for g in grants if start <= g < start + 1.0) <= 10
    rate = (len(grants) - 1) / (grants[-1] - grants[0])
    assert 9.1 <= rate <= 10.0  # span pacing at 9/s (safety 0.9, issue 33) after a first burst of 10


def test_limiter_pause_holds_everyone_back():
    clock = FakeClock()
    limiter = RateLimiter(10, clock=clock, sleep=clock.sleep)
    limiter.acquire()
    limiter.pause(3.0)
    before = clock.t
    limiter.acquire()
    assert clock.t - before >= 3.0


def test_one_limiter_paces_requests_from_many_threads_in_real_time():
    api = FakeApi()
    client = InvoicingClient(ClientSettings(BASE_URL, CLIENT_ID, CLIENT_SECRET, rate_limit_per_s=40),
                             transport=api.transport())
    stamps: list[float] = []
    lock = threading.Lock()

    def work():
        for _ in range(10):
            client.get("/me")
            with lock:
                stamps.append(time.monotonic())

    with client:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)
    stamps.sort()
    assert len(api.requests) == 41  # 40 GETs and one token
    span = stamps[-1] - stamps[0]
    assert span >= 39 / 40  # 41 grants can never be faster than the limit
    assert span < 39 / 40 / 0.97 + 0.5


def test_a_late_thread_does_not_cost_the_run_its_slot():
    clock = FakeClock()
    limiter = RateLimiter(10, clock=clock, sleep=clock.sleep)
    grants = []
    for index in range(60):
        limiter.acquire()
        grants.append(clock.t)
        if index % 7 == 3:
            clock.t += 0.02  # this request's thread was scheduled late
    for start in grants:
        assert sum(1 for g in grants if start <= g < start + 1.04) <= 10
    assert (len(grants) - 1) / (grants[-1] - grants[0]) >= 9.4


def test_sharing_the_machines_rate_budget_is_said_not_guessed_from_the_clock(tmp_path, monkeypatch):
    """Issue 29: a paced client shares the host's budget with every process of the machine unless told not to,
    and a client on a simulated clock that would share it is refused with the setting to use."""
    monkeypatch.setenv("INVOICING_RATE_BUDGET_DIR", str(tmp_path))
    api = FakeApi({"/documents": []})
    with InvoicingClient(ClientSettings(BASE_URL, CLIENT_ID, CLIENT_SECRET, rate_limit_per_s=10),
                         transport=api.transport()) as real:
        assert real.limiter.shares_budget
    with InvoicingClient(ClientSettings(BASE_URL, CLIENT_ID, CLIENT_SECRET, rate_limit_per_s=10, shared_budget=False),
                         transport=api.transport()) as alone:
        assert not alone.limiter.shares_budget
    clock = FakeClock()
    with pytest.raises(ValueError, match="shared_budget=False"):
        InvoicingClient(ClientSettings(BASE_URL, CLIENT_ID, CLIENT_SECRET, rate_limit_per_s=10),
                        transport=api.transport(), clock=clock, sleep=clock.sleep)
