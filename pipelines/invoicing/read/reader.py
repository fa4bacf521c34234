"""One endpoint's read during a run: producer threads fetch pages, the dlt resource consumes them.

Producers (one thread per slice of the window, or one for a whole-list scan) put pages on a queue in the
order each slice reads them. The consumer (the dlt resource, in dlt's extract thread) takes pages, keeps
the slice progress that goes into dlt state with the same load, skips records already loaded, and maps
records to rows. Progress therefore only ever describes pages whose rows are in the same load package.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from pipelines.invoicing.dates import format_timestamp, parse_timestamp
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.read.paging import (
    Page,
    PagingNotHonoured,
    ParametersRefused,
    WindowNotHonoured,
    keyset_pages,
    skip_pages,
)
from pipelines.invoicing.read.read_host import ReadHost, RunPlan
from pipelines.invoicing.read.rows import normalized, record_digest, to_row
from pipelines.invoicing.read.windows import (
    MAX_SLICES,
    MIN_SPLIT_RANGE,
    SPLIT_PARTS,
    Slice,
    overlap_start,
    plan_slices,
    split_range,
)
from pipelines.invoicing.record_ids import record_path
from pipelines.invoicing.settings import Endpoint

log = logging.getLogger(__name__)
# id -> (last_update, _deleted_at) in the warehouse; (None, None) for an id other tables reference but
# this one never loaded (a customer deleted before it could be listed: warehouse.load_indexes)
Index = dict[str, tuple[str | None, str | None]]
# how a server shows deleted customers in its lists, once learnt: the windows then see every deletion
DELETIONS_LISTED = ("listed", "flagged")
IDLE_WAIT_S = 0.02  # how long the dlt extract waits on one resource with no page ready


def _has_fraction(stamp: object) -> bool:
    """Whether a served `lastUpdate` carries a fraction of a second (api-facts: second precision)."""
    return isinstance(stamp, str) and "." in stamp.partition("T")[2]


class ResourceRead:
    """The read of one endpoint in one run."""

    def __init__(self, feed: ReadHost, endpoint: Endpoint, state: dict, index: Index | None,
                 digests: dict[str, str | None] | None = None) -> None:
        self.feed = feed
        self.endpoint = endpoint
        self.name = endpoint.name
        self.queue: queue.Queue = queue.Queue()
        plan = self.plan
        scratch = plan.from_scratch or plan.reconcile
        self.whole_scan = endpoint.mode == "full" or (endpoint.mode == "window" and plan.reconcile)
        self.index: Index = index or {}
        self.digests = digests  # id -> `_digest` in the warehouse; None: not loaded (lastUpdate alone decides)
        # ids read by the last run with a recent lastUpdate (overlap_seen), kept even for a reconcile
        self.prev_seen: dict[str, str] = {} if plan.from_scratch else dict(state.get("overlap_seen") or {})
        self.prev_overlap: dict[str, str] = {} if scratch else self.prev_seen
        self.cursor: str | None = None if plan.from_scratch else state.get("cursor")
        # single objects: the digest of the version loaded, so an unchanged one is not loaded again (and
        # a run where nothing changed loads no row at all)
        self.prev_digest: str | None = None if scratch else state.get("digest")
        self.digest = self.prev_digest
        self.slices: dict[int, Slice] = {}
        if endpoint.mode == "window":
            planned = plan_slices(state, plan.until, from_scratch=scratch)
            self.slices = dict(enumerate(planned))
        self.overlap_from = format_timestamp(overlap_start(plan.until))
        # producer side
        self._lock = threading.Lock()
        self._active = 0
        self._next_slice = len(self.slices)
        self._cancel_slices = False
        self._abandoned = False  # the read failed alone (`failure`): its producers stop, the run goes on
        self._fell_back = False
        self._failed = False
        self._refused = False
        self._deletions_listed = False  # a listed record of this run carried `deleted: true`
        self.scanned: set[str] = set()
        self.tombstones: list[str] = []
        # consumer side
        self.new_overlap: dict[str, str] = {}
        self.yielded: dict[str, str | None] = {}
        self.completed = False
        # the error that ended this read alone (Feed.fails_alone): nothing more is taken, its cursor stays
        self.failure: BaseException | None = None
        self.pages = self.records_read = self.rows = 0
        self.newest: datetime | None = None  # the largest lastUpdate read (clock skew, feed.skew_note)
        self._sub_second_noted = False

    @property
    def plan(self) -> RunPlan:
        """The run's plan: the host prepares it (`Feed.prepare`) before it creates any read."""
        plan = self.feed.plan
        assert plan is not None, "a read is created only after its host prepared the run"
        return plan

    # ---- producers -------------------------------------------------------------------------------------
    def start(self) -> None:
        """Starts the producer threads."""
        with self._lock:
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
                for slice_id, part in list(self.slices.items()):
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
        pages = skip_pages(self.feed.client.get, path, page_sizes=self.feed.page_sizes, tag=self.name,
                           cancelled=self._given_up,
                           ordering=self.feed.capabilities.of(path).ordering != "refused",
                           note=self._note, learn=self._learn)
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
        pages = keyset_pages(self.feed.client.get, self.endpoint.path, since, until,
                             page_sizes=self.feed.page_sizes, tag=self.name, cancelled=self._stopped,
                             ties_stable=self.feed.capabilities.of(self.endpoint.path).stable_ties,
                             note=self._note, learn=self._learn)
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
            if self._fell_back:
                return
            self._fell_back = self._cancel_slices = True
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
            self.feed.fetch_events([r["id"] for r in page.records if not self.unchanged(r)])
        self.queue.put(("page", slice_id, page, split))

    def _finish(self) -> None:
        """After a whole-list scan: ids the warehouse holds but the scan did not see are checked one by one."""
        try:
            if (self.whole_scan or self._fell_back) and not self._refused:
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
        pages = skip_pages(self.feed.client.get, self.endpoint.path, page_sizes=self.feed.page_sizes,
                           tag=self.name, cancelled=self._given_up)
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

    # ---- consumer ----------------------------------------------------------------------------------------
    def unchanged(self, record: dict) -> bool:
        """True when the warehouse already holds this exact version (skipped, not reloaded)."""
        if self.endpoint.mode == "single":
            return self.prev_digest is not None and record_digest(record) == self.prev_digest
        last_update = normalized(record.get("lastUpdate"))
        if self.whole_scan or self._fell_back:
            # the deletion flag, not the timestamp: an observation time (rows.deleted_at_of) is no change
            # A version read while its second was not over (the last run saw it with this recent lastUpdate)
            # may have been followed by another change in the same second, with the same lastUpdate
            # (whole seconds): read unbounded, a whole scan cannot tell, so it reloads such a record.
            # Windowed reads need not: their bound lags the server's time by WINDOW_LAG_S.
            stored = self.index.get(record["id"])
            return (stored is not None and stored[0] == last_update
                    and (stored[1] is not None) == bool(record.get("deleted"))
                    and self.prev_seen.get(record["id"]) != last_update
                    and self.same_content(record))
        return last_update is not None and self.prev_overlap.get(record["id"]) == last_update

    def same_content(self, record: dict) -> bool:
        """Whether the warehouse's row holds this record's content, by digest: a change need not move
        `lastUpdate` (a replaced version turns CANCELED with its stamp unchanged), so a whole scan compares
        what it reads. Without loaded digests, the stamp alone decides, as before."""
        if self.digests is None:
            return True
        return self.digests.get(record["id"]) == record_digest(record)

    def take(self, max_pages: float, deadline: float) -> Iterator[list[dict] | None]:
        """Rows of the next pages, until `max_pages`, the deadline, the end of the read, or a failure.

        Yields None when no page is waiting: dlt's round robin then moves on to the other resources
        instead of waiting here while their pages pile up (and would all be loaded after the last request).
        """
        taken = 0
        while not self.completed and self.failure is None and taken < max_pages and not self.feed.stopping:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                item = self.queue.get(timeout=min(remaining, IDLE_WAIT_S))
            except queue.Empty:
                yield None
                continue
            if item[0] == "error":
                if self.feed.fails_alone(item[1]):
                    self._give_up(item[1])
                else:
                    self.feed.fail(item[1])
                return
            if item[0] == "fallback":
                self.whole_scan = True
                continue
            if item[0] == "done":
                self._complete()
                return
            rows = self._consume(*item[1:])
            taken += 1
            if rows:
                yield rows

    def _consume(self, slice_id: int | None, page: Page, split: dict | None) -> list[dict]:
        if split:
            for child_id, (child_since, child_until) in split.items():
                self.slices[child_id] = Slice(child_since, child_until)
        if slice_id is not None and slice_id in self.slices:
            part = self.slices[slice_id]
            if page.position is not None and (part.since is None or page.position > part.since):
                part.since = page.position
            part.done = part.done or page.done
        rows = []
        for record in page.records:
            self.records_read += 1
            # every listed record has an id (paging keys on it); only a malformed single object (GET /me)
            # may lack one: "" then matches no warehouse id, as None did
            record_id: str = record.get("id", "")
            last_update = normalized(record.get("lastUpdate"))
            if not self._sub_second_noted and _has_fraction(record.get("lastUpdate")):
                self._sub_second_noted = True
                # N13, cost: stamps are compared by whole seconds; a window restarting inside a second sees
                # earlier records of it as outside the window, and the list is read in full instead
                self._note(f"sub-second lastUpdate served ({record.get('lastUpdate')}); compared by whole "
                           "seconds, windows may be read in full")
            if last_update is not None:
                moment = parse_timestamp(last_update)
                self.newest = moment if self.newest is None else max(self.newest, moment)
            if self.endpoint.mode != "single" and last_update is not None and last_update >= self.overlap_from:
                self.new_overlap[record_id] = last_update
            if self.endpoint.mode == "single":
                self.digest = record_digest(record)  # committed with this page's rows (state below)
            if self.unchanged(record):
                continue
            previous = self.yielded.get(record_id, "")
            if record_id in self.yielded and (last_update is None or previous is None or previous >= last_update):
                continue
            self.yielded[record_id] = last_update
            known_deleted_at = (self.index.get(record_id) or (None, None))[1]
            rows.append(to_row(self.endpoint, record, observed=self.plan.run_time,
                               known_deleted_at=known_deleted_at))
        self.pages += 1
        self.rows += len(rows)
        return rows

    def _give_up(self, error: BaseException) -> None:
        """Ends this read alone: its producers stop, nothing more is taken, and `state` keeps the committed
        cursor (with the slices' progress of the pages already taken), so the next run reads the rest."""
        self.failure = error
        self._abandoned = True
        log.warning("%s: read failed, the other lists go on: %s", self.name, error)

    def _complete(self) -> None:
        self.completed = True
        if self.endpoint.mode == "window" and not self.whole_scan and not self._fell_back:
            known = self.feed.capabilities.of(self.endpoint.path)
            if known.window == "unknown" or known.ordering == "unknown":
                self._learn(window="honoured", ordering="honoured")
        if self.endpoint.mode == "window":
            self.cursor = normalized(self.plan.until)
            self.slices = {}

    def state(self) -> dict:
        """What dlt stores for this resource with the rows taken so far."""
        if self.endpoint.mode == "single":
            return {"digest": self.digest} if self.digest else {}
        if self.endpoint.mode != "window":  # read whole every run: only what the next one must not skip
            return {"overlap_seen": self.new_overlap} if self.completed else {}
        if self.completed:
            return {"cursor": self.cursor, "window": None, "overlap_seen": self.new_overlap}
        window = {"until": normalized(self.plan.until), "slices": [s.to_state() for s in self.slices.values()]}
        return {"cursor": self.cursor, "window": window, "overlap_seen": self.prev_overlap}
