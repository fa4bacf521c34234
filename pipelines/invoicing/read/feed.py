"""The reads of one run: every endpoint in parallel under the client's one limiter, handed to dlt in chunks.

`run_sync` creates one Feed per run and starts every read at once (`Feed.start`), so the network stays
busy while dlt normalizes and loads a chunk. Used standalone (`pipeline.run(invoicing())`), the source
creates its own Feed and each resource starts its read through `Feed.start` when dlt first asks it for data.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from invoicing_warehouse.engine.names import DEFAULT_PORTAL
from pipelines.invoicing.capabilities import STATE_KEY, DeletedCustomers, ServerCapabilities
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.read.paging import PageSizes
from pipelines.invoicing.read.read_host import RunPlan
from pipelines.invoicing.read.reader import Index, ResourceRead
from pipelines.invoicing.read.rows import event_rows
from pipelines.invoicing.read.windows import window_end
from pipelines.invoicing.record_ids import child_path
from pipelines.invoicing.settings import ENDPOINTS, EVENTS, WINDOW_LAG_S

log = logging.getLogger(__name__)

EVENT_FETCHERS = 8  # concurrent event requests for one page of supplier documents
# Reading threads kept running while there is work to split: each thread has one request in flight at a
# time, so filling 10 slots a second with 400 ms answers takes about five, plus some ready and waiting.
MIN_BUSY_READERS = 8
# Without a `Date` header the windows end on the local clock, which may run ahead of the server's: 60 s
# of lag in all (the usual 5 s plus this) keeps them clear of seconds the service may still be writing.
NO_DATE_EXTRA_LAG = timedelta(seconds=55)
# Failures of one list that leave the others readable: the list's server side kept failing, answered
# something malformed, refused a request, or kept rate-limiting it. Bad credentials or scope, an unreachable
# base URL, a local misconfiguration or an unexpected error concern the whole run.
FAILS_ALONE = frozenset({"server", "malformed", "http", "rate_limited"})


class Feed:
    """Starts and holds the ResourceReads of a run; shares the client, page sizes and events.

    It is the `ReadHost` (read_host.py) of every read it starts."""

    def __init__(self, client: InvoicingClient, *, from_scratch: bool = False, reconcile: bool = False,
                 page_sizes: dict | None = None, indexes: dict[str, Index] | None = None,
                 with_events: bool = True, known_capabilities: ServerCapabilities | None = None,
                 portal_id: str = DEFAULT_PORTAL) -> None:
        self.client = client
        self.portal_id = portal_id  # stamped on every row (rows.with_portal)
        self.page_sizes = PageSizes(page_sizes)
        # what the doctor found, used where the sync's own state knows nothing yet
        self.known_capabilities = known_capabilities or ServerCapabilities()
        self.capabilities = self.known_capabilities
        self.indexes = indexes or {}
        self.digests: dict[str, dict[str, str | None]] = {}  # per table, id -> `_digest` (warehouse.load_digests)
        self.with_events = with_events
        self._from_scratch = from_scratch
        self._reconcile = reconcile
        self.plan: RunPlan | None = None
        self.preloaded: dict[str, Any] = {}
        self.reads: dict[str, ResourceRead] = {}
        self.stopping = False
        self.error: BaseException | None = None
        self.notes: list[str] = []
        self.degraded_notes: list[str] = []  # the notes saying something is unknown, not just slower
        # the notes about the account, not this run (said once: invoicing_warehouse/runs/sync.py)
        self.standing_notes: list[str] = []
        self.max_pages = math.inf
        self.deadline = math.inf
        self._lock = threading.Lock()
        self._committed_taken = False  # the committed capabilities are applied (Feed.start)
        self._events: dict[str, list] = {}
        self._events_lock = threading.Lock()
        self._notes_lock = threading.Lock()  # its own: notes are written while `_lock` is held (prepare)
        self._pool = ThreadPoolExecutor(EVENT_FETCHERS, thread_name_prefix="events")
        self.started_at = time.monotonic()

    def prepare(self) -> RunPlan:
        """Reads GET /me first: it proves the credentials and scope, and its `Date` freezes the windows."""
        with self._lock:
            if self.plan is None:
                user = self.client.get(ENDPOINTS["user"].path, tag="user")
                server_time = self.client.last_server_time
                if server_time is not None:
                    lead = self.client.auth.date_lead_s
                    until = window_end(server_time) - timedelta(seconds=math.ceil(lead))
                    if lead > 0:
                        self.note(f"run: Date runs {lead:.0f} s ahead of the token expiry's clock; windows end as much "
                                  "earlier")
                else:
                    server_time = datetime.now(UTC)
                    until = window_end(server_time) - NO_DATE_EXTRA_LAG
                    # N7, degraded: this machine's clock may run ahead of the service's by more than the
                    # 60 s lag plus the 30 s overlap, and then changes written after this read but stamped
                    # before the window's end are missed by the next run too (until a reconcile). A reconcile
                    # or a full refresh reads every list whole, so what it loads is complete: there the note
                    # only says why the next incremental run will be degraded again.
                    self.note("run: no Date header; windows frozen from the local clock minus 60 s (rows "
                              "changed while it runs may be missed if that clock is ahead of the service's)",
                              degraded=not (self._reconcile or self._from_scratch))
                self.preloaded["user"] = user
                self.plan = RunPlan(until, server_time, self._from_scratch, self._reconcile)
            return self.plan

    def read(self, name: str, state: dict) -> ResourceRead:
        """The read of `name`, started on first use with the resource's committed dlt state."""
        self.prepare()
        with self._lock:
            if name in self.reads:
                return self.reads[name]
            read = ResourceRead(self, ENDPOINTS[name], state or {}, self.indexes.get(name),
                                digests=self.digests.get(name))
            self.reads[name] = read
        # Started outside the lock: when every producer thread ends before `start` returns, the starter
        # finishes the read itself (GETs, then learning through this feed, which takes the lock).
        read.start()
        return read

    def start(self, committed: Mapping[str, Any], names: Iterable[str]) -> None:
        """Starts the reads of `names` not started yet from `committed`, the source's dlt state of earlier
        runs (`{"page_sizes": ..., "resources": {name: state}}`): the one way that state enters a run."""
        self.page_sizes.remember(committed.get("page_sizes"))
        with self._lock:
            # Once per run: the standalone source starts each read when dlt first asks for it, after the
            # reads started earlier may have learnt something that a second reset would throw away.
            if not self._committed_taken:
                self.capabilities = ServerCapabilities.from_state(committed.get(STATE_KEY)).completed_by(
                    self.known_capabilities)
                self._committed_taken = True
        states = committed.get("resources", {})
        for name in names:
            if name in ENDPOINTS and name not in self.reads:
                self.read(name, states.get(name, {}))

    def begin_chunk(self, max_pages: float, seconds: float) -> None:
        """Each resource hands dlt at most `max_pages` pages, and stops taking after `seconds`."""
        self.max_pages = max_pages
        self.deadline = time.monotonic() + seconds

    def take(self, name: str) -> Iterator[list[dict] | None]:
        """Rows of `name` for the current chunk; None while no page is ready (see ResourceRead.take)."""
        read = self.reads[name]
        return read.take(self.max_pages, self.deadline)

    def wants_reader(self) -> bool:
        """Whether fewer than MIN_BUSY_READERS producer threads are running (a slice should split)."""
        running = sum(read.threads for read in list(self.reads.values()))
        return not self.stopping and running < MIN_BUSY_READERS

    @property
    def finished(self) -> bool:
        """Every started read was consumed to its end or failed alone (or the run is failing)."""
        return self.error is not None or all(r.completed or r.failure is not None for r in self.reads.values())

    def fails_alone(self, error: BaseException) -> bool:
        """Whether `error`, ending one read, leaves the run's other reads going (FAILS_ALONE kinds)."""
        return isinstance(error, InvoicingApiError) and error.kind in FAILS_ALONE

    def failed_reads(self) -> dict[str, BaseException]:
        """The reads that failed alone in this run, by resource name (their cursors did not advance)."""
        return {name: read.failure for name, read in self.reads.items() if read.failure is not None}

    def fail(self, error: BaseException) -> None:
        """Stops every read; the run raises `error` after committing what was consumed."""
        with self._lock:
            if self.error is None:
                self.error = error
        self.stopping = True

    def note(self, text: str, degraded: bool = False, standing: bool = False) -> None:
        """Records a remark (`<table>: ...`) for the run's report; `degraded`: something is unknown; `standing`:
        a condition of the account that every run would find again (a scope not granted), said once per change."""
        with self._notes_lock:
            if text not in self.notes:
                self.notes.append(text)
            if degraded and text not in self.degraded_notes:
                self.degraded_notes.append(text)
            if standing and text not in self.standing_notes:
                self.standing_notes.append(text)

    def learn_deleted_customers(self, mode: DeletedCustomers) -> None:
        """Records how the server shows deleted customers (kept in the source state with the page sizes)."""
        with self._lock:
            self.capabilities = replace(self.capabilities, deleted_customers=mode)

    def learn(self, path: str, **changes: object) -> None:
        """Records what the server did for the list at `path`; committed with the run's state."""
        with self._lock:
            self.capabilities = self.capabilities.with_list(path, **changes)

    def learnt(self) -> ServerCapabilities:
        """The capabilities to commit: this run's findings, the token lifetime, when they were observed."""
        with self._lock:
            found = self.capabilities
        lifetime = self.client.auth.lifetime_s
        observed = self.plan.run_time.isoformat() if self.plan else found.observed_at
        return ServerCapabilities(found.lists, found.deleted_customers,
                                  lifetime if lifetime is not None else found.token_lifetime_s, observed)

    def skew_note(self) -> None:
        """Notes how far the newest `lastUpdate` read runs ahead of the run's server time, when above the lag."""
        newest = max((read.newest for read in self.reads.values() if read.newest is not None), default=None)
        if newest is None or self.plan is None:
            return
        skew = (newest - self.plan.run_time).total_seconds()
        if skew > WINDOW_LAG_S:
            self.note(f"run: lastUpdate clock {skew:.0f} s ahead of Date (windows lag {WINDOW_LAG_S} s)")

    def fetch_events(self, document_ids: list[str]) -> None:
        """Fetches the status history of changed supplier documents, before their page is handed over."""
        if not self.with_events or not document_ids:
            return
        path = EVENTS.path

        def one(document_id: str) -> tuple[str, list[dict]]:
            try:
                events = self.client.get(child_path(path, document_id), tag=EVENTS.name)
            except InvoicingApiError as error:
                if error.status != 404:
                    raise
                # Listed a moment ago, gone now: the document itself is loaded from its page, and the
                # next run (or a reconcile) settles whether it still exists. Failing the run would lose
                # every other resource's progress for one vanished record.
                log.warning("GET %s: 404 for a supplier document listed a moment ago; no events read", path)
                self.note(f"{EVENTS.name}: supplier document {document_id} vanished after being listed (404)")
                return document_id, []
            if not isinstance(events, list):
                raise InvoicingApiError("malformed", f"GET {path}", 200, detail="'data' is not a list")
            rows, synthesised = event_rows(EVENTS, document_id, events)
            if synthesised:
                self.note(f"{EVENTS.name}: ids synthesised (field id not served)")
            return document_id, rows

        results = list(self._pool.map(one, document_ids))
        with self._events_lock:
            self._events.update(results)

    def pop_events(self, document_ids: list[str]) -> list[dict]:
        """The event rows fetched for these documents (each handed over once; rows.event_rows)."""
        with self._events_lock:
            return [event for i in document_ids for event in self._events.pop(i, [])]

    def tombstones(self) -> dict[str, list[str]]:
        """Ids found gone upstream by whole-list scans, per table."""
        return {name: list(r.tombstones) for name, r in self.reads.items() if r.tombstones and r.completed}

    def progress(self) -> dict[str, dict]:
        """Per resource: pages, records read, rows handed to dlt, requests, 429s, done."""
        counts = self.client.stats.snapshot()
        elapsed = max(time.monotonic() - self.started_at, 1e-6)
        report = {}
        for name in [*self.reads, *([EVENTS.name] if EVENTS.name in counts["requests"] else [])]:
            read = self.reads.get(name)
            requests = counts["requests"].get(name, 0)
            report[name] = {
                "pages": read.pages if read else 0,
                "records": read.records_read if read else 0,
                "rows": read.rows if read else 0,
                "requests": requests,
                "throttled": counts["throttled"].get(name, 0),
                "requests_per_s": requests / elapsed,
                "done": read.completed if read else self.finished,
            }
        return report

    def close(self) -> None:
        """Stops the producer threads (they end after their current request)."""
        self.stopping = True
        self._pool.shutdown(wait=False, cancel_futures=True)
