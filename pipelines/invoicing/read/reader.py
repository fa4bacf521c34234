"""One endpoint's read during a run: the consumer side, and the read as the run sees it.

Producers (read_producer.py: one thread per slice of the window, or one for a whole-list scan) put pages on
a queue in the order each slice reads them. The consumer (the dlt resource, in dlt's extract thread) takes
pages, keeps the slice progress that goes into dlt state with the same load, skips records already loaded,
and maps records to rows. Progress therefore only ever describes pages whose rows are in the same load
package.
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Iterator
from datetime import datetime

from pipelines.invoicing.dates import format_timestamp, parse_timestamp
from pipelines.invoicing.read.paging import Page
from pipelines.invoicing.read.read_host import Index, ReadHost, RunPlan
from pipelines.invoicing.read.read_producer import PageProducer
from pipelines.invoicing.read.rows import normalized, record_digest, to_row
from pipelines.invoicing.read.windows import Slice, overlap_start, plan_slices
from pipelines.invoicing.settings import Endpoint

__all__ = ["Index", "ResourceRead"]

log = logging.getLogger(__name__)
IDLE_WAIT_S = 0.02  # how long the dlt extract waits on one resource with no page ready


def _has_fraction(stamp: object) -> bool:
    """Whether a served `lastUpdate` carries a fraction of a second (api-facts: second precision)."""
    return isinstance(stamp, str) and "." in stamp.partition("T")[2]


class ResourceRead:
    """The read of one endpoint in one run: its producer (`producer`), and the consumer of its pages."""

    def __init__(self, feed: ReadHost, endpoint: Endpoint, state: dict, index: Index | None,
                 digests: dict[str, str | None] | None = None) -> None:
        self.feed = feed
        self.endpoint = endpoint
        self.name = endpoint.name
        plan = self.plan
        scratch = plan.from_scratch or plan.reconcile
        self.index: Index = index or {}
        self.producer = PageProducer(feed, endpoint, self.index, self.unchanged)
        self.whole_scan = self.producer.whole_scan
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

    def start(self) -> None:
        """Starts the producer threads."""
        self.producer.start(self.slices)

    @property
    def threads(self) -> int:
        """Producer threads of this read still running."""
        return self.producer.threads

    @property
    def tombstones(self) -> list[str]:
        """Ids the warehouse holds that the API answers 404 for (checked by id after a whole-list read)."""
        return self.producer.tombstones

    def _note(self, text: str, degraded: bool = False) -> None:
        self.feed.note(f"{self.name}: {text}", degraded=degraded)

    def unchanged(self, record: dict) -> bool:
        """True when the warehouse already holds this exact version (skipped, not reloaded)."""
        if self.endpoint.mode == "single":
            return self.prev_digest is not None and record_digest(record) == self.prev_digest
        last_update = normalized(record.get("lastUpdate"))
        if self.whole_scan or self.producer.fell_back:
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
                item = self.producer.queue.get(timeout=min(remaining, IDLE_WAIT_S))
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
        self.producer.abandon()
        log.warning("%s: read failed, the other lists go on: %s", self.name, error)

    def _complete(self) -> None:
        self.completed = True
        if self.endpoint.mode == "window" and not self.whole_scan and not self.producer.fell_back:
            known = self.feed.capabilities.of(self.endpoint.path)
            if known.window == "unknown" or known.ordering == "unknown":
                self.feed.learn(self.endpoint.path, window="honoured", ordering="honoured")
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
