"""How the pages of one list are asked: the request, the checks every answer passes, and what a refusal
means (paging.py tells the whole story).

`ListRequests` is what every pager of one list shares in a run: the getter, the path, the run's page sizes,
the tag its requests are counted under, and where a read reports (cancelled, note, learn). Its `fetch` asks
one page: a server that refuses the `limit` (400 instead of clamping) gets the size it names, else half; a
400 about `limit`/`skip` raises PagingNotHonoured, one naming another parameter ParametersRefused; a page
longer than the `limit` asked is refused; a page asked with `skip` is checked against the skip-0 answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from pipelines.invoicing.dates import format_timestamp, parse_timestamp
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.read.page_sizes import PageSizes

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


def check_window(records: list, path: str, since: datetime | None, until: datetime | None) -> None:
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


def _never() -> bool:
    return False


@dataclass(frozen=True)
class ListRequests:
    """The requests of one list in one run, shared by its pagers (module docstring)."""

    get: Callable[..., Any]
    path: str
    page_sizes: PageSizes
    tag: str
    cancelled: Callable[[], bool] = _never
    note: Note = _noop
    learn: Callable[..., None] = _noop

    def fetch(self, params: dict) -> list:
        """One page asked with `params` (its `limit` lowered to what the list accepts, in place); see the module
        docstring. No extra request checks `skip` on a keyset page: it starts with the record read last, which
        an ignored skip fails, and the read then goes on by whole seconds or reads the second alone."""
        for _ in range(8):
            if "limit" in params:
                params["limit"] = self.page_sizes.limit(self.path, params["limit"])
            try:
                data = self.get(self.path, params, tag=self.tag)
            except InvoicingApiError as error:
                self._refused(error, params)  # raises unless the limit was refused: ask again, smaller
                continue
            self._check_records(data, params)
            if "skip" in params:
                _check_skip(self.path, params, data, self.page_sizes)
            return data
        raise InvoicingApiError("http", f"GET {self.path}", 400, detail="no page size accepted")

    def _refused(self, error: InvoicingApiError, params: dict) -> None:
        """Learns a refused `limit` (the size the server names, else half); raises for any other error."""
        path = self.path
        if _refuses_limit(error, params):
            named = re.search(r"at most (\d+)", error.api_message or "")
            self.page_sizes.refuse(path, int(named.group(1)) if named else params["limit"] // 2)
            return
        if _names_paging(error, params):
            raise PagingNotHonoured(f"GET {path}: paging parameters refused (HTTP 400: {error.api_message})",
                                    "refused") from error
        if error.status == 400 and set(params) - {"limit", "skip"}:
            raise ParametersRefused(f"GET {path}: parameters refused (HTTP 400: {error.api_message})") from error
        raise error

    def _check_records(self, data: Any, params: dict) -> None:
        """A list of records with ids, never longer than the `limit` asked."""
        if not isinstance(data, list) or not all(isinstance(r, dict) and "id" in r for r in data):
            raise InvoicingApiError("malformed", f"GET {self.path}", 200, detail="'data' is not a list of records")
        if "limit" in params and len(data) > params["limit"]:
            # a server may serve fewer than asked (a clamp), never more: such a page is not one of the list's
            # pages (security review 2, L3: 400,000 records for limit=100)
            raise InvoicingApiError("malformed", f"GET {self.path}", 200,
                                    detail=f"a page of {len(data)} records for limit={params['limit']} (refused)")


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
