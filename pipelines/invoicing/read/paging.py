"""Keyset paging over a frozen lastUpdate window, and a skip scan for lists without a usable window.

Records of one `lastUpdate` second may come back in a different order on every request (the contract
promises no tie order), so no read trusts a `skip` into a same-second group across requests unchecked: a
window is read in `lastUpdate` order, each page restarting at the second of the previous page's last
record. It skips the records of that second already read but the last, which must come back first, and
once past the second the ids read at it must reach its count; a failed check reads that second alone, by
the window [S, S], in passes until the distinct ids reach its count. A read whose checks fail twice (the
server shuffles ties) restarts every page at its second with skip 0 (re-reading the second's records,
deduped by `id`), and reads a group of at least a page alone, in passes. Records leaving a group mid-read
moved past the window's end: a later run reads them. A page ends the read only when it is empty, or shorter
than both the `limit` asked and a page THIS LIST served in this run: the contract shows no maximum page size,
so each list may have its own, it may clamp `limit`, and it may shrink between runs.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from pipelines.invoicing.dates import format_timestamp, parse_timestamp
from pipelines.invoicing.errors import InvoicingApiError

PAGE_LIMIT = 100  # what the sync asks; a list serving less (clamp or 400) is learnt from its answers
# A bare 400 (naming no parameter) on a `limit` above this is taken for a refused page size and the limit is
# halved: 20 is the sandbox's default page, a size every server is likely to accept. It never ends a read.
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


class PagingNotHonoured(WindowNotHonoured):
    """The server refused (400) or ignored `limit`/`skip` on a list: past its first answer, the list cannot
    be read by pages (the spec names no paging parameter for the supplier lists or the webhooks)."""

    def __init__(self, message: str, how: str) -> None:
        super().__init__(message)
        self.how = how  # "refused" or "ignored"


def _noop(*_args: object, **_changes: object) -> None:
    return None


class Note(Protocol):
    """Where a read writes a remark for the run's report; `degraded`: rows may be missing."""

    def __call__(self, text: str, degraded: bool = False) -> None: ...


class PageSizes:
    """The page sizes each list (path) served in this run: what may end a read of that list.

    The contract shows neither the default nor the maximum page size, so every list may have its own. Each
    page a list serves holds at most its maximum, so a later page of the same list shorter than the largest
    it served, and shorter than the `limit` asked, is the end. A list's first page (or any page as large as
    the largest so far) proves nothing when shorter than the limit asked: it may be a clamp, and one more
    request (an empty or shorter page) proves the end. Sizes committed by earlier runs are remembered per
    list for the record only: a maximum may shrink between runs, so they never end a read, and the `"*"`
    of older states (one size for every list) is dropped.
    """

    def __init__(self, known: dict[str, int] | None = None) -> None:
        self._lock = threading.Lock()
        self._hints: dict[str, int] = {}
        self._largest: dict[str, int] = {}  # per path: the largest page it served in this run
        self._proven: dict[str, int] = {}  # per path: a page size it served while more records remained
        self._refused_above: dict[str, int] = {}
        # per path: whether `skip` was seen honoured (True) or ignored (False) in this run, and the ids of
        # the latest skip-0 answer with its other parameters (what a later page with skip is compared with)
        self._skip: dict[str, bool] = {}
        self._first_page: dict[str, tuple[tuple, set[str]]] = {}
        self.remember(known)

    def remember(self, known: dict[str, int] | None) -> None:
        """Adds sizes committed by earlier runs, per list (the old cross-list `"*"` is ignored)."""
        for path, size in (known or {}).items():
            if path == "*":
                continue
            with self._lock:
                self._hints[path] = max(self._hints.get(path, 0), int(size))

    def observe(self, path: str, asked: int, received: int) -> None:
        """Records a page of `received` records served on `path` for a `limit` of `asked`."""
        with self._lock:
            self._largest[path] = max(self._largest.get(path, 0), received)
            if received >= asked:
                self._proven[path] = max(self._proven.get(path, 0), received)

    def prove(self, path: str, size: int) -> None:
        """Records that `path` served a page of `size` records while more remained (a clamp): a page of that
        size is a full one. Only a read's own next request proves it (slices of one list run in parallel)."""
        with self._lock:
            self._proven[path] = max(self._proven.get(path, 0), size)

    def is_end(self, path: str, asked: int, received: int) -> bool:
        """Whether a page of `received` records, asked with `limit=asked`, is the last of the list at `path`:
        empty, or shorter than the limit and than a page this list served in this run (observed first)."""
        if received == 0:
            return True
        if received >= asked:
            return False
        with self._lock:
            largest = self._largest.get(path, 0)
        return received < largest

    def confirmed(self, path: str) -> int | None:
        """The largest page `path` served in this run that was not its last (None: not known yet)."""
        with self._lock:
            return self._proven.get(path)

    def limit(self, path: str, asked: int) -> int:
        """The `limit` to ask on `path`: `asked`, unless the server refused it (some servers answer 400)."""
        with self._lock:
            return min(asked, self._refused_above.get(path, asked))

    def refuse(self, path: str, limit: int) -> None:
        """Records that `path` refused (400) a `limit` above `limit`: later requests of the run ask at most it."""
        with self._lock:
            self._refused_above[path] = limit

    def skip_honoured(self, path: str) -> bool | None:
        """Whether `path` honours `skip` (seen in this run); None: not checked yet."""
        with self._lock:
            return self._skip.get(path)

    def settle_skip(self, path: str, honoured: bool) -> None:
        """Records whether `path` honours `skip` for the rest of the run."""
        with self._lock:
            self._skip.setdefault(path, honoured)

    def first_page(self, path: str, key: tuple, ids: set[str] | None = None) -> set[str] | None:
        """Remembers (with `ids`) or returns the ids of the latest skip-0 answer of `path` asked with `key`."""
        with self._lock:
            if ids is not None:
                self._first_page[path] = (key, ids)
                return ids
            known = self._first_page.get(path)
            return known[1] if known is not None and known[0] == key else None

    def as_dict(self) -> dict[str, int]:
        """What to commit, per list: this run's proven sizes where known, else the earlier runs' (a quiet
        run's short pages say nothing about a maximum)."""
        with self._lock:
            return {**self._hints, **self._proven}


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


def _names_paging(error: InvoicingApiError, params: dict) -> bool:
    """A 400 about `limit`/`skip` themselves (an unknown parameter), or a bare 400 on a request that
    carries nothing else: the list does not page by these names."""
    if error.status != 400 or not {"limit", "skip"} & set(params):
        return False
    if not set(params) - {"limit", "skip"}:
        return True
    message = error.api_message or ""
    return bool(re.search(r"\b(limit|skip)\b", message)) and not re.search(r"at most \d+", message)


def _fetch(get: Callable[..., Any], path: str, params: dict, tag: str, page_sizes: PageSizes) -> list:
    """One page; a server that refuses the `limit` (400 instead of clamping) gets the size it names, else
    half; a 400 about `limit`/`skip` raises PagingNotHonoured, one naming another parameter
    ParametersRefused. A page asked with `skip` > 0 on a list whose `skip` is not known to work in this run
    is compared with the skip-0 answer of the same request, when the read asked it (a scan's or a group
    pass's first page): the same records mean `skip` is ignored (PagingNotHonoured). No extra request: a
    keyset page asked with `skip` checks that it starts with the record read last, which an ignored skip
    fails, and the read then goes on by whole seconds or reads the second alone, by passes, comparing there."""
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
            if _names_paging(error, params):
                raise PagingNotHonoured(f"GET {path}: paging parameters refused (HTTP 400: {error.api_message})",
                                        "refused") from error
            if error.status == 400 and set(params) - {"limit", "skip"}:
                raise ParametersRefused(f"GET {path}: parameters refused (HTTP 400: {error.api_message})") from error
            raise
        if not isinstance(data, list) or not all(isinstance(r, dict) and "id" in r for r in data):
            raise InvoicingApiError("malformed", f"GET {path}", 200, detail="'data' is not a list of records")
        if "limit" in params and len(data) > params["limit"]:
            # a server may serve fewer than asked (a clamp), never more: such a page is not one of the list's
            # pages (security review 2, L3: 400,000 records for limit=100)
            raise InvoicingApiError("malformed", f"GET {path}", 200,
                                    detail=f"a page of {len(data)} records for limit={params['limit']} (refused)")
        if "skip" in params:
            _check_skip(path, params, data, page_sizes)
        return data
    raise InvoicingApiError("http", f"GET {path}", 400, detail="no page size accepted")


def _check_skip(path: str, params: dict, data: list, page_sizes: PageSizes) -> None:
    """Raises PagingNotHonoured when a page asked with `skip` > 0 holds the records of the skip-0 answer, or
    half of them or more when asked past them all: a list that changes between two requests (subscriptions
    added or removed while it is read) answers a shifted first page to a `skip` it ignores, never the same
    one. An honoured `skip` shares records with the first page only when more than half a page of them moved
    past `skip` between the two requests; mistaken for ignored, the list is read as one answer, flagged
    degraded, never short and silent."""
    key = tuple(sorted((name, str(value)) for name, value in params.items() if name != "skip"))
    ids = {r["id"] for r in data}
    if not params["skip"]:
        page_sizes.first_page(path, key, ids)
        return
    honoured = page_sizes.skip_honoured(path)
    if honoured is False:
        raise PagingNotHonoured(f"GET {path}: skip ignored (seen earlier in this run)", "ignored")
    if honoured or not data:  # an empty page past the first: skip did move
        return
    first = page_sizes.first_page(path, key)
    if first is None:
        return  # a keyset page: its own check (it starts with the record read last) catches an ignored skip
    shared = len(ids & first)
    # a page asked past every record of the first answer shares none of them unless `skip` is ignored (a
    # page asked inside it, as a read re-reading its last record asks, shares some by design)
    ignored = ids == first or (params["skip"] >= len(first) and 2 * shared >= len(ids))
    page_sizes.settle_skip(path, not ignored)
    if ids == first:
        raise PagingNotHonoured(f"GET {path}: skip ignored (skip {params['skip']} and skip 0 answer the same "
                                f"{len(ids)} records)", "ignored")
    if ignored:
        raise PagingNotHonoured(f"GET {path}: skip ignored (skip {params['skip']} answers {shared} of the "
                                f"{len(ids)} records of skip 0: the list changed between the two)", "ignored")


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
    note: Note = _noop,
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
    # The page before was shorter than the limit but as large as any this list served in the run: a clamp
    # or the end. The proof asks past every record read at its last second: empty is the end, whatever the
    # order of ties (fewer records remain from that second on than were passed, and all were read).
    proving, previous_size = False, 0
    while not cancelled():
        by_skip = skip_failures < MAX_SKIP_FAILURES and limit >= 2 and offset >= 2 and last_id is not None
        skip = offset if proving else offset - 1 if by_skip else 0
        params: dict[str, Any] = {"orderBy": "lastUpdate", "order": 1, "limit": limit, "skip": skip,
                                  "updatedUntil": format_timestamp(until)}
        if position is not None:
            params["updatedSince"] = format_timestamp(position)
        try:
            records = _fetch(get, path, params, tag, page_sizes)
        except PagingNotHonoured as paging:
            if paging.how != "ignored" or not skip or proving:
                raise  # without skip nothing proves that a short page is the end of the window
            # `skip` is ignored: every page restarts at its second with skip 0, as for unstable ties; only a
            # second holding a whole page needs skip (`_group_pages`), and that ends the windowed read
            skip_failures = MAX_SKIP_FAILURES
            continue
        _check_window(records, path, position, until)
        limit = params["limit"]
        page_sizes.observe(path, limit, len(records))
        if proving:
            proving = False
            if not records:
                yield Page([], position, True)
                return
            page_sizes.prove(path, previous_size)  # the page before was cut by the server: read on as usual
            continue
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
            if page_sizes.is_end(path, limit, len(records)):
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
                proving = (len(records) < limit and (page_sizes.confirmed(path) or 0) < len(records)
                           and len(read_at_position) >= offset)
                previous_size = len(records)
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
                 limit: int, cancelled: Callable[[], bool], note: Note,
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
            if page_sizes.is_end(path, limit, len(records)):
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
    note: Note = _noop,
    learn: Callable[..., None] = _noop,
) -> Iterator[Page]:
    """Every record of a list, by `skip` (for lists whose window cannot be trusted), deduped by id.

    The ladder when the server refuses parameters (400): ascending lastUpdate order; else the server's own
    order (`ordering=False` starts there). A list that refuses or ignores `limit`/`skip` is read as one
    answer without any parameter, with a degraded note (N4): rows may be missing.
    """
    seen: set[str] = set()
    try:
        if ordering:
            try:
                yield from _scan_passes(get, path, {"orderBy": "lastUpdate", "order": 1}, seen,
                                        page_sizes=page_sizes, tag=tag, limit=limit, cancelled=cancelled, note=note)
                return
            except ParametersRefused as refused:
                learn(ordering="refused")
                note(f"ordering parameters refused ({_reason(refused)}); read by skip in the server's order")
        yield from _scan_passes(get, path, {}, seen, page_sizes=page_sizes, tag=tag, limit=limit,
                                cancelled=cancelled, note=note)
        return
    except PagingNotHonoured as paging:
        learn(paging=paging.how)
        reason = str(paging)
    data = _fetch(get, path, {}, tag, page_sizes)
    # Rows may be missing (N4): the contract shows no default page size, so nothing tells whether this one
    # answer holds the whole list. Degraded: the marts built on this table must not be published as exact.
    note(f"paging not honoured ({reason}); read as one answer of {len(data)} records (may be incomplete)",
         degraded=True)
    yield Page([r for r in data if r["id"] not in seen], None, True)


def _reason(refused: Exception) -> str:
    cause = refused.__cause__
    return f"HTTP 400: {cause.api_message}" if isinstance(cause, InvoicingApiError) else str(refused)


def _scan_passes(get, path: str, order: dict, seen: set[str], *, page_sizes: PageSizes, tag: str, limit: int,
                 cancelled: Callable[[], bool], note: Note) -> Iterator[Page]:
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
                # pages by `skip` that bring nothing new: the server does not page this list as asked (it may
                # ignore `skip` while the list changes); read as one answer, degraded, not a failed run
                raise PagingNotHonoured(f"GET {path}: paging by skip does not advance ({stalls} pages without a "
                                        "new record)", "ignored")
            passed.update(r["id"] for r in records)
            new = [r for r in records if r["id"] not in seen]
            seen.update(r["id"] for r in new)
            offset = skip + len(records)
            if new:
                yield Page(new, None, False)
            if page_sizes.is_end(path, limit, len(records)):
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
