"""Bearer-token authentication as an `httpx.Auth`: reuse the token, renew it early, retry once on 401.

The service issues tokens valid `expires_in` seconds (7 days on the real service, any lifetime elsewhere)
and reports the expiry on every response in `AccessToken-ExpireAt` (server clock). A token is meant to be
reused (asking for one per request risks the rate limit), so it is renewed `min(RENEW_MARGIN_S, lifetime/2)`
before its expiry: every token lives at least half its life, so even a 1 s token costs at most two token
requests a second. `AccessToken-ExpireAt` may only bring the expiry closer, and only by more than
`CLOCK_SKEW_TOLERANCE_S`: it is read against the `Date` header, which may come from another clock (the strict
sandbox's runs 10 s ahead); a 20 s token would otherwise look 10 s long and be renewed on every request. A
token that truly ends a few seconds early gets a 401, which renews it. An `expires_in` missing, zero or
unreadable means the lifetime is unknown: the token is kept until a 401 (and a note says so). A 401 (revoked,
expired early) fetches a new token once and re-sends the request; a second 401 is the caller's error
(unless another thread replaced the token meanwhile: then the request is re-sent with the newer one).
With a `TokenCache`, a process starts on the token an earlier process kept (token_cache.py), and keeps each
token it fetches for the next one.

The `Date` lead (how far `Date` runs ahead of the expiry's clock, `date_lead_s`) ends every window of a run that
much earlier, so a false lead hides the newest records from every run that carries it. It is therefore read
only on a successful answer (a 503 of a server in front of the service stamped `AccessToken-ExpireAt` with its
own present, which looked like a 19 s lead on a 20 s token), bounded by `MAX_DATE_LEAD_S`, and a lead kept
with a token is taken by the next process only as confirmed by its own first successful answer: the smaller
of the two, none when it cannot measure.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

import httpx

from invoicing_warehouse.engine.redaction import register_token
from pipelines.invoicing.dates import parse_timestamp
from pipelines.invoicing.http.token_cache import CachedToken, TokenCache

RENEW_MARGIN_S = 60.0
MAX_RESENDS_ON_401 = 3
SHORT_LIFETIME_S = 120.0  # below this, the renewal pace is worth a note
CLOCK_SKEW_TOLERANCE_S = 30.0  # as the windows' overlap: clocks of one service may differ this much
# The largest `Date` lead the windows honour. A real lead is a clock difference between servers of one service
# (the strict sandbox's 10 s, measured 8-10 s at 1 s precision); more is far likelier a misreading. A lead
# above the bound is cut to it: the windows then end at most this much too late, which the next run's 30 s
# overlap re-reads (Date leads up to 15 + 30 - 5 = 40 s stay exact), while a false lead costs at most 15 s
# of freshness per run, never a record.
MAX_DATE_LEAD_S = 15.0


@dataclass(frozen=True)
class TokenGrant:
    """A token as the token endpoint returned it."""

    access_token: str
    expires_in: float | None  # seconds; None when missing, zero or unreadable (lifetime unknown)
    raw_expires_in: object = None  # as served, for the note


class TokenAuth(httpx.Auth):
    """Adds `Authorization: Bearer ...`; thread-safe; `fetch` performs the token request."""

    def __init__(self, fetch: Callable[[], TokenGrant], clock: Callable[[], float] = time.monotonic,
                 cache: TokenCache | None = None) -> None:
        self._fetch = fetch
        self._clock = clock
        self._cache = cache
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires_at = 0.0  # local monotonic clock; inf while the lifetime is unknown
        self._margin = 0.0  # renew this long before `_expires_at`
        self._measured = True  # False until a lifetime-unknown token's first answer gave its expiry
        self.tokens_fetched = 0
        self.tokens_reused = 0  # tokens taken from the cache instead of fetched
        self.lifetime_s: float | None = None  # the lifetime of the last token, when known
        self.notes: list[str] = []
        # How far the `Date` clock runs ahead of the clock that stamps `AccessToken-ExpireAt`, measured on a
        # fresh token's first answer (expires_in against ExpireAt − Date; 1 s precision). The windows end that
        # much earlier: a Date ahead would otherwise freeze windows inside seconds still being written.
        self.date_lead_s = 0.0
        self._lead_pending = False
        self._kept_lead: float | None = None  # the lead an earlier process kept, until this one confirms it
        self._expires_wall = 0.0  # time.time() of the expiry, for the token kept between processes

    def _valid_token(self, stale: str | None = None) -> str:
        """The current token, fetched again when missing, near expiry, or equal to `stale` (refused)."""
        with self._lock:
            if self._token is None and self._cache is not None:
                kept = self._cache.load()
                if kept is not None:
                    self._adopt(kept)
            near_expiry = self._clock() >= self._expires_at - self._margin
            if self._token is None or near_expiry or (stale is not None and self._token == stale):
                grant = self._fetch()
                self.tokens_fetched += 1
                self._token = grant.access_token
                register_token(self._token)  # masked in whatever the product prints (redaction.py)
                self._issue(grant)
                self._keep()
            assert self._token is not None
            return self._token

    def _adopt(self, kept: CachedToken) -> None:
        """Takes a token an earlier process kept, with its expiry; the `Date` lead that process learnt waits for
        this process's first successful answer to confirm it (`_measure_lead`)."""
        self._token, self.lifetime_s, self.date_lead_s = kept.access_token, kept.lifetime_s, 0.0
        register_token(self._token)
        self._expires_at = self._clock() + kept.remaining_s()
        self._expires_wall = kept.expires_at
        self._margin = min(RENEW_MARGIN_S, kept.lifetime_s / 2)
        self._measured, self._lead_pending, self._kept_lead = True, True, kept.date_lead_s
        self.tokens_reused += 1

    def _keep(self) -> None:
        """Keeps the current token for the next process (a token of unknown lifetime is not kept)."""
        if self._cache is not None and self._token is not None and self.lifetime_s is not None and self._measured:
            self._cache.store(CachedToken(self._token, self.lifetime_s, self._expires_wall, self.date_lead_s))

    def _issue(self, grant: TokenGrant) -> None:
        lifetime = grant.expires_in
        if lifetime is None:
            self._expires_at, self._margin, self._measured = math.inf, 0.0, False
            self._remark(f"auth: token lifetime unknown (expires_in {grant.raw_expires_in!r}); token kept until a 401")
            return
        self._expires_at = self._clock() + lifetime
        self._expires_wall = time.time() + lifetime
        self._margin = min(RENEW_MARGIN_S, lifetime / 2)
        self._measured, self.lifetime_s = True, lifetime
        self._lead_pending, self._kept_lead = True, None
        if lifetime < SHORT_LIFETIME_S:
            self._remark(f"auth: token lifetime {lifetime:g} s; renewed after {lifetime - self._margin:g} s")

    def _remark(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def _note_expiry(self, response: httpx.Response, token: str) -> None:
        """Lowers the local expiry to what `AccessToken-ExpireAt` says (relative to the `Date` header), and
        measures the `Date` lead on a token's first successful answer."""
        if not response.is_success:
            # An error may come from a server in front of the service, whose headers say nothing of the token
            # (one stamped its present: expiry "now"). A token that truly ended still gets its 401.
            return
        header = response.headers.get("accesstoken-expireat")
        date = response.headers.get("date")
        if not header or not date:
            return
        try:
            remaining = (parse_timestamp(header) - parsedate_to_datetime(date)).total_seconds()
        except (TypeError, ValueError):
            return  # an unreadable header only loses the early renewal, not correctness (401 still renews)
        with self._lock:
            if self._token != token:
                return
            if not self._measured and remaining > 0:  # lifetime unknown at issue: measured on first answer
                self._margin, self._measured, self.lifetime_s = min(RENEW_MARGIN_S, remaining / 2), True, remaining
            if self._lead_pending:
                self._measure_lead(remaining)
            told = self._clock() + remaining
            if told < self._expires_at - CLOCK_SKEW_TOLERANCE_S or self._expires_at == math.inf:
                self._expires_at = told

    def _measure_lead(self, remaining: float) -> None:
        """Sets `date_lead_s` from the current token's first successful answer (`remaining`: ExpireAt − Date);
        called with the lock held."""
        self._lead_pending = False
        # expected remaining life by our clock minus what the server says; 1 s for its second precision
        gap = self._expires_at - self._clock() - remaining - 1.0
        # more than the tolerance is a token that truly ends early, not a clock: no lead
        measured = min(max(gap, 0.0), MAX_DATE_LEAD_S) if gap <= CLOCK_SKEW_TOLERANCE_S else 0.0
        if self._kept_lead is not None:
            # A kept lead is confirmed by this measure, never taken alone. The service's clock may have moved
            # on by its own since the issue (a re-measure then reads more): the smaller figure is the sound one.
            measured = min(measured, self._kept_lead)
            self._kept_lead = None
        self.date_lead_s = measured
        self._keep()  # again, with the lead measured

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
