"""The producer side of one endpoint's read: a thread per slice of the window (a slice may split its rest into
parallel slices), or one for a whole-list scan or a single object, puts pages on the queue in the order it reads
them; "fallback" when a window is not honoured (a whole-list scan follows), "done" after a whole-list read checked
by id the warehouse's ids it did not see, "error" for the consumer (reader.py) to fail the read or the run."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from pipelines.invoicing.dates import parse_timestamp
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.read.paging import (
    ListRequests,
    Page,
    PagingNotHonoured,
    ParametersRefused,
    WindowNotHonoured,
    keyset_pages,
    skip_pages,
)
from pipelines.invoicing.read.read_host import Index, ReadHost
from pipelines.invoicing.read.windows import MAX_SLICES, MIN_SPLIT_RANGE, SPLIT_PARTS, Slice, split_range
from pipelines.invoicing.record_ids import record_path
from pipelines.invoicing.settings import Endpoint

log = logging.getLogger(__name__)
# how a server shows deleted customers in its lists, once learnt: the windows then see every deletion
DELETIONS_LISTED = ("listed", "flagged")


class PageProducer:
    """The producer threads of one endpoint's read in one run; `queue` is what the consumer takes."""

    def __init__(self, feed: ReadHost, endpoint: Endpoint, index: Index, unchanged: Callable[[dict], bool]) -> None:
        self.feed = feed
        self.endpoint = endpoint
        self.name = endpoint.name
        self.index = index
        self._unchanged = unchanged  # the consumer's: a record the warehouse holds fetches no events
        self.queue: queue.Queue = queue.Queue()
        plan = feed.plan
        assert plan is not None, "a read is created only after its host prepared the run"
        self.whole_scan = endpoint.mode == "full" or (endpoint.mode == "window" and plan.reconcile)
        self._lock = threading.Lock()
        self._active = 0
        self._next_slice = 0
        self._cancel_slices = False
        self._abandoned = False  # the read failed alone (`abandon`): its producers stop, the run goes on
        self.fell_back = False
        self._failed = False
        self._refused = False
        self._deletions_listed = False  # a listed record of this run carried `deleted: true`
        self.scanned: set[str] = set()
        self.tombstones: list[str] = []

    def abandon(self) -> None:
        """The read failed alone: its producers stop at their next page, the run goes on."""
        self._abandoned = True

    def start(self, slices: dict[int, Slice]) -> None:
        """Starts the producer threads: one per slice of a window (`slices`), else one for the list."""
        with self._lock:
            self._next_slice = len(slices)
            self._active += 1  # the starter itself: no "done" before every slice is spawned
        try:
            if self.endpoint.mode == "single":
                self._spawn(self._single_task)
            elif self.endpoint.mode == "full":
                self._spawn(self._scan_task)
            elif self.feed.capabilities.of(self.endpoint.path).window in ("refused", "ignored"):
                # learnt by an earlier run (or the doctor): read in full at once, no request refused again
                self._spawn(self._known_unwindowed_task)
            else:
                for slice_id, part in list(slices.items()):
                    self._spawn(self._slice_task, slice_id, part.since, part.until, True)
        finally:
            self._task_done()

    def _spawn(self, task: Callable, *args: Any) -> threading.Thread:
        with self._lock:
            self._active += 1
        thread = threading.Thread(target=self._run, args=(task, *args), name=f"read-{self.name}", daemon=True)
        thread.start()
        return thread

    def _run(self, task: Callable, *args: Any) -> None:
        try:
            try:
                task(*args)
            except WindowNotHonoured as reason:
                self._fall_back(reason)  # a failure here must fail the read too, not let it finish short
        except BaseException as error:  # handed to the consumer, which stops the run cleanly  # noqa: BLE001
            self._failed = True
            self.queue.put(("error", error))
        finally:
            self._task_done()

    def _task_done(self) -> None:
        with self._lock:
            self._active -= 1
            last = self._active == 0
        if last and not self._failed:
            self._finish()

    def _stopped(self) -> bool:
        return self.feed.stopping or self._cancel_slices or self._abandoned

    def _given_up(self) -> bool:
        """The run stops, or this read failed alone: a whole-list read stops too."""
        return self.feed.stopping or self._abandoned

    def _single_task(self) -> None:
        data = self.feed.preloaded.get(self.name)
        if data is None:
            data = self.feed.client.get(self.endpoint.path, tag=self.name)
        self._put(None, Page([data], None, True))

    def _known_unwindowed_task(self) -> None:
        known = self.feed.capabilities.of(self.endpoint.path).window
        raise WindowNotHonoured(f"GET {self.endpoint.path}: window parameters {known} (known from an earlier run)")

    def _scan_task(self) -> None:
        path = self.endpoint.path
        requests = self._requests(self._given_up, note=self._note, learn=self._learn)
        pages = skip_pages(requests, ordering=self.feed.capabilities.of(path).ordering != "refused")
        try:
            for page in pages:
                self._put(None, page)
        except InvoicingApiError as error:
            if error.kind != "scope" or self.endpoint.scope == "read":
                raise
            # GET /webhooks has the spec's default scope (read and write); the ETL only asks for `read`
            self._refused = True
            self.feed.note(f"{self.name}: not read: {self.endpoint.path} needs the '{self.endpoint.scope}' "
                           f"scope and the sync asks for 'read' only (API says: {error.api_message})",
                           standing=True)

    @property
    def threads(self) -> int:
        """Producer threads of this read still running."""
        return self._active

    def _slice_task(self, slice_id: int, since, until, first_page: bool) -> None:
        pages = keyset_pages(self._requests(self._stopped, note=self._note, learn=self._learn), since, until,
                             ties_stable=self.feed.capabilities.of(self.endpoint.path).stable_ties)
        start, read = since, 0  # the range read so far, [start, page.position], and its records
        for page in pages:
            read += len(page.records)
            if start is None and page.records:
                start = parse_timestamp(page.records[0]["lastUpdate"])  # a read from the beginning: its first record
            split = self._split(slice_id, page, start, read, until, first_page)
            self._put(slice_id, page, split)
            if split:
                ranges = list(split.items())
                for child_id, (child_since, child_until) in ranges[1:]:
                    self._spawn(self._slice_task, child_id, child_since, child_until, False)
                pages.close()
                first_since, first_until = ranges[0][1]
                return self._slice_task(slice_id, first_since, first_until, False)
            first_page = False

    def _split(self, slice_id: int, page: Page, start, read: int, until, first_page: bool) -> dict | None:
        """Cuts the rest of a slice's range into parallel slices, if it is worth it.

        After a slice's first page, into up to SPLIT_PARTS; after a later page, in two, when the run has
        fewer readers than keep the limiter's slots filled (`Feed.wants_reader`: reads that finished early
        leave the big ones alone near the end of a run). The pages left are estimated from the density of
        the range read so far: `read` records from `start` (the slice's start, or its first record) to the
        page's position, which the read covered whole, quiet seconds included. A page's own span would
        say a burst of changes goes on to the window's end: a split after it cost an empty slice's request
        for nothing. A slice costs at least one request (its last, short page), so a range is only split
        when each part gets a few pages.
        """
        if page.done or page.position is None or not page.records or until - page.position < MIN_SPLIT_RANGE:
            return None
        if not first_page and not self.feed.wants_reader():
            return None
        if start is None or page.position <= start:
            return None  # all read so far at one second: no density to tell the seconds after it
        density = read / ((page.position - start).total_seconds() + 1)
        pages_left = density * (until - page.position).total_seconds() / max(len(page.records), 1)
        most_parts = SPLIT_PARTS if first_page else 2
        with self._lock:
            parts = min(most_parts, MAX_SLICES - self._next_slice + 1, int(pages_left // 3))  # 3+ pages each
            if parts < 2:
                return None
            ranges = split_range(page.position, until, parts)
            ids = [slice_id] + list(range(self._next_slice, self._next_slice + len(ranges) - 1))
            self._next_slice += len(ranges) - 1
        return dict(zip(ids, ranges, strict=True))

    def _fall_back(self, reason: Exception) -> None:
        with self._lock:
            if self.fell_back:
                return
            self.fell_back = self._cancel_slices = True
        log.warning("%s; reading %s in full instead", reason, self.endpoint.path)
        if isinstance(reason, PagingNotHonoured):
            # not the window's fault: the full read's ladder ends in one answer and says it is degraded
            self._learn(paging=reason.how)
            self._note(f"paging parameters {reason.how} by the server ({reason}); read in full")
        elif isinstance(reason, ParametersRefused):
            self._learn(window="refused", ordering="refused")
            self._note(f"window parameters refused by the server ({reason}); read in full")
        else:
            known = self.feed.capabilities.of(self.endpoint.path).window
            if known == "unknown":
                self._learn(window="ignored")
            self._note(f"window not honoured by the server ({reason}), read in full")
        self.queue.put(("fallback",))
        self._spawn(self._scan_task)

    def _requests(self, cancelled: Callable[[], bool], **reports: Any) -> ListRequests:
        """This read's requests of its list, stopped by `cancelled`; `reports`: where it notes and learns."""
        return ListRequests(self.feed.client.get, self.endpoint.path, self.feed.page_sizes, self.name, cancelled,
                            **reports)

    def _note(self, text: str, degraded: bool = False) -> None:
        self.feed.note(f"{self.name}: {text}", degraded=degraded)

    def _learn(self, **changes: object) -> None:
        self.feed.learn(self.endpoint.path, **changes)

    def _put(self, slice_id: int | None, page: Page, split: dict | None = None, *, listed: bool = True) -> None:
        if listed and self.endpoint.id_scan:
            self._learn_deletions(page.records)
        with self._lock:
            self.scanned.update(r["id"] for r in page.records if isinstance(r, dict) and "id" in r)
        if self.name == "supplier_documents":
            self.feed.fetch_events([r["id"] for r in page.records if not self._unchanged(r)])
        self.queue.put(("page", slice_id, page, split))

    def _finish(self) -> None:
        """After a whole-list scan: ids the warehouse holds but the scan did not see are checked one by one."""
        try:
            if (self.whole_scan or self.fell_back) and not self._refused:
                self._check_unlisted()
            elif self._wants_id_scan():
                self._list_ids()
                self._check_unlisted()
        except BaseException as error:  # noqa: BLE001
            self.queue.put(("error", error))
            return
        self.queue.put(("done",))

    def _verify_missing(self) -> tuple[int, int, int]:
        """GETs every live warehouse id no list page showed: 404 -> tombstone, else the record is loaded.
        Returns (ids checked, found flagged `deleted`, found gone)."""
        missing = [i for i, (_, deleted) in self.index.items() if deleted is None and i not in self.scanned]
        flagged = 0
        for record_id in missing:
            if self._given_up():
                break
            try:
                record = self.feed.client.get(record_path(self.endpoint.path, record_id), tag=self.name)
            except InvoicingApiError as error:
                if error.status == 404:
                    self.tombstones.append(record_id)
                    continue
                raise
            flagged += bool(isinstance(record, dict) and record.get("deleted"))
            self._put(None, Page([record], None, False), listed=False)
        return len(missing), flagged, len(self.tombstones)

    def _learn_deletions(self, records: list) -> None:
        """A listed record flagged `deleted` shows the server lists deletions: the windows see them."""
        for record in records:
            if isinstance(record, dict) and record.get("deleted"):
                self._deletions_listed = True
                self.feed.learn_deleted_customers("listed" if record.get("deletedAt") else "flagged")
                return

    def _wants_id_scan(self) -> bool:
        """A windowed read of a list that may hide deletions (A7b), with live warehouse ids to check."""
        return (self.endpoint.id_scan and self.endpoint.mode == "window" and not self.feed.stopping
                and not self._deletions_listed
                and self.feed.capabilities.deleted_customers not in DELETIONS_LISTED
                and any(deleted is None for _, deleted in self.index.values()))

    def _list_ids(self) -> None:
        """The id scan (A7b): every id of the list, so that `_check_unlisted` GETs the warehouse's live ids
        no longer listed (`deleted: true` or 404). Customers are few: ceil(customers / page) requests."""
        pages = skip_pages(self._requests(self._given_up))  # no note, nothing learnt: ids only
        for page in pages:
            with self._lock:
                self.scanned.update(r["id"] for r in page.records if isinstance(r, dict) and "id" in r)
            self._learn_deletions(page.records)

    def _check_unlisted(self) -> None:
        checked, flagged, gone = self._verify_missing()
        if not self.endpoint.id_scan:
            return
        if flagged and not self._deletions_listed:  # deleted, yet absent from the whole list
            self.feed.learn_deleted_customers("hidden")
        if checked:
            self.feed.note(f"{self.name}: {checked} listed-no-more checked by id ({flagged} deleted, {gone} gone)")
