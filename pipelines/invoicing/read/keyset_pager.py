"""The keyset pager of a frozen `lastUpdate` window, and the pager of one same-second group it hands a second
to when skipping into that second cannot be trusted (paging.py tells the whole story).

Each pager keeps its own state, in the spirit of dlt's paginators: `update_request` says what the next page
asks, `update_state` moves the pager past a page it read.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pipelines.invoicing.dates import format_timestamp
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.read.page_requests import (
    MAX_PAGES_WITHOUT_NEWS,
    MAX_PASSES,
    MAX_REWINDS,
    MAX_SKIP_FAILURES,
    PAGE_LIMIT,
    ListRequests,
    Page,
    PagingNotHonoured,
    WindowNotHonoured,
    check_window,
    last_update_of,
)


def keyset_pages(requests: ListRequests, since: datetime | None, until: datetime, *, limit: int = PAGE_LIMIT,
                 ties_stable: bool | None = None) -> Generator[Page, None, None]:
    """Pages of the records with since <= lastUpdate <= until (both inclusive; since None: from the start);
    `ties_stable` False (learnt earlier): no page skips into a second. Raises WindowNotHonoured when the
    server ignores or refuses the window or the order (the caller falls back)."""
    return KeysetPager(requests, since, until, limit=limit, ties_stable=ties_stable).pages()


class KeysetPager:
    """Each page restarts at the second of the previous page's last record. Where the records of that second
    keep one order, it skips the ones already read but the last, which must come back first: a check that
    positions did not shift (records left the second, or its order changed). When the page passes the second,
    the ids read at it must reach `skip + those in the page`, its exact count. Either check failing reads that
    second alone, in passes (`GroupPager`), and the read goes on after it. After two failures no page skips:
    each restarts at its second with skip 0, and a full page all at one second is a group of at least a page.
    """

    def __init__(self, requests: ListRequests, since: datetime | None, until: datetime, *, limit: int,
                 ties_stable: bool | None) -> None:
        self.requests, self.until, self.limit = requests, until, limit
        self.seen: set[str] = set()
        self.position = since
        # Inside the second `position`: how many of its records the read has passed in the server's order,
        # their ids, and the id of the last one (the next page re-reads it as the check).
        self.offset = 0
        self.last_id: str | None = None
        self.read_at_position: set[str] = set()
        self.skip = 0
        self.skip_failures = 0 if ties_stable is not False else MAX_SKIP_FAILURES
        self.pages_without_news = 0
        # The page before was shorter than the limit but as large as any this list served in the run: a clamp
        # or the end. The proof asks past every record read at its last second: empty is the end, whatever
        # the order of ties (fewer records remain from that second on than were passed, and all were read).
        self.proving, self.previous_size = False, 0

    def pages(self) -> Generator[Page, None, None]:
        """The window's pages, the last one `done` (see the class docstring)."""
        while not self.requests.cancelled():
            records = self._next_records()
            if records is None:
                continue
            if self.proving:
                if self._proof_ends(records):
                    yield Page([], self.position, True)
                    return
                continue
            if self.skip and not self._continues(records):
                self.skip_failures += 1  # positions shifted under the read: the second is read alone, in passes
                group = self.position
            else:
                page = self._page_of(records)
                yield page
                if page.done:
                    return
                group = self.update_state(records, page.position)
                if group is None:
                    continue
            assert group is not None  # a skip is only asked inside a second already read
            yield from GroupPager(self.requests, group, self.seen, self.limit).pages()
            if group >= self.until:
                yield Page([], group, True)
                return
            # whole seconds from the one after the group
            self.position, self.offset, self.last_id = group + timedelta(seconds=1), 0, None
            self.read_at_position = set()

    def update_request(self) -> dict[str, Any]:
        """The next page's parameters: restart at `position`, skipping what was read of it but the last."""
        by_skip = (self.skip_failures < MAX_SKIP_FAILURES and self.limit >= 2 and self.offset >= 2
                   and self.last_id is not None)
        self.skip = self.offset if self.proving else self.offset - 1 if by_skip else 0
        params: dict[str, Any] = {"orderBy": "lastUpdate", "order": 1, "limit": self.limit, "skip": self.skip,
                                  "updatedUntil": format_timestamp(self.until)}
        if self.position is not None:
            params["updatedSince"] = format_timestamp(self.position)
        return params

    def _next_records(self) -> list | None:
        """The next page's records, checked against the window; None when `skip` proved ignored (ask again)."""
        params = self.update_request()
        try:
            records = self.requests.fetch(params)
        except PagingNotHonoured as paging:
            if paging.how != "ignored" or not self.skip or self.proving:
                raise  # without skip nothing proves that a short page is the end of the window
            # `skip` is ignored: every page restarts at its second with skip 0, as for unstable ties; only a
            # second holding a whole page needs skip (`GroupPager`), and that ends the windowed read
            self.skip_failures = MAX_SKIP_FAILURES
            return None
        check_window(records, self.requests.path, self.position, self.until)
        self.limit = params["limit"]
        self.requests.page_sizes.observe(self.requests.path, self.limit, len(records))
        return records

    def _proof_ends(self, records: list) -> bool:
        """After a page that may have been a clamp: empty is the end, else that page was cut by the server."""
        self.proving = False
        if not records:
            return True
        self.requests.page_sizes.prove(self.requests.path, self.previous_size)  # read on as usual
        return False

    def _page_of(self, records: list) -> Page:
        """The page to hand on: its new records, the second to resume at, and whether it ends the read."""
        if not records:
            return Page([], self.position, True)
        path = self.requests.path
        new = [r for r in records if r["id"] not in self.seen]
        self.seen.update(r["id"] for r in records)
        last = last_update_of(records[-1], path)
        if self.requests.page_sizes.is_end(path, self.limit, len(records)):
            return Page(new, last, True)
        self.pages_without_news = 0 if new else self.pages_without_news + 1
        if self.pages_without_news >= MAX_PAGES_WITHOUT_NEWS:
            raise WindowNotHonoured(f"GET {path}: paging does not advance")
        return Page(new, last, False)

    def update_state(self, records: list, last: datetime | None) -> datetime | None:
        """Moves past a page read: the second to restart at and what was read of it. Returns the second to
        read alone instead (a full page at one second, and skipping into it is not trusted), else None."""
        at_last = [r["id"] for r in records if last_update_of(r, self.requests.path) == last]
        if len(at_last) == len(records) and self.skip_failures >= MAX_SKIP_FAILURES:
            return last
        if last == self.position:
            self.offset = self.skip + len(records)
            self.read_at_position.update(at_last)
        else:
            self.position, self.offset, self.read_at_position = last, len(at_last), set(at_last)
        self.last_id = records[-1]["id"]
        self.proving = (len(records) < self.limit
                        and (self.requests.page_sizes.confirmed(self.requests.path) or 0) < len(records)
                        and len(self.read_at_position) >= self.offset)
        self.previous_size = len(records)
        return None

    def _continues(self, records: list) -> bool:
        """Whether a page asked with `skip` into the second `position` continues the read: it starts with the
        record read last, and when it passes the second, the ids read at it reach the second's count (`skip`
        + its records in the page; records only leave a past second)."""
        if not records or records[0]["id"] != self.last_id:
            return False
        path = self.requests.path
        if last_update_of(records[-1], path) == self.position:
            return True
        in_page = [r["id"] for r in records if last_update_of(r, path) == self.position]
        return len(self.read_at_position.union(in_page)) >= self.skip + len(in_page)


@dataclass
class _GroupPass:
    """One pass over a group: how far it is, what it read, whether positions shifted under it."""

    offset: int = 0
    rewinds: int = 0
    ids: set[str] = field(default_factory=set)
    disturbed: bool = False
    mismatched: bool = False
    last_id: str | None = None


class GroupPager:
    """Every record at one `lastUpdate` second, read by the window [second, second] in passes.

    Each pass pages by `skip` to a short page: N = skip + its length is exact whatever the order, as every
    answer is a slice of some order of the same N records. While the order looks stable, each page re-reads
    the previous page's last record: a different first record means positions shifted (records left the
    second: updated or deleted) and the pass steps back a page; twice in a row means the order itself
    changes, and from then on only passes are trusted. A pass that saw no shift and read N distinct ids is
    complete. Otherwise, as records can only leave a past second, passes counting the same N as the one
    before are trusted together until their ids reach N. At most MAX_PASSES, else a loud error.
    """

    def __init__(self, requests: ListRequests, second: datetime, seen: set[str], limit: int) -> None:
        self.requests, self.second, self.seen, self.limit = requests, second, seen, limit
        self.stamp = format_timestamp(second)
        self.stable = True
        self.found: set[str] = set()
        self.previous_count: int | None = None

    def pages(self) -> Iterator[Page]:
        """The group's records not `seen` yet, in pages; nothing more once the read is cancelled."""
        for passes in range(1, MAX_PASSES + 1):
            current = _GroupPass()
            finished = yield from self._read_pass(current)
            if not finished or self._complete(current, passes):
                return
        raise InvoicingApiError("server", f"GET {self.requests.path}",
                                detail=f"tie order unstable: {len(self.found)} of {self.previous_count} records "
                                f"at {self.stamp} after {MAX_PASSES} passes")

    def _read_pass(self, current: _GroupPass) -> Generator[Page, None, bool]:
        """One pass to a short page; False when the read was cancelled."""
        while True:
            if self.requests.cancelled():
                return False
            skip = current.offset - 1 if self.stable and current.last_id is not None else current.offset
            records = self._fetch(skip)
            if self._stepped_back(current, records):
                continue
            current.mismatched = False
            current.ids.update(r["id"] for r in records)
            new = [r for r in records if r["id"] not in self.seen]
            self.seen.update(r["id"] for r in new)
            if new:
                yield Page(new, self.second, False)
            current.offset = skip + len(records)
            if self.requests.page_sizes.is_end(self.requests.path, self.limit, len(records)):
                return True
            # the overlap re-reads one record: only worth it (and only progressing) on pages of two or more
            current.last_id = records[-1]["id"] if len(records) > 1 else None

    def _fetch(self, skip: int) -> list:
        params: dict[str, Any] = {"orderBy": "lastUpdate", "order": 1, "limit": self.limit, "skip": skip,
                                  "updatedSince": self.stamp, "updatedUntil": self.stamp}
        records = self.requests.fetch(params)
        check_window(records, self.requests.path, self.second, self.second)
        self.limit = params["limit"]
        self.requests.page_sizes.observe(self.requests.path, self.limit, len(records))
        return records

    def _stepped_back(self, current: _GroupPass, records: list) -> bool:
        """Whether the page did not start with the record read last, and the pass steps back a page for it
        (once in a row; twice means the order changes, and only passes are trusted from then on)."""
        if not (self.stable and current.last_id is not None and (not records or records[0]["id"] != current.last_id)):
            return False
        current.disturbed = True
        if current.mismatched or current.rewinds >= MAX_REWINDS:
            self.stable = False  # the order changes between requests: passes only
            return False
        current.rewinds, current.mismatched = current.rewinds + 1, True
        current.offset, current.last_id = max(0, current.offset - self.limit), None
        return True

    def _complete(self, current: _GroupPass, passes: int) -> bool:
        """Whether the passes so far read every record of the group (see the class docstring)."""
        count = current.offset
        self.found = self.found | current.ids if count == self.previous_count else set()
        self.previous_count = count
        if not ((not current.disturbed and len(current.ids) >= count)
                or (self.found and len(self.found) >= count) or count == 0):
            return False
        if count > self.limit:
            self.requests.note(f"{count} records share lastUpdate {self.stamp}, more than a page ({self.limit}); "
                               f"read in {passes} passes")
        if not self.stable:
            self.requests.learn(stable_ties=False)
        return True
