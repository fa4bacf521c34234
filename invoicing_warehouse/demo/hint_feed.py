"""Hints straight from an in-process sandbox's event listener (`portal.listeners`), for the demo, tests and
benchmarks when no receiver runs: each event the sandbox emits becomes the hint the receiver would spool
(`hint_for_event`), appended to the spool under a delivery id of its own.

This stands in for the webhook path (sandbox delivery -> HTTP -> receiver -> spool); the spool and the
applying run after it are the real ones. `drop` loses a seeded share of the events, as lost deliveries
would; swapping this feed for the sandbox's delivery faults through the real receiver changes nothing
downstream. `writes` keeps, per hinted record, the wall time of its latest API write (the listener runs
inside the writing request), so callers can measure write-to-mart latency; with `record_only` it does only that,
while the hints come through the sandbox's deliveries and the receiver.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pipelines.invoicing.webhooks.hint_events import UnknownEvent, hint_for_event
from pipelines.invoicing.webhooks.hint_spool import HintSpool
from pipelines.invoicing.webhooks.spool_stores import PostgresSpool

STOP_WAIT_S = 10.0


@dataclass(frozen=True)
class Write:
    """One API write seen by the listener: its record, event, wall time and the record's `lastUpdate` after
    it (None for a deletion's payload, which carries the id only)."""

    resource: str
    record_id: str
    event: str
    at: float
    last_update: str | None = None


class ListenerFeed:
    """Feeds a spool from `portal.listeners`; `start()` registers, `stop()` unregisters and drains."""

    def __init__(self, portal, spool_path: str | Path | PostgresSpool, portal_id: str = "default", *,
                 drop: float = 0.0, seed: int = 0, record_only: bool = False) -> None:
        self.portal = portal
        self.spool_path = spool_path if isinstance(spool_path, PostgresSpool) else Path(spool_path)
        self.portal_id = portal_id
        self.drop = drop
        self.record_only = record_only  # only `writes` (the hints arrive some other way: the receiver)
        self._rng = random.Random(f"hint-feed-{seed}")
        self._queue: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._count = 0
        self.writes: list[Write] = []
        self.spooled = 0
        self.dropped = 0

    def start(self) -> ListenerFeed:
        """Registers the listener and starts the thread that owns the spool's connection."""
        self._thread = threading.Thread(target=self._run, name="hint-feed", daemon=True)
        self._thread.start()
        self.portal.listeners.append(self.on_event)
        return self

    def stop(self) -> None:
        """Unregisters the listener; every event already heard is spooled before this returns."""
        if self.on_event in self.portal.listeners:
            self.portal.listeners.remove(self.on_event)
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(STOP_WAIT_S)
            self._thread = None

    def on_event(self, event: str, payload: dict) -> None:
        """The sandbox listener (called in the writer's thread): queues the hint, never waits on the spool."""
        try:
            hint = hint_for_event(self.portal_id, event, payload)
        except UnknownEvent:
            return  # an event the product does not subscribe to
        record = payload.get("supplierDocument") if event == "supplier-document.status-change" else payload
        last_update = record.get("lastUpdate") if isinstance(record, dict) else None
        self.writes.append(Write(hint.resource, hint.record_id, event, time.time(), last_update))
        if not self.record_only:
            self._queue.put(hint)

    def _run(self) -> None:
        with HintSpool(self.spool_path) as spool:
            while True:
                hint = self._queue.get()
                if hint is None:
                    return
                self._count += 1
                if self.drop and self._rng.random() < self.drop:
                    self.dropped += 1
                    continue
                spool.append(f"listener-{self._count}", hint)
                self.spooled += 1
