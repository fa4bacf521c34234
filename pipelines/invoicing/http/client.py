"""The one HTTP client of the Invoicing API v2: token, pacing, retries, errors a person can act on.

No dlt here: the client is plain httpx so that it can be tested against `httpx.MockTransport` and reused
anywhere. One `InvoicingClient` serves every thread of a run: the `httpx.Client`, the token and the rate
limiter are shared and thread-safe.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Self

import httpx

from pipelines.invoicing.errors import InvoicingApiError, api_message_of
from pipelines.invoicing.http.answers import parse_json, read_capped
from pipelines.invoicing.http.auth import TokenAuth, TokenGrant
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.http.database_budget import DatabaseBudget, budget_database_from_env
from pipelines.invoicing.http.host_budget import HostBudget
from pipelines.invoicing.http.ratelimit import RateLimiter, clamp_wait
from pipelines.invoicing.http.token_cache import TokenCache
from pipelines.invoicing.release import user_agent

USER_AGENT = user_agent()  # from the installed metadata (release.py)
TOKEN_PATH = "/oauth2/token"
MAX_429_RETRIES = 20
# Before the service has answered once, a refused connection is most likely a wrong base URL: give up fast.
RETRIES_BEFORE_FIRST_CONTACT = 2


def wait_seconds(value: str, date_header: str | None = None, now: datetime | None = None) -> float | None:
    """A `Retry-After` (or `RateLimit-TTL`) value in seconds: delay-seconds, or an HTTP date (RFC 9110 10.2.3)
    counted from the answer's own `Date` when it has a usable one (the two come from one clock), else from `now`;
    None for noise, a negative or infinite number, or a date without a zone (RFC 5322's `-0000`, L2)."""
    try:
        seconds = float(value)
    except ValueError:
        try:
            until = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if until.tzinfo is None:
            return None
        since = now or datetime.now(UTC)
        if date_header:
            try:
                stamped = parsedate_to_datetime(date_header)
                if stamped.tzinfo is not None:
                    since = stamped
            except (TypeError, ValueError):
                pass
        seconds = max(0.0, (until - since).total_seconds())
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class PacedTransport(httpx.BaseTransport):
    """Wraps a transport so that every request, token requests and retries included, waits its turn."""

    def __init__(self, inner: httpx.BaseTransport, limiter: RateLimiter) -> None:
        self.inner = inner
        self.limiter = limiter

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        grant = self.limiter.acquire()
        response = self.inner.handle_request(request)
        if response.status_code != 429:  # a 429 pauses the limiter instead (InvoicingClient._send)
            self.limiter.observe(grant, limit=_int_header(response, "ratelimit-limit"),
                                 remaining=_int_header(response, "ratelimit-remaining"))
        return response

    def close(self) -> None:
        self.inner.close()


def shared_budget_of(base_url: str) -> DatabaseBudget | HostBudget:
    """The budget every process calling `base_url`'s host paces on: in PostgreSQL, per egress IP and host, when a
    database is configured (database_budget.py: across hosts); else the machine's file (host_budget.py)."""
    database = budget_database_from_env()
    return DatabaseBudget(base_url, database) if database is not None else HostBudget(base_url)


class ClientStats:
    """Thread-safe counters of a client's traffic, by tag (the resource a request was made for)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        self.throttled: Counter[str] = Counter()  # 429 answers
        self.retried: Counter[str] = Counter()  # 5xx answers and connection errors retried
        self.refused: Counter[str] = Counter()  # 400 answers (a parameter or a page size refused)

    def count(self, counter: Counter[str], tag: str) -> None:
        with self._lock:
            counter[tag] += 1

    def snapshot(self) -> dict[str, dict[str, int]]:
        """A copy of the counters: {"requests": {tag: n}, "throttled": {...}, "retried": {...}}."""
        with self._lock:
            return {
                "requests": dict(self.requests),
                "throttled": dict(self.throttled),
                "retried": dict(self.retried),
                "refused": dict(self.refused),
            }


class InvoicingClient:
    """GETs from the API with a reused bearer token (scope `read`), pacing, and bounded retries; with
    scope `read write`, the few writes of webhook subscriptions (`post`, `delete`).

    Its settings are one `ClientSettings` (client_settings.py); `transport`, `sleep` and `clock` are the seams
    tests replace (a mock API, a simulated clock), never settings."""

    def __init__(
        self,
        settings: ClientSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.base_url = settings.base_url
        self._sleep = sleep
        rate = settings.rate_limit_per_s
        # Every process of this machine calling the same host paces on one budget (host_budget.py), the
        # service's limit being per source IP. A client on a simulated clock (unit tests) cannot share real
        # time with other processes: it says so with shared_budget=False, never by its clock's identity.
        if settings.shared_budget and rate > 0 and clock is not time.monotonic:
            raise ValueError("a client on its own clock cannot pace on the machine's shared budget: "
                             "pass shared_budget=False")
        shared = shared_budget_of(self.base_url) if settings.shared_budget and rate > 0 else None
        # a budget shared across hosts keeps its times on the database server's clock: the limiter reads that one
        pacing_clock = shared.clock if isinstance(shared, DatabaseBudget) else clock
        self.limiter = RateLimiter(rate, clock=pacing_clock, sleep=sleep, shared=shared)
        self.stats = ClientStats()
        # Short processes that follow one another (syncs, the applying runs of hints) start on the token the
        # last one kept, sealed with the client secret (token_cache.py), instead of a token request each.
        cache = (TokenCache(self.base_url, settings.client_id, settings.client_secret, settings.scope)
                 if settings.keep_token else None)
        self.auth = TokenAuth(self._fetch_token, clock=clock, cache=cache)
        self._contacted = False
        self._date_lock = threading.Lock()
        self.first_server_time: datetime | None = None
        self.last_server_time: datetime | None = None
        self._http = httpx.Client(
            base_url=self.base_url,
            transport=PacedTransport(transport or httpx.HTTPTransport(), self.limiter),
            headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
            timeout=settings.timeout_s,
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection pool (and the rate budget's database connection, when it has one)."""
        self._http.close()
        shared = self.limiter.shared
        if isinstance(shared, DatabaseBudget):
            shared.close()

    def get(self, path: str, params: dict[str, Any] | None = None, *, tag: str = "other") -> Any:
        """GET `path` and return the `data` of the answer; raises InvoicingApiError."""
        response = self._send("GET", path, params=params, auth=self.auth, tag=tag)
        body = self._json(response, f"GET {path}")
        if not isinstance(body, dict) or "data" not in body:
            raise InvoicingApiError(
                "malformed", f"GET {path}", response.status_code, detail="the answer has no 'data' property"
            )
        return body["data"]

    def post(self, path: str, body: dict[str, Any], *, tag: str = "other") -> Any:
        """POST a JSON `body` to `path` and return the answer's `data` (None when it has none).

        A write is not idempotent: after a 5xx or a broken connection it may have happened, so it is not
        re-sent (a 429 is: the service refused it unread); the caller re-reads to learn what happened."""
        response = self._send("POST", path, json=body, auth=self.auth, tag=tag, idempotent=False)
        body_read = self._json(response, f"POST {path}") if response.content else None
        return body_read.get("data") if isinstance(body_read, dict) else None

    def delete(self, path: str, *, tag: str = "other") -> None:
        """DELETE `path` (retried like a GET: deleting twice deletes once); raises InvoicingApiError."""
        self._send("DELETE", path, auth=self.auth, tag=tag)

    def _fetch_token(self) -> TokenGrant:
        form = {"grant_type": "client_credentials", "scope": self.settings.scope}
        credentials = httpx.BasicAuth(self.settings.client_id, self.settings.client_secret)
        response = self._send("POST", TOKEN_PATH, data=form, auth=credentials, tag="token")
        body = self._json(response, f"POST {TOKEN_PATH}")
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise InvoicingApiError("malformed", f"POST {TOKEN_PATH}", response.status_code,
                                    detail="the token answer has no access_token")
        raw = body.get("expires_in")
        try:
            expires_in: float | None = float(raw)
        except (TypeError, ValueError):
            expires_in = None
        if expires_in is not None and not expires_in > 0:  # 0, negative, NaN: no usable lifetime
            expires_in = None
        return TokenGrant(token, expires_in, raw)

    def _send(self, method: str, path: str, *, auth: httpx.Auth, tag: str, idempotent: bool = True,
              **kwargs: Any) -> httpx.Response:
        endpoint = f"{method} {path}"
        # a request that must not be sent twice gets no retry after a 5xx or a lost connection
        max_retries = self.settings.max_retries if idempotent else 0
        failures = 0
        throttles = 0
        while True:
            try:
                response: httpx.Response | None = self._request(method, path, endpoint, auth, kwargs)
            except httpx.TransportError as error:
                response, failure = None, error
            # counted once made, not while waiting for the limiter: the progress shows the real pace
            self.stats.count(self.stats.requests, tag)
            if response is None:
                failures += 1
                allowed = max_retries if self._contacted else min(max_retries, RETRIES_BEFORE_FIRST_CONTACT)
                if failures > allowed:
                    raise InvoicingApiError(
                        "unreachable", f"{endpoint} at {self.base_url}",
                        detail=f"{type(failure).__name__}: {failure} (after {failures} attempts)",
                    ) from None
                self.stats.count(self.stats.retried, tag)
                self._sleep(self._backoff(failures))
                continue
            self._contacted = True
            self._note_date(response)
            status = response.status_code
            if status == 429:
                throttles += 1
                self.stats.count(self.stats.throttled, tag)
                if throttles > MAX_429_RETRIES:
                    raise self._error("rate_limited", endpoint, response)
                self.limiter.pause(self._throttle_wait(response, throttles))
                continue
            if status >= 500:
                failures += 1
                if failures > max_retries:
                    raise self._error("server", endpoint, response, detail=f"after {failures} attempts")
                self.stats.count(self.stats.retried, tag)
                self._sleep(self._backoff(failures))
                continue
            if status == 400:
                self.stats.count(self.stats.refused, tag)
            if status >= 400:
                raise self._error(self._kind_of(path, response), endpoint, response)
            return response

    def _request(self, method: str, path: str, endpoint: str, auth: httpx.Auth, options: dict[str,
                                                                                              Any]) -> httpx.Response:
        """One request, its answer read as it streams and given up past the byte cap (answers.py)."""
        streamed = self._http.send(self._http.build_request(method, path, **options), auth=auth, stream=True)
        try:
            return read_capped(streamed, endpoint, self.settings.answer_cap_bytes)
        finally:
            streamed.close()

    def _kind_of(self, path: str, response: httpx.Response) -> str:
        status = response.status_code
        if path == TOKEN_PATH:
            body = _safe_json(response)
            code = body.get("error") if isinstance(body, dict) else None
            if code == "invalid_scope" or status == 403:
                return "scope"
            if status == 401 or code in ("invalid_client", "unauthorized_client"):
                return "credentials"
            return "http"
        if status == 401:
            return "credentials"
        if status == 403:
            return "scope"
        return "http"

    def _error(self, kind: str, endpoint: str, response: httpx.Response, detail: str | None = None):
        message = api_message_of(_safe_json(response), response.text)
        return InvoicingApiError(kind, endpoint, response.status_code, message, detail)

    def _json(self, response: httpx.Response, endpoint: str) -> Any:
        # Amounts are exact decimals: never let a float round 0.1 + 0.2 on the way in (answers.py refuses NaN,
        # Infinity, numbers past every column and nesting past the parser's depth, naming the endpoint).
        return parse_json(response.content, endpoint, response.status_code)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter (half to full), so that threads do not retry in step."""
        ceiling = min(self.settings.backoff_cap_s, self.settings.backoff_base_s * (2 ** (attempt - 1)))
        return ceiling * (0.5 + random.random() / 2)

    def _throttle_wait(self, response: httpx.Response, throttles: int) -> float:
        """Seconds to hold every thread after a 429: `RateLimit-TTL`/`Retry-After` cut to `MAX_PAUSE_S`
        (`clamp_wait`: a value that is not a finite number >= 0 is ignored), else backoff."""
        for header in ("ratelimit-ttl", "retry-after"):
            value = response.headers.get(header)
            seconds = wait_seconds(value, response.headers.get("date")) if value else None
            if seconds is not None:
                return clamp_wait(seconds) + random.random() * 0.1
        return self._backoff(throttles)

    def _note_date(self, response: httpx.Response) -> None:
        """Keeps the server's time of the answer. A `Date` that is absent, repeated (which one is the server's?),
        unparsable or without a known zone (`-0000`, RFC 5322's "zone unknown": a naive time that compares with no
        aware one) is treated as absent (security review 2, L2)."""
        values = response.headers.get_list("date")
        if len(values) != 1:
            return
        try:
            moment = parsedate_to_datetime(values[0])
        except (TypeError, ValueError, IndexError, OverflowError):
            return
        if moment.tzinfo is None or moment.utcoffset() is None:
            return
        with self._date_lock:
            if self.first_server_time is None:
                self.first_server_time = moment
            self.last_server_time = moment


def _int_header(response: httpx.Response, name: str) -> int | None:
    try:
        return int(response.headers[name])
    except (KeyError, ValueError):
        return None


def _safe_json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
