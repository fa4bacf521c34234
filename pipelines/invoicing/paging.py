"""Keyset paging over a frozen lastUpdate window, and a skip scan for lists without a usable window.

Records of one `lastUpdate` second may come back in a different order on every request (the contract
promises no tie order), so no read trusts a `skip` into a same-second group across requests unchecked: a
window is read in `lastUpdate` order, each page restarting at the second of the previous page's last
record. It skips the records of that second already read but the last, which must come back first, and
once past the second the ids read at it must reach its count; a failed check reads that second alone, by
the window [S, S], in passes until the distinct ids reach its count. A read whose checks fail twice (the
server shuffles ties) restarts every page at its second with skip 0 (re-reading the second's records,
deduped by `id`), and reads a group of at least a page alone, in passes. Records leaving a group mid-read
moved past the window's end: a later run reads them. A page ends the read only when it is empty or shorter
than the page size the server has honoured in this run (it may clamp `limit`, and its maximum may shrink
between runs).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pipelines.invoicing.dates import format_timestamp, parse_timestamp
from pipelines.invoicing.errors import InvoicingApiError

PAGE_LIMIT = 100  # the contract's maximum; a server that clamps lower is learned from its answers
# The contract's default page size (api-facts): no server's maximum is below it, so a page shorter than
# this ends a read even when the page size is only known from an earlier run (it may have shrunk since).
SMALLEST_MAX_PAGE = 20
MAX_REWINDS = 200
MAX_PAGES_WITHOUT_NEWS = 3
# Passes over one same-second group (or one whole list) whose order changes between requests: a pass
# reads a fresh permutation, so a record is missed by k passes with probability p^k (p < 0.4 for pages
# of 50); 25 passes make a silent stop impossible in practice, and a loud error ends anything worse.
MAX_PASSES = 25
# A read whose checks of a skip into a second failed this often stops skipping: the order of ties changes
# between requests (or records keep leaving them), and each failed check costs a request.
MAX_SKIP_FAILURES = 2


class WindowNotHonoured(Exception):
    """The server answered records outside the window or order it was asked for."""


class ParametersRefused(WindowNotHonoured):
    """The server refused (HTTP 400) a window or ordering parameter of a list."""


def _noop(*_args: object, **_changes: object) -> None:
    return None


class PageSizes:
    """The page sizes the server honours: per path, and the largest seen anywhere.

    Sizes observed in this run are confirmed: a page shorter than them ends a read. Sizes committed by
    earlier runs are hints only, because the server's maximum may have shrunk since: a short page under a
    hint ends a read only when it is shorter than SMALLEST_MAX_PAGE, otherwise one more request proves the
    end. A path that never filled a page (five webhooks) uses the largest size confirmed on any path: the
    service has one maximum page size (api-facts.md).
    """

    def __init__(self, known: dict[str, int] | None = None) -> None:
        self._lock = threading.Lock()
        self._hints: dict[str, int] = {}
        self._largest_hint = 0
        self._full: dict[str, int] = {}
        self._largest = 0
        self._refused_above: dict[str, int] = {}
        self.remember(known)

    def remember(self, known: dict[str, int] | None) -> None:
        """Adds sizes committed by earlier runs, as hints."""
        for path, size in (known or {}).items():
            with self._lock:
                if path == "*":
                    self._largest_hint = max(self._largest_hint, int(size))
                else:
                    self._hints[path] = max(self._hints.get(path, 0), int(size))

    def observe(self, path: str, asked: int, received: int) -> None:
        with self._lock:
            self._largest = max(self._largest, received)
            if received >= asked or path in self._full:
                self._full[path] = max(self._full.get(path, 0), received)

    def is_end(self, path: str, received: int) -> bool:
        """Whether a page of `received` records is shorter than what the server serves (the list ended)."""
        if received == 0:
            return True
        with self._lock:
            confirmed = self._full.get(path) or self._largest
            hint = self._hints.get(path) or self._largest_hint
        if received < confirmed:
            return True
        return received < hint and received < SMALLEST_MAX_PAGE

    def limit(self, path: str, asked: int) -> int:
        """The `limit` to ask on `path`: `asked`, unless the server refused it (some servers answer 400)."""
        with self._lock:
            return min(asked, self._refused_above.get(path, asked))

    def refuse(self, path: str, limit: int) -> None:
        with self._lock:
            self._refused_above[path] = limit

    def as_dict(self) -> dict[str, int]:
        """What to commit: this run's sizes where observed, else the hints of earlier runs."""
        with self._lock:
            # the one maximum: a size some page filled in this run, else the earlier hint (a quiet run's
            # short pages say nothing about the maximum and must not overwrite it)
            largest = max(self._full.values(), default=0) or self._largest_hint or self._largest
            return {**self._hints, **self._full, "*": largest}


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


def _refuses_limit(error: InvoicingApiError, params: dict) -> bool:
    """A 400 about the page size: it names `limit` (not as unknown), or names none of the other parameters
    of a request asking more than the contract's default (then the size is the likeliest culprit)."""
    if error.status != 400 or "limit" not in params or params["limit"] <= 1:
        return False
    message = error.api_message or ""
    if "limit" in message:
        return "unknown" not in message.lower()
    others = [name for name in params if name != "limit"]
    return params["limit"] > SMALLEST_MAX_PAGE and not any(name in message for name in others)


def _fetch(get: Callable[..., Any], path: str, params: dict, tag: str, page_sizes: PageSizes) -> list:
    """One page; a server that refuses the `limit` (400 instead of clamping) gets the size it names, else
    half; a 400 naming another parameter raises ParametersRefused."""
    for _ in range(8):
        if "limit" in params:
            params["limit"] = page_sizes.limit(path, params["limit"])
        try:
            data = get(path, params, tag=tag)
        except InvoicingApiError as error:
            if _refuses_limit(error, params):
                named = re.search(r"at most (\d+)", error.api_message or "")
                page_sizes.refuse(path, int(named.group(1)) if named else params["limit"] // 2)
                continue
            if error.status == 400 and set(params) - {"limit", "skip"}:
                raise ParametersRefused(f"GET {path}: parameters refused (HTTP 400: {error.api_message})") from error
            raise
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
    ties_stable: bool | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    note: Callable[[str], None] = _noop,
    learn: Callable[..., None] = _noop,
) -> Generator[Page, None, None]:
    """Pages of the records with since <= lastUpdate <= until (both inclusive; since None: from the start).

    Each page restarts at the second of the previous page's last record. Where the records of that second
    keep one order (unless `ties_stable` is False, as learnt earlier), it skips the ones already read but
    the last, which must come back first: a check that positions did not shift (records left the second,
    or its order changed). When the page passes the second, the ids read at it must reach `skip + those in
    the page`, its exact count. Either check failing reads that second alone, in passes (`_group_pages`),
    and the read goes on after it. After two failures no page skips: each restarts at its second with
    skip 0, and a full page all at one second is a group of at least a page, read by `_group_pages`.
    Raises WindowNotHonoured when the server ignores or refuses the window or the order (caller falls back).
    """
    seen: set[str] = set()
    position = since
    # Inside the second `position`: how many of its records the read has passed in the server's order,
    # their ids, and the id of the last one (the next page re-reads it as the check).
    offset, last_id = 0, None
    read_at_position: set[str] = set()
    skip_failures = 0 if ties_stable is not False else MAX_SKIP_FAILURES
    pages_without_news = 0
    while not cancelled():
        by_skip = skip_failures < MAX_SKIP_FAILURES and limit >= 2 and offset >= 2 and last_id is not None
        skip = offset - 1 if by_skip else 0
        params: dict[str, Any] = {"orderBy": "lastUpdate", "order": 1, "limit": limit, "skip": skip,
                                  "updatedUntil": format_timestamp(until)}
        if position is not None:
            params["updatedSince"] = format_timestamp(position)
        records = _fetch(get, path, params, tag, page_sizes)
        _check_window(records, path, position, until)
        limit = params["limit"]
        page_sizes.observe(path, limit, len(records))
        if skip and not _continues(records, path, position, skip, last_id, read_at_position):
            skip_failures += 1  # positions shifted under the read: the second is read alone, in passes
            group = position
        else:
            if not records:
                yield Page([], position, True)
                return
            new = [r for r in records if r["id"] not in seen]
            seen.update(r["id"] for r in records)
            last = last_update_of(records[-1], path)
            if page_sizes.is_end(path, len(records)):
                yield Page(new, last, True)
                return
            pages_without_news = 0 if new else pages_without_news + 1
            if pages_without_news >= MAX_PAGES_WITHOUT_NEWS:
                raise WindowNotHonoured(f"GET {path}: paging does not advance")
            yield Page(new, last, False)
            at_last = [r["id"] for r in records if last_update_of(r, path) == last]
            if len(at_last) < len(records) or skip_failures < MAX_SKIP_FAILURES:
                if last == position:
                    offset = skip + len(records)
                    read_at_position.update(at_last)
                else:
                    position, offset, read_at_position = last, len(at_last), set(at_last)
                last_id = records[-1]["id"]
                continue
            group = last  # a full page at one second, and skipping into it is not trusted
        assert group is not None  # a skip is only asked inside a second already read
        yield from _group_pages(get, path, group, seen, page_sizes=page_sizes, tag=tag, limit=limit,
                                cancelled=cancelled, note=note, learn=learn)
        if group >= until:
            yield Page([], group, True)
            return
        position, offset, read_at_position, last_id = group + timedelta(seconds=1), 0, set(), None  # whole seconds


def _continues(records: list, path: str, second: datetime | None, skip: int, last_id: str | None,
               read_at_second: set[str]) -> bool:
    """Whether a page asked with `skip` into `second` continues the read: it starts with the record read
    last, and when it passes the second, the ids read at it reach the second's count (`skip` + its
    records in the page; records only leave a past second)."""
    if not records or records[0]["id"] != last_id:
        return False
    if last_update_of(records[-1], path) == second:
        return True
    in_page = [r["id"] for r in records if last_update_of(r, path) == second]
    return len(read_at_second.union(in_page)) >= skip + len(in_page)


def _group_pages(get, path: str, second: datetime, seen: set[str], *, page_sizes: PageSizes, tag: str,
                 limit: int, cancelled: Callable[[], bool], note: Callable[[str], None],
                 learn: Callable[..., None]) -> Iterator[Page]:
    """Every record at one `lastUpdate` second, read by the window [second, second] in passes.

    Each pass pages by `skip` to a short page: N = skip + its length is exact whatever the order, as every
    answer is a slice of some order of the same N records. While the order looks stable, each page re-reads
    the previous page's last record: a different first record means positions shifted (records left the
    second: updated or deleted) and the pass steps back a page; twice in a row means the order itself
    changes, and from then on only passes are trusted. A pass that saw no shift and read N distinct ids is
    complete. Otherwise, as records can only leave a past second, passes counting the same N as the one
    before are trusted together until their ids reach N. At most MAX_PASSES, else a loud error.
    """
    stamp = format_timestamp(second)
    found: set[str] = set()
    previous_count = None
    stable = True
    for passes in range(1, MAX_PASSES + 1):
        offset = rewinds = 0
        this_pass: set[str] = set()
        disturbed = mismatched = False
        last_id = None
        while True:
            if cancelled():
                return
            skip = offset - 1 if stable and last_id is not None else offset
            params: dict[str, Any] = {"orderBy": "lastUpdate", "order": 1, "limit": limit, "skip": skip,
                                      "updatedSince": stamp, "updatedUntil": stamp}
            records = _fetch(get, path, params, tag, page_sizes)
            _check_window(records, path, second, second)
            limit = params["limit"]
            page_sizes.observe(path, limit, len(records))
            if stable and last_id is not None and (not records or records[0]["id"] != last_id):
                disturbed = True
                if mismatched or rewinds >= MAX_REWINDS:
                    stable = False  # the order changes between requests: passes only
                else:
                    rewinds, mismatched = rewinds + 1, True
                    offset, last_id = max(0, offset - limit), None
                    continue
            mismatched = False
            this_pass.update(r["id"] for r in records)
            new = [r for r in records if r["id"] not in seen]
            seen.update(r["id"] for r in new)
            if new:
                yield Page(new, second, False)
            offset = skip + len(records)
            if page_sizes.is_end(path, len(records)):
                break
            # the overlap re-reads one record: only worth it (and only progressing) on pages of two or more
            last_id = records[-1]["id"] if len(records) > 1 else None
        count = offset
        found = found | this_pass if count == previous_count else set()
        previous_count = count
        if (not disturbed and len(this_pass) >= count) or (found and len(found) >= count) or count == 0:
            if count > limit:
                note(f"{count} records share lastUpdate {stamp}, more than a page ({limit}); read in {passes} passes")
            if not stable:
                learn(stable_ties=False)
            return
    raise InvoicingApiError("server", f"GET {path}", detail=f"tie order unstable: {len(found)} of {count} records "
                            f"at {stamp} after {MAX_PASSES} passes")


def skip_pages(
    get: Callable[..., Any],
    path: str,
    *,
    page_sizes: PageSizes,
    tag: str,
    limit: int = PAGE_LIMIT,
    cancelled: Callable[[], bool] = lambda: False,
    ordering: bool = True,
    note: Callable[[str], None] = _noop,
    learn: Callable[..., None] = _noop,
) -> Iterator[Page]:
    """Every record of a list, by `skip` (for lists whose window cannot be trusted), deduped by id.

    The ladder when the server refuses parameters (400): ascending lastUpdate order; else the server's own
    order (`ordering=False` starts there); else one answer without any parameter (may be incomplete).
    """
    seen: set[str] = set()
    if ordering:
        try:
            yield from _scan_passes(get, path, {"orderBy": "lastUpdate", "order": 1}, seen, page_sizes=page_sizes,
                                    tag=tag, limit=limit, cancelled=cancelled, note=note)
            return
        except ParametersRefused as refused:
            learn(ordering="refused")
            note(f"ordering parameters refused ({_reason(refused)}); read by skip in the server's order")
    try:
        yield from _scan_passes(get, path, {}, seen, page_sizes=page_sizes, tag=tag, limit=limit,
                                cancelled=cancelled, note=note)
        return
    except InvoicingApiError as error:
        if error.status != 400:
            raise
        reason = f"HTTP 400: {error.api_message}"
    data = _fetch(get, path, {}, tag, page_sizes)
    note(f"paging parameters refused ({reason}); read as one answer of {len(data)} records (may be incomplete)")
    yield Page([r for r in data if r["id"] not in seen], None, True)


def _reason(refused: Exception) -> str:
    cause = refused.__cause__
    return f"HTTP 400: {cause.api_message}" if isinstance(cause, InvoicingApiError) else str(refused)


def _scan_passes(get, path: str, order: dict, seen: set[str], *, page_sizes: PageSizes, tag: str, limit: int,
                 cancelled: Callable[[], bool], note: Callable[[str], None]) -> Iterator[Page]:
    """Whole-list passes by `skip` until the distinct ids read reach the list's count (see _group_pages).

    In lastUpdate order, each page after the first starts at the previous page's last second (skip back
    over the records read at that second): if it does not start with a record of that second, positions
    shifted under the read (records moved or vanished) and the read steps back a page.
    """
    for passes in range(1, MAX_PASSES + 1):
        offset = overlap = rewinds = stalls = 0
        last: datetime | None = None
        passed: set[str] = set()
        while not cancelled():
            skip = offset - overlap
            params = {**order, "limit": limit, "skip": skip}
            records = _fetch(get, path, params, tag, page_sizes)
            limit = params["limit"]
            page_sizes.observe(path, limit, len(records))
            if overlap and (not records or last_update_of(records[0], path) != last) and rewinds < MAX_REWINDS:
                rewinds += 1
                offset, overlap = max(0, offset - limit), 0
                continue
            stalls = 0 if {r["id"] for r in records} - passed else stalls + 1
            if records and stalls >= MAX_PAGES_WITHOUT_NEWS:
                raise InvoicingApiError("server", f"GET {path}", detail="paging by skip does not advance")
            passed.update(r["id"] for r in records)
            new = [r for r in records if r["id"] not in seen]
            seen.update(r["id"] for r in new)
            offset = skip + len(records)
            if new:
                yield Page(new, None, False)
            if page_sizes.is_end(path, len(records)):
                break
            overlap = 0
            if order and records:
                last = last_update_of(records[-1], path)
                overlap = sum(1 for r in records if last_update_of(r, path) == last)
                overlap = 0 if overlap == len(records) else overlap  # a full page at one second: passes
        if cancelled() or len(seen) >= offset:
            if passes > 1:
                note(f"{offset} records read in {passes} passes (their order changed between requests)")
            yield Page([], None, True)
            return
    raise InvoicingApiError("server", f"GET {path}", detail=f"order unstable: {len(seen)} of {offset} records "
                            f"after {MAX_PASSES} passes")
