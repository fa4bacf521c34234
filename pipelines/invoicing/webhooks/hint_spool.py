"""The doorbell's spool: webhook hints waiting to be applied, in SQLite (WAL mode) beside the warehouse.

A webhook delivery says *what* to look at, never what the data is (deliveries are unsigned and partial). The
receiver turns each delivery into a hint (portal, resource, id, event, received_at) and appends it here; the
applying run (Dagster sensor or `sync --follow`) reads the pending hints, fetches those records from the API,
commits them to the warehouse, and only then acknowledges the hints. A crash in between loses nothing: the
hints are still pending and are applied again (at least once; the warehouse merge makes it idempotent).

Why SQLite and not the warehouse: the receiver must answer 200 within milliseconds after a durable append,
and DuckDB lets one process hold the warehouse file, so an append there would wait for a running sync.
SQLite in WAL mode lets the receiver append while an applying run reads, across processes.

Bounded under a flood: one pending hint per (portal, resource, id). A second delivery for a pending record
updates that hint (newest event, a new sequence number) instead of adding a row, so a burst of 1,000 updates
of one invoice costs one fetch. The sequence number makes acknowledgement safe: a run acknowledges the hints
it read, and a hint that arrived again meanwhile keeps its newer sequence and stays pending.
Delivery ids are kept (bounded, the newest `KEPT_DELIVERY_IDS`) so that a replayed delivery spools nothing.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from warehouse_engine.private_files import make_private, private_dir, private_umask

SPOOL_SUFFIX = ".hints.sqlite"
KEPT_DELIVERY_IDS = 100_000
BUSY_TIMEOUT_S = 10.0
WAL_SWITCH_RETRY_S = 0.01

_SCHEMA = """
create table if not exists hints (
    portal_id text not null,
    resource text not null,
    record_id text not null,
    event text not null,
    received_at real not null,   -- unix seconds of the first delivery still pending for this record
    sequence integer not null,   -- grows with every delivery; acknowledgement matches it
    primary key (portal_id, resource, record_id)
);
create table if not exists deliveries (
    delivery_id text primary key,
    received_at real not null
);
create table if not exists counters (name text primary key, value integer not null);
insert or ignore into counters values ('sequence', 0);
"""


def _enter_wal_mode(connection: sqlite3.Connection) -> None:
    """Switches a (new) spool file to WAL, waiting up to `BUSY_TIMEOUT_S` for another process doing the same.

    Why a loop of our own: SQLite does not call the busy handler for the exclusive lock that the switch to WAL
    takes, so when the receiver and an applying run open a new spool at the same moment one of them gets
    "database is locked" at once (seen in 80 of 600 concurrent opens here). Once the file is in WAL mode the
    pragma is a no-op and this returns at the first try."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            connection.execute("pragma journal_mode=wal")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(WAL_SWITCH_RETRY_S)


@dataclass(frozen=True)
class Hint:
    """What one delivery asks to re-read: `resource` is the raw table's resource name (`documents`,
    `customers`, `items`, `suppliers`, `supplier_documents`), `record_id` the API id."""

    portal_id: str
    resource: str
    record_id: str
    event: str
    received_at: float = 0.0
    sequence: int = 0


def spool_path(warehouse_path: str | Path) -> Path:
    """`data/warehouse.duckdb` -> `data/warehouse.hints.sqlite` (beside the warehouse)."""
    warehouse_path = Path(warehouse_path)
    return warehouse_path.with_name(warehouse_path.stem + SPOOL_SUFFIX)


class HintSpool:
    """The spool file. One instance per thread (sqlite3 connections are not shared between threads)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        private_umask()  # the spool, its WAL and shared memory: the owner's only (warehouse_engine/private_files.py)
        if not self.path.parent.exists():
            private_dir(self.path.parent)
        make_private(self.path)  # a spool an older version left 0644
        self._connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        _enter_wal_mode(self._connection)
        # FULL: an append is on disk before the receiver answers 200 (the sender will not retry after it)
        self._connection.execute("pragma synchronous=full")
        self._connection.executescript(_SCHEMA)

    @classmethod
    def for_warehouse(cls, warehouse_path: str | Path) -> HintSpool:
        """The spool beside `warehouse_path` (`spool_path`)."""
        return cls(spool_path(warehouse_path))

    def close(self) -> None:
        """Closes the connection."""
        self._connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def append(self, delivery_id: str, hint: Hint, received_at: float | None = None) -> bool:
        """Spools `hint` for delivery `delivery_id` in one durable transaction.

        Returns False (and spools nothing) when that delivery id was already received: a replay."""
        now = time.time() if received_at is None else received_at
        connection = self._connection
        connection.execute("begin immediate")
        try:
            seen = connection.execute(
                "insert or ignore into deliveries values (?, ?)", (delivery_id, now)
            ).rowcount == 0
            if seen:
                connection.execute("rollback")
                return False
            sequence = connection.execute(
                "update counters set value = value + 1 where name = 'sequence' returning value"
            ).fetchone()[0]
            connection.execute(
                "insert into hints values (?, ?, ?, ?, ?, ?) on conflict (portal_id, resource, record_id) "
                "do update set event = excluded.event, sequence = excluded.sequence",
                (hint.portal_id, hint.resource, hint.record_id, hint.event, now, sequence),
            )
            if sequence % 1000 == 0:  # keep the replay guard bounded
                connection.execute(
                    "delete from deliveries where delivery_id not in "
                    "(select delivery_id from deliveries order by received_at desc limit ?)",
                    (KEPT_DELIVERY_IDS,),
                )
            connection.execute("commit")
            return True
        except BaseException:
            connection.execute("rollback")
            raise

    def pending(self, portal_id: str | None = None, limit: int = 10_000) -> list[Hint]:
        """The pending hints, oldest first (of one portal when `portal_id` is given)."""
        query = "select portal_id, resource, record_id, event, received_at, sequence from hints"
        parameters: tuple = ()
        if portal_id is not None:
            query += " where portal_id = ?"
            parameters = (portal_id,)
        rows = self._connection.execute(query + " order by sequence limit ?", (*parameters, limit)).fetchall()
        return [Hint(*row) for row in rows]

    def acknowledge(self, hints: Iterable[Hint]) -> int:
        """Removes the hints a run has applied and committed; a hint delivered again since it was read
        (newer sequence) stays pending. Returns how many were removed."""
        rows = [(h.portal_id, h.resource, h.record_id, h.sequence) for h in hints]
        connection = self._connection
        connection.execute("begin immediate")
        try:
            removed = 0
            for row in rows:
                removed += connection.execute(
                    "delete from hints where portal_id = ? and resource = ? and record_id = ? and sequence = ?",
                    row,
                ).rowcount
            connection.execute("commit")
            return removed
        except BaseException:
            connection.execute("rollback")
            raise

    def pending_count(self, portal_id: str | None = None) -> int:
        """How many hints wait (one per record; of one portal when `portal_id` is given)."""
        if portal_id is None:
            return int(self._connection.execute("select count(*) from hints").fetchone()[0])
        return int(self._connection.execute("select count(*) from hints where portal_id = ?",
                                            (portal_id,)).fetchone()[0])
