"""Bearer-token authentication as an `httpx.Auth`: reuse the token, renew it early, retry once on 401.

The service issues tokens valid `expires_in` seconds (7 days) and reports the expiry on every response in
`AccessToken-ExpireAt` (server clock). A token is meant to be reused (asking for one per request risks the
rate limit), so it is kept until `RENEW_MARGIN_S` before the earlier of the two expiries. A 401 (revoked,
expired early) fetches a new token once and re-sends the request; a second 401 is the caller's error
(unless another thread replaced the token meanwhile: then the request is re-sent with the newer one).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

import httpx

from pipelines.invoicing.dates import parse_timestamp

RENEW_MARGIN_S = 60.0
MAX_RESENDS_ON_401 = 3


@dataclass(frozen=True)
class TokenGrant:
    """A token as the token endpoint returned it."""

    access_token: str
    expires_in: float


class TokenAuth(httpx.Auth):
    """Adds `Authorization: Bearer ...`; thread-safe; `fetch` performs the token request."""

    def __init__(self, fetch: Callable[[], TokenGrant], clock: Callable[[], float] = time.monotonic) -> None:
        self._fetch = fetch
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires_at = 0.0  # local monotonic clock
        self.tokens_fetched = 0

    def _valid_token(self, stale: str | None = None) -> str:
        """The current token, fetched again when missing, near expiry, or equal to `stale` (refused)."""
        with self._lock:
            near_expiry = self._clock() >= self._expires_at - RENEW_MARGIN_S
            if self._token is None or near_expiry or (stale is not None and self._token == stale):
                grant = self._fetch()
                self.tokens_fetched += 1
                self._token = grant.access_token
                self._expires_at = self._clock() + float(grant.expires_in)
            return self._token

    def _note_expiry(self, response: httpx.Response, token: str) -> None:
        """Lowers the local expiry to what `AccessToken-ExpireAt` says (relative to the `Date` header)."""
        header = response.headers.get("accesstoken-expireat")
        date = response.headers.get("date")
        if not header or not date:
            return
        try:
            remaining = (parse_timestamp(header) - parsedate_to_datetime(date)).total_seconds()
        except (TypeError, ValueError):
            return  # an unreadable header only loses the early renewal, not correctness (401 still renews)
        with self._lock:
            if self._token == token:
                self._expires_at = min(self._expires_at, self._clock() + remaining)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._valid_token()
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        fetched = False
        # Threads share the token: a 401 for a token another thread has already replaced is re-sent with
        # the newer one without counting as this request's fetch. Bounded, so a refusing server ends it.
        for _ in range(MAX_RESENDS_ON_401):
            if response.status_code != 401:
                break
            with self._lock:
                replaced = self._token is not None and self._token != token
            if not replaced:
                if fetched:
                    break  # a fresh token was refused too: the caller's error
                fetched = True
            token = self._valid_token(stale=token)
            request.headers["Authorization"] = f"Bearer {token}"
            response = yield request
        self._note_expiry(response, token)
