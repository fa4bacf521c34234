"""The whole-list pagers, for lists whose window cannot be trusted (paging.py tells the whole story): passes
by `skip` until the distinct ids read reach the list's count (`ScanPager`), and the ladder a refusal walks
down, from lastUpdate order to the server's own order to one answer without any parameter (`skip_pages`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.read.page_requests import (
    MAX_PAGES_WITHOUT_NEWS,
    MAX_PASSES,
    MAX_REWINDS,
    PAGE_LIMIT,
    ListRequests,
    Page,
    PagingNotHonoured,
    ParametersRefused,
    last_update_of,
)

IN_LAST_UPDATE_ORDER = {"orderBy": "lastUpdate", "order": 1}


def skip_pages(requests: ListRequests, *, limit: int = PAGE_LIMIT, ordering: bool = True) -> Iterator[Page]:
    """Every record of a list, by `skip`, deduped by id.

    The ladder when the server refuses parameters (400): ascending lastUpdate order; else the server's own
    order (`ordering=False` starts there). A list that refuses or ignores `limit`/`skip` is read as one
    answer without any parameter, with a degraded note (N4): rows may be missing.
    """
    seen: set[str] = set()
    try:
        yield from _ordered_else_not(requests, seen, limit, ordering)
        return
    except PagingNotHonoured as paging:
        requests.learn(paging=paging.how)
        reason = str(paging)
    data = requests.fetch({})
    # Rows may be missing (N4): the contract shows no default page size, so nothing tells whether this one
    # answer holds the whole list. Degraded: the marts built on this table must not be published as exact.
    requests.note(f"paging not honoured ({reason}); read as one answer of {len(data)} records (may be incomplete)",
                  degraded=True)
    yield Page([r for r in data if r["id"] not in seen], None, True)


def _ordered_else_not(requests: ListRequests, seen: set[str], limit: int, ordering: bool) -> Iterator[Page]:
    """Passes in lastUpdate order (when `ordering`); on a refusal of the order, in the server's own order."""
    if ordering:
        try:
            yield from ScanPager(requests, IN_LAST_UPDATE_ORDER, seen, limit).pages()
            return
        except ParametersRefused as refused:
            requests.learn(ordering="refused")
            requests.note(f"ordering parameters refused ({_reason(refused)}); read by skip in the server's order")
    yield from ScanPager(requests, {}, seen, limit).pages()


def _reason(refused: Exception) -> str:
    cause = refused.__cause__
    return f"HTTP 400: {cause.api_message}" if isinstance(cause, InvoicingApiError) else str(refused)


@dataclass
class _ScanPass:
    """One pass over the list: how far it is, the records it re-reads at the last second, what it read."""

    offset: int = 0
    overlap: int = 0
    rewinds: int = 0
    stalls: int = 0
    last: datetime | None = None
    passed: set[str] = field(default_factory=set)


class ScanPager:
    """Whole-list passes by `skip` until the distinct ids read reach the list's count (see GroupPager).

    In lastUpdate order, each page after the first starts at the previous page's last second (skip back
    over the records read at that second): if it does not start with a record of that second, positions
    shifted under the read (records moved or vanished) and the read steps back a page.
    """

    def __init__(self, requests: ListRequests, order: dict, seen: set[str], limit: int) -> None:
        self.requests, self.order, self.seen, self.limit = requests, order, seen, limit

    def pages(self) -> Iterator[Page]:
        """The list's records not `seen` yet, in pages, the last one an empty `done` page."""
        offset = 0
        for passes in range(1, MAX_PASSES + 1):
            current = _ScanPass()
            yield from self._read_pass(current)
            offset = current.offset
            if self.requests.cancelled() or len(self.seen) >= offset:
                if passes > 1:
                    self.requests.note(f"{offset} records read in {passes} passes (their order changed between "
                                       "requests)")
                yield Page([], None, True)
                return
        raise InvoicingApiError("server", f"GET {self.requests.path}", detail=f"order unstable: {len(self.seen)} of "
                                f"{offset} records after {MAX_PASSES} passes")

    def _read_pass(self, current: _ScanPass) -> Iterator[Page]:
        path, page_sizes = self.requests.path, self.requests.page_sizes
        while not self.requests.cancelled():
            skip = current.offset - current.overlap
            params = {**self.order, "limit": self.limit, "skip": skip}
            records = self.requests.fetch(params)
            self.limit = params["limit"]
            page_sizes.observe(path, self.limit, len(records))
            if self._stepped_back(current, records):
                continue
            self._check_progress(current, records)
            current.passed.update(r["id"] for r in records)
            new = [r for r in records if r["id"] not in self.seen]
            self.seen.update(r["id"] for r in new)
            current.offset = skip + len(records)
            if new:
                yield Page(new, None, False)
            if page_sizes.is_end(path, self.limit, len(records)):
                return
            self._update_overlap(current, records)

    def _stepped_back(self, current: _ScanPass, records: list) -> bool:
        """A page that does not start at the last second read: positions shifted, the pass steps back a page."""
        if (current.overlap and (not records or last_update_of(records[0], self.requests.path) != current.last)
                and current.rewinds < MAX_REWINDS):
            current.rewinds += 1
            current.offset, current.overlap = max(0, current.offset - self.limit), 0
            return True
        return False

    def _check_progress(self, current: _ScanPass, records: list) -> None:
        current.stalls = 0 if {r["id"] for r in records} - current.passed else current.stalls + 1
        if records and current.stalls >= MAX_PAGES_WITHOUT_NEWS:
            # pages by `skip` that bring nothing new: the server does not page this list as asked (it may
            # ignore `skip` while the list changes); read as one answer, degraded, not a failed run
            raise PagingNotHonoured(f"GET {self.requests.path}: paging by skip does not advance ({current.stalls} "
                                    "pages without a new record)", "ignored")

    def _update_overlap(self, current: _ScanPass, records: list) -> None:
        """The records of the page's last second, re-read by the next page (none without an order, or when
        the whole page is at one second: passes then)."""
        current.overlap = 0
        if self.order and records:
            path = self.requests.path
            current.last = last_update_of(records[-1], path)
            overlap = sum(1 for r in records if last_update_of(r, path) == current.last)
            current.overlap = 0 if overlap == len(records) else overlap
