"""When does each API write become visible to readers? A thread polls the readers' copy (`connect_reader`)
and times every write a `ListenerFeed` saw: visible once the published raw row carries the write's
`lastUpdate` or later (a deletion: `_deleted_at` set). The applying run publishes only after rebuilding the
models downstream of what it loaded, so the marts in that same published copy include the change.

Caveat: `lastUpdate` has whole seconds; a second write of a record within the second of an applied one counts
as visible with it. The exactness check at the end of a benchmark (every row against the sandbox) catches a
change that never arrived.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from invoicing_warehouse.demo.hint_feed import ListenerFeed, Write
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.engine.readers import connect_reader
from invoicing_warehouse.engine.target import WarehouseTarget
from pipelines.invoicing.dates import parse_timestamp
from pipelines.invoicing.webhooks.hint_events import DELETION_EVENTS

POLL_S = 0.25


class VisibilityWatch:
    """Polls the readers' copy of `warehouse` for the writes `feed` records; `latencies` once visible."""

    def __init__(self, warehouse: str | Path, feed: ListenerFeed) -> None:
        self.target = WarehouseTarget.duckdb_file(warehouse)
        self.feed = feed
        self.latencies: list[float] = []
        self.seen: list[tuple[Write, float]] = []  # each visible write with its latency
        self.outstanding: list[Write] = []
        self.superseded = 0  # writes of a record deleted before any run could load it (never visible)
        self._deleted: set[tuple[str, str]] = set()
        self._seen = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="visibility-watch", daemon=True)

    def start(self) -> VisibilityWatch:
        """Starts polling."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops polling (bounded wait)."""
        self._stop.set()
        self._thread.join(10)

    def wait_all_visible(self, timeout_s: float) -> bool:
        """Waits (bounded) until every write seen so far is visible."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._seen == len(self.feed.writes) and not self.outstanding:
                return True
            time.sleep(POLL_S)
        return False

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            end = len(self.feed.writes)
            new = self.feed.writes[self._seen:end]
            self.outstanding += new
            self._deleted |= {(w.resource, w.record_id) for w in new if w.event in DELETION_EVENTS}
            self._seen = end
            if self.outstanding and default_snapshot_path(Path(str(self.target.path))).exists():
                self._check()

    def _check(self) -> None:
        now = time.time()
        versions: dict[tuple[str, str], tuple] = {}
        connection = connect_reader(self.target)
        try:
            for table in {w.resource for w in self.outstanding}:
                ids = sorted({w.record_id for w in self.outstanding if w.resource == table})
                marks = ", ".join(["?"] * len(ids))
                for record_id, last_update, deleted_at in connection.execute(
                        f"select id, last_update, _deleted_at from invoicing_raw.{table} where id in ({marks})",
                        ids).fetchall():
                    versions[(table, record_id)] = (last_update, deleted_at)
        finally:
            connection.close()
        waiting = []
        for write in self.outstanding:
            key = (write.resource, write.record_id)
            if _visible(write, versions.get(key)):
                self.latencies.append(now - write.at)
                self.seen.append((write, now - write.at))
            elif key not in versions and key in self._deleted:
                self.superseded += 1  # created and deleted between two runs: there is nothing to see
            else:
                waiting.append(write)
        self.outstanding = waiting


def _visible(write: Write, version: tuple | None) -> bool:
    if version is None:
        return False
    last_update, deleted_at = version
    if write.event in DELETION_EVENTS:
        return deleted_at is not None
    if write.last_update is None or last_update is None:
        return True  # a row with no version to compare: its presence is what can be seen
    return last_update >= parse_timestamp(write.last_update)
