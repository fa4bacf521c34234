"""An in-memory Invoicing API behind `httpx.MockTransport`, for the client's unit tests.

It follows the contract where the client depends on it (token grant, bearer check, list windows with
inclusive bounds, `lastUpdate` then `id` order, `limit` clamped to `page_max`, `skip`) and lets a test
inject faults (queued answers or exceptions) and change the data between two pages (`between_pages`).
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx

BASE_URL = "http://api.test/api/v2"
CLIENT_ID = "client-1"
CLIENT_SECRET = "s3cr3t-value-never-printed"
SERVER_NOW = datetime(2026, 3, 4, 12, 0, 0, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_records(count: int, start: datetime, *, per_second: int = 1, prefix: str = "") -> list[dict]:
    """`count` records, `per_second` of them sharing each lastUpdate second, ids sortable."""
    return [
        {"id": prefix + f"{i:024x}"[len(prefix):], "lastUpdate": iso(start + timedelta(seconds=i // per_second)),
         "n": i}
        for i in range(count)
    ]


class FakeApi:
    """The fake service; `transport()` gives the MockTransport to hand to the client."""

    def __init__(self, lists: dict[str, list[dict]] | None = None, *, page_max: int = 100,
                 expires_in: int = 604799, expire_at: datetime | None = None,
                 ignore_window: bool = False) -> None:
        self.lists = lists or {}
        self.single: dict[str, dict] = {"/me": {"id": "u1", "name": "Ada"}}
        self.page_max = page_max
        self.expires_in = expires_in
        self.expire_at = expire_at
        self.ignore_window = ignore_window
        self.now = SERVER_NOW
        self.requests: list[httpx.Request] = []
        self.sent: list[tuple[str, str]] = []
        self.queued: list[object] = []  # httpx.Response or Exception, answered before anything else
        self.valid_tokens: set[str] = set()
        self.token_counter = itertools.count(1)
        self.between_pages: Callable[[FakeApi, int], None] | None = None
        self.list_calls = 0
        self.token_scope_refused = False
        self.tie_key: Callable[[dict], str] = lambda record: record["id"]  # the order of same-second records

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        # httpx re-sends the same Request object after a 401: keep what was sent at the time
        self.sent.append((request.url.path.removeprefix("/api/v2"), request.headers.get("authorization", "")))
        if self.queued:
            answer = self.queued.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        path = request.url.path.removeprefix("/api/v2")
        if path == "/oauth2/token":
            return self._token(request)
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if token not in self.valid_tokens:
            return self._answer(401, {"error": "invalid token", "code": 401})
        if path in self.single:
            return self._answer(200, {"data": self.single[path]})
        if path in self.lists:
            return self._list(path, request)
        return self._answer(404, {"error": "not found", "code": 404})

    def _answer(self, status: int, body: dict) -> httpx.Response:
        headers = {"Date": format_datetime(self.now, usegmt=True)}
        if self.expire_at is not None:
            headers["AccessToken-ExpireAt"] = iso(self.expire_at)
        return httpx.Response(status, json=body, headers=headers)

    def _token(self, request: httpx.Request) -> httpx.Response:
        expected = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if request.headers.get("authorization") != f"Basic {expected}":
            return self._answer(401, {"error": "invalid_client", "error_description": "client authentication failed"})
        if self.token_scope_refused:
            return self._answer(400, {"error": "invalid_scope",
                                      "error_description": "scope 'read' is not allowed for this client"})
        token = f"token-{next(self.token_counter)}"
        self.valid_tokens.add(token)
        return self._answer(200, {"access_token": token, "token_type": "Bearer",
                                  "expires_in": self.expires_in, "scope": "read"})

    def _list(self, path: str, request: httpx.Request) -> httpx.Response:
        if self.between_pages is not None:
            self.between_pages(self, self.list_calls)
        self.list_calls += 1
        q = request.url.params
        # instants, not texts: "…:33.500Z" is after "…:33Z" (a server sending milliseconds, N13)
        rows = sorted(self.lists[path], key=lambda r: (_instant(r["lastUpdate"]), self.tie_key(r)))
        if not self.ignore_window:
            if "updatedSince" in q:
                rows = [r for r in rows if _instant(r["lastUpdate"]) >= _instant(q["updatedSince"])]
            if "updatedUntil" in q:
                rows = [r for r in rows if _instant(r["lastUpdate"]) <= _instant(q["updatedUntil"])]
        skip = int(q.get("skip", 0))
        limit = min(int(q.get("limit", 20)), self.page_max)
        return self._answer(200, {"data": [dict(r) for r in rows[skip:skip + limit]]})


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


class FakeClock:
    """A monotonic clock whose sleep advances it: pacing tests without waiting."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
