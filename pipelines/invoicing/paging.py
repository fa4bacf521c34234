"""Keyset paging over a frozen lastUpdate window, and a skip scan for lists without a usable window.

Skip-based paging shifts when records change mid-read, so a window is read in `lastUpdate` order and each
page restarts from the last `lastUpdate` seen (`updatedSince` = that second), with `skip` only inside the
group of records sharing that second. Every page after the first re-reads the last record already seen
(`skip` = consumed - 1): if that record is not the first of the answer, the group lost records in between
(they moved past the window's end: a later run reads them) and the positions shifted, so the read steps
back until the overlap matches again. Records are deduped by `id`. A page ends the read only when it is
empty or shorter than the page size the server has actually honoured (it may clamp `limit`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pipelines.invoicing.dates import format_timestamp, parse_timestamp
from pipelines.invoicing.errors import InvoicingApiError

PAGE_LIMIT = 100  # the sandbox's maximum; a server that clamps lower is learned from its answers
MAX_REWINDS = 200
MAX_PAGES_WITHOUT_NEWS = 3


class WindowNotHonoured(Exception):
    """The server answered records outside the window or order it was asked for."""


class PageSizes:
    """The page sizes the server actually honoured: per path, and the largest seen anywhere.

    A short page only ends a read when it is shorter than the honoured size. A path that never filled a
    page (a list of five webhooks) falls back to the largest size honoured by any path: the service has one
    maximum page size (api-facts.md), so five records under a known maximum of 100 are the whole list.
    """

    def __init__(self, known: dict[str, int] | None = None) -> None:
        self._lock = threading.Lock()
        self._full: dict[str, int] = {k: int(v) for k, v in (known or {}).items() if k != "*"}
        self._largest = int((known or {}).get("*", 0))
        self._refused_above: dict[str, int] = {}

    def remember(self, known: dict[str, int] | None) -> None:
        """Adds sizes committed by earlier runs."""
        for path, size in (known or {}).items():
            with self._lock:
                if path == "*":
                    self._largest = max(self._largest, int(size))
                else:
                    self._full[path] = max(self._full.get(path, 0), int(size))

    def observe(self, path: str, asked: int, received: int) -> None:
        with self._lock:
            self._largest = max(self._largest, received)
            if received >= asked or path in self._full:
                self._full[path] = max(self._full.get(path, 0), received)

    def effective(self, path: str) -> int | None:
        with self._lock:
            size = self._full.get(path) or self._largest
        return size or None

    def limit(self, path: str, asked: int) -> int:
        """The `limit` to ask on `path`: `asked`, unless the server refused it (some servers answer 400)."""
        with self._lock:
            return min(asked, self._refused_above.get(path, asked))

    def refuse(self, path: str, limit: int) -> None:
        with self._lock:
            self._refused_above[path] = limit

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return {**self._full, "*": self._largest}


@dataclass
class Page:
    """New records of one answer (deduped), where to resume (inclusive second), whether the read ended."""

    records: list[dict]
    position: datetime | None
    done: bool


def last_update_of(record: Any, path: str) -> datetime:
    """The record's `lastUpdate`; a record without one cannot be placed in a window."""
    try:
        return parse_timestamp(record["lastUpdate"])
    except (TypeError, KeyError, ValueError, AttributeError):
        raise WindowNotHonoured(f"GET {path}: a record has no readable lastUpdate") from None


def _check_window(records: list, path: str, since: datetime | None, until: datetime | None) -> None:
    previous = None
    for record in records:
        moment = last_update_of(record, path)
        if (since is not None and moment < since) or (until is not None and moment > until):
            raise WindowNotHonoured(f"GET {path}: lastUpdate {format_timestamp(moment)} outside the window asked")
        if previous is not None and moment < previous:
            raise WindowNotHonoured(f"GET {path}: records not in ascending lastUpdate order")
        previous = moment


def _fetch(get: Callable[..., Any], path: str, params: dict, tag: str, page_sizes: PageSizes) -> list:
    """One page; a server that refuses the `limit` (400 instead of clamping) gets the size it names."""
    for _ in range(8):
        params["limit"] = page_sizes.limit(path, params["limit"])
        try:
            data = get(path, params, tag=tag)
        except InvoicingApiError as error:
            message = error.api_message or ""
            if error.status != 400 or "limit" not in message or params["limit"] <= 1:
                raise
            named = re.search(r"at most (\d+)", message)
            page_sizes.refuse(path, int(named.group(1)) if named else params["limit"] // 2)
            continue
        if not isinstance(data, list) or not all(isinstance(r, dict) and "id" in r for r in data):
            raise InvoicingApiError("malformed", f"GET {path}", 200, detail="'data' is not a list of records")
        return data
    raise InvoicingApiError("http", f"GET {path}", 400, detail="no page size accepted")


def keyset_pages(
    get: Callable[..., Any],
    path: str,
    since: datetime | None,
    until: datetime,
    *,
    page_sizes: PageSizes,
    tag: str,
    limit: int = PAGE_LIMIT,
    cancelled: Callable[[], bool] = lambda: False,
) -> Iterator[Page]:
    """Pages of the records with since <= lastUpdate <= until (both inclusive; since None: from the start).

    Raises WindowNotHonoured when the server ignores the window or the order (caller falls back).
    """
    seen: set[str] = set()
    position, consumed = since, 0  # `consumed`: records of the group at `position` already read
    rewinds = pages_without_news = 0
    while not cancelled():
        skip = consumed - 1 if consumed > 0 else 0
        params: dict[str, Any] = {"orderBy": "lastUpdate", "order": 1, "limit": limit, "skip": skip,
                                  "updatedUntil": format_timestamp(until)}
        if position is not None:
            params["updatedSince"] = format_timestamp(position)
        records = _fetch(get, path, params, tag, page_sizes)
        _check_window(records, path, position, until)
        limit = params["limit"]
        page_sizes.observe(path, limit, len(records))
        if consumed > 0 and (not records or records[0]["id"] not in seen):
            rewinds += 1
            if rewinds > MAX_REWINDS:
                raise InvoicingApiError("server", f"GET {path}", detail="records keep moving under the read")
            consumed = max(0, consumed - limit)
            continue
        if not records:
            yield Page([], position, True)
            return
        new = [r for r in records if r["id"] not in seen]
        seen.update(r["id"] for r in records)
        last = last_update_of(records[-1], path)
        if position is not None and last == position:
            consumed = skip + len(records)
        else:
            position = last
            consumed = sum(1 for r in records if last_update_of(r, path) == last)
        effective = page_sizes.effective(path)
        done = effective is not None and len(records) < effective
        pages_without_news = 0 if new else pages_without_news + 1
        if pages_without_news >= MAX_PAGES_WITHOUT_NEWS:
            raise WindowNotHonoured(f"GET {path}: paging does not advance")
        yield Page(new, position, done)
        if done:
            return


def skip_pages(
    get: Callable[..., Any],
    path: str,
    *,
    page_sizes: PageSizes,
    tag: str,
    limit: int = PAGE_LIMIT,
    cancelled: Callable[[], bool] = lambda: False,
) -> Iterator[Page]:
    """Every record of a list, by `skip` (for lists whose window cannot be trusted), deduped by id.

    Overlaps one record per page like the keyset read, to notice records shifting between pages.
    """
    seen: set[str] = set()
    offset = rewinds = 0
    while not cancelled():
        skip = offset - 1 if offset > 0 else 0
        params = {"orderBy": "lastUpdate", "order": 1, "limit": limit, "skip": skip}
        records = _fetch(get, path, params, tag, page_sizes)
        limit = params["limit"]
        page_sizes.observe(path, limit, len(records))
        if offset > 0 and records and records[0]["id"] not in seen and rewinds < MAX_REWINDS:
            rewinds += 1
            offset = max(0, offset - limit)
            continue
        new = [r for r in records if r["id"] not in seen]
        seen.update(r["id"] for r in records)
        offset = skip + len(records)
        effective = page_sizes.effective(path)
        done = not records or not new or (effective is not None and len(records) < effective)
        yield Page(new, None, done)
        if done:
            return
