"""The doctor's view of HTTP: every exchange of a probe recorded (headers, status), within a request budget.

The probe talks to the server through the product's own `InvoicingClient` (same token handling, pacing and
errors as the sync) with an `ObservingTransport` under it, so that it can also read what the client does
not return: the `Date`, `AccessToken-ExpireAt` and `RateLimit-*` headers, and the token answer's `scope`
and `expires_in`. The token itself is never kept: the transport drops `access_token` before recording.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.client import TOKEN_PATH, InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings

MAX_REQUESTS = 60
# headers worth reporting; nothing else (cookies, auth) is recorded
OBSERVED_HEADERS = ("date", "accesstoken-expireat", "ratelimit-limit", "ratelimit-remaining", "ratelimit-ttl",
                    "retry-after")


@dataclass(frozen=True)
class Exchange:
    """One request the probe made and what came back (no body, no token)."""

    method: str
    path: str
    status: int
    headers: dict[str, str]
    token_answer: dict[str, Any] | None = None  # the token endpoint's answer without `access_token`


class ObservingTransport(httpx.BaseTransport):
    """Wraps a transport and records every exchange (the client's pacing sits above it)."""

    def __init__(self, inner: httpx.BaseTransport | None = None) -> None:
        self.inner = inner or httpx.HTTPTransport()
        self.exchanges: list[Exchange] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        headers = {name: response.headers[name] for name in OBSERVED_HEADERS if name in response.headers}
        token_answer = None
        if request.url.path.endswith(TOKEN_PATH):
            content = response.read()
            token_answer = _without_token(content)
            kept = [(k, v) for k, v in response.headers.items() if k.lower() not in ("content-encoding",
                                                                                  "content-length")]
            response = httpx.Response(response.status_code, headers=kept, content=content, request=request)
        self.exchanges.append(Exchange(request.method, request.url.path, response.status_code, headers,
                                       token_answer))
        return response

    def close(self) -> None:
        self.inner.close()


def _without_token(content: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(content)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    return {key: value for key, value in body.items() if key not in ("access_token", "refresh_token")}


class BudgetSpent(Exception):
    """The probe reached its request budget; the remaining probes are reported as not probed."""


@dataclass
class Answer:
    """What one GET gave: `data` when it succeeded, else the error; the answer's observed headers."""

    data: Any = None
    error: InvoicingApiError | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def refused(self) -> bool:
        """A 400: the server refused a parameter of the request."""
        return self.error is not None and self.error.status == 400

    @property
    def records(self) -> list[dict]:
        """The records of a list answer (empty when it failed or is not a list)."""
        return [r for r in self.data if isinstance(r, dict)] if isinstance(self.data, list) else []


class ProbeSession:
    """GETs through the product's client, counted against `budget` requests (token requests included)."""

    def __init__(self, base_url: str, client_id: str, client_secret: str, *, rate_limit_per_s: float = 8.0,
                 budget: int = MAX_REQUESTS, transport: httpx.BaseTransport | None = None) -> None:
        self.transport = ObservingTransport(transport)
        settings = ClientSettings(base_url, client_id, client_secret, rate_limit_per_s=rate_limit_per_s,
                                  max_retries=2, timeout_s=30.0)
        self.client = InvoicingClient(settings, transport=self.transport)
        self.budget = budget

    @property
    def requests(self) -> int:
        """Requests made so far (token requests and retries included)."""
        return len(self.transport.exchanges)

    def get(self, path: str, params: dict[str, Any] | None = None) -> Answer:
        """GET `path`; a refused request (4xx) comes back as `Answer.error`, a fatal failure raises."""
        if self.requests + 1 > self.budget:
            raise BudgetSpent(f"request budget of {self.budget} spent before GET {path}")
        try:
            data = self.client.get(path, params, tag="doctor")
        except InvoicingApiError as error:
            if error.kind not in ("http", "scope") or error.status is None:
                raise
            return Answer(error=error, headers=self._last_headers())
        return Answer(data=data, headers=self._last_headers())

    def _last_headers(self) -> dict[str, str]:
        return dict(self.transport.exchanges[-1].headers) if self.transport.exchanges else {}

    def token_answer(self) -> dict[str, Any] | None:
        """The first token answer (without the token)."""
        return next((e.token_answer for e in self.transport.exchanges if e.token_answer is not None), None)

    def close(self) -> None:
        """Closes the client's connections."""
        self.client.close()


def header_time(headers: dict[str, str], name: str = "date"):
    """An RFC 9110 date header as an aware datetime (None when absent or unreadable)."""
    value = headers.get(name)
    if not value:
        return None
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
