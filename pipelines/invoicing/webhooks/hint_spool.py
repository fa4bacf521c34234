"""The doorbell's spool: webhook hints waiting to be applied, in SQLite (WAL mode) beside the warehouse.

A webhook delivery says *what* to look at, never what the data is (deliveries are unsigned and partial). The
receiver turns each delivery into a hint (portal, resource, id, event, received_at) and appends it here; the
applying run (Dagster sensor or `sync --follow`) reads the pending hints, fetches those records from the API,
commits them to the warehouse, and only then acknowledges the hints. A crash in between loses nothing: the
hints are still pending and are applied again (at least once; the warehouse merge makes it idempotent).

Why not the warehouse: the receiver must answer 200 within milliseconds after a durable append, and DuckDB
lets one process hold the warehouse file, so an append there would wait for a running sync. The spool is a
SQLite file in WAL mode beside the warehouse (the receiver appends while an applying run reads, across
processes of one host), or, for a DuckLake, a schema of its PostgreSQL catalog database (or of the database
`INVOICING_HINT_SPOOL` names): the receiver on one host, the applying runs on another (`spool_location_for`).
The logic below is written once for both (spool_stores.py: the two stores and what differs between them).

Bounded under a flood: one pending hint per (portal, resource, id). A second delivery for a pending record
updates that hint (newest event, a new sequence number) instead of adding a row, so a burst of 1,000 updates
of one invoice costs one fetch. The sequence number makes acknowledgement safe: a run acknowledges the hints
it read, and a hint that arrived again meanwhile keeps its newer sequence and stays pending.
Delivery ids are kept (bounded, the newest `KEPT_DELIVERY_IDS`) so that a replayed delivery spools nothing.

Bounded under a flood of *distinct* records too (the sender chooses the ids): a portal holds at most
`MAX_PENDING_PER_PORTAL` pending hints. Past that, a delivery for a record not yet pending collapses into one
"re-read this resource" hint per (portal, resource) (`record_id = WHOLE_RESOURCE`), which the applying run
answers with an incremental read of that resource (invoicing_warehouse/runs/hints.py) instead of a GET per record: the
spool stops growing and deliveries keep being answered 200, none lost.

A hint that fails alone (the service refuses its record) is retried a few times, then kept dead beside the
others (dead_letters.py); the portal's API id, once an applying run learnt it from the records the API served
(`portalId`), lets the receiver refuse a delivery whose envelope names another portal or none (`portal_mismatch`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from invoicing_warehouse.engine.environment.api_settings import HINT_SPOOL, HINT_SPOOL_PASSWORD
from invoicing_warehouse.engine.environment.engine_settings import DUCKLAKE_CATALOG
from invoicing_warehouse.engine.environment.reader import environment
from invoicing_warehouse.engine.target import WarehouseConfigError, WarehouseTarget, parse_catalog_dsn
from invoicing_warehouse.engine.warehouse_files import WarehouseFiles
from pipelines.invoicing.webhooks import dead_letters
from pipelines.invoicing.webhooks.dead_letters import DeadLetter
from pipelines.invoicing.webhooks.spool_stores import PostgresSpool, SpoolLocation, open_spool

KEPT_DELIVERY_IDS = 100_000
# A PostgreSQL database for the spool of any warehouse (`postgresql://user@host:port/dbname`, password apart):
# unset, a DuckLake's spool is in its catalog database and a DuckDB file's beside it.
SPOOL_ENV = HINT_SPOOL.name
SPOOL_PASSWORD_ENV = HINT_SPOOL_PASSWORD.name
MAX_PENDING_PER_PORTAL = 50_000  # one GET each: 50,000 hints are ~1.4 h of the 10 requests/s budget
WHOLE_RESOURCE = "*"  # the record id of a "re-read this resource" hint: never a record id (record_ids.py)
# What `receive` did with a delivery.
SPOOLED, REPLAYED, COLLAPSED, DEAD, PORTAL_MISMATCH = "spooled", "replayed", "collapsed", "dead", "portal_mismatch"

_SCHEMA = """
create table if not exists hints (
    portal_id text not null,
    resource text not null,
    record_id text not null,
    event text not null,
    received_at double precision not null,  -- unix seconds of the first delivery still pending for this record
    sequence bigint not null,   -- grows with every delivery; acknowledgement matches it
    attempts integer not null default 0,  -- failed attempts (dead_letters.py)
    last_error text,
    next_try_at double precision not null default 0,  -- a failed hint is not tried again before
    primary key (portal_id, resource, record_id)
);
create table if not exists deliveries (
    delivery_id text primary key,
    received_at double precision not null
);
create table if not exists counters (name text primary key, value bigint not null);
insert into counters values ('sequence', 0) on conflict do nothing;
create table if not exists portal_ids (
    portal_id text primary key,   -- the portal's name (the path's)
    api_portal_id text not null,  -- the service's `portalId`, as the API served it on the portal's records
    learnt_at double precision not null
);
""" + dead_letters.SCHEMA


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
    attempts: int = 0  # failed attempts so far (dead_letters.py)

    @property
    def whole_resource(self) -> bool:
        """Whether this hint asks to re-read its whole resource (a flood collapsed into it)."""
        return self.record_id == WHOLE_RESOURCE


def spool_path(warehouse_path: str | Path) -> Path:
    """`data/warehouse.duckdb` -> `data/warehouse.hints.sqlite` (beside the warehouse)."""
    return WarehouseFiles.beside(warehouse_path).hints_spool


def spool_location_for(target: WarehouseTarget, environ: Mapping[str, str] | None = None) -> SpoolLocation:
    """The one spool of a warehouse: the PostgreSQL database `INVOICING_HINT_SPOOL` names when set; else a
    DuckLake's catalog database (any host that reaches it serves hints); else the file beside the DuckDB file.
    The receiver (`webhooks serve`), the applying runs and the readers all call this, so they can never
    disagree on where hints wait. Raises WarehouseConfigError on a malformed `INVOICING_HINT_SPOOL`."""
    settings = environment(environ)
    named = settings.text(HINT_SPOOL)
    if named:
        try:
            return PostgresSpool(parse_catalog_dsn(named, settings.text(HINT_SPOOL_PASSWORD)))
        except WarehouseConfigError as error:
            raise WarehouseConfigError(str(error).replace(DUCKLAKE_CATALOG.name, SPOOL_ENV)) from None
    if target.is_lake:
        assert target.catalog is not None
        return PostgresSpool(target.catalog)
    assert target.path is not None, "a target is a file or a lake"
    return spool_path(target.path)


class HintSpool:
    """The spool, in a file or in PostgreSQL (`location`: a path or a `PostgresSpool`). One instance per thread
    (neither sqlite3's nor psycopg2's connections are shared between threads here)."""

    def __init__(self, location: str | SpoolLocation, *,
                 max_pending_per_portal: int = MAX_PENDING_PER_PORTAL) -> None:
        self.location: SpoolLocation = location if isinstance(location, PostgresSpool) else Path(location)
        self.max_pending_per_portal = max_pending_per_portal
        self._connection = open_spool(self.location, _SCHEMA, upgrade_file=dead_letters.upgrade)

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
        """Spools `hint` for delivery `delivery_id` (`receive`); False when that delivery id was already
        received (a replay: nothing spooled)."""
        return self.receive(delivery_id, hint, received_at) != REPLAYED

    def receive(self, delivery_id: str, hint: Hint, received_at: float | None = None, *,
                api_portal_id: str | None = None, must_name_portal: bool = False) -> str:
        """Spools `hint` for delivery `delivery_id` in one durable transaction; returns what it did:
        SPOOLED (a new or updated pending hint), COLLAPSED (the portal is at its bound: the resource's
        re-read hint took it), DEAD (the record's hint is dead: counted there), REPLAYED (that delivery id
        was received before: nothing), PORTAL_MISMATCH (`api_portal_id`, the envelope's `portalId`, differs from
        the one learnt for the hint's portal, or is missing with `must_name_portal`, the receiver's rule for a
        delivery from outside: nothing, not even the delivery id, is kept)."""
        now = time.time() if received_at is None else received_at
        connection = self._connection
        key = (hint.portal_id, hint.resource, hint.record_id)
        connection.begin_writing()
        try:
            # once the portal's id is learnt, a delivery from outside must name it (review 2, M1)
            learnt = self._learnt(hint.portal_id)
            if learnt is not None and (api_portal_id is not None or must_name_portal) and api_portal_id != learnt:
                connection.rollback()
                return PORTAL_MISMATCH
            seen = connection.execute(
                "insert into deliveries values (?, ?) on conflict do nothing", (delivery_id, now)
            ).rowcount == 0
            if seen:
                connection.rollback()
                return REPLAYED
            outcome = SPOOLED
            if dead_letters.count_delivery(connection, key):
                outcome = DEAD
            else:
                sequence = connection.execute(
                    "update counters set value = value + 1 where name = 'sequence' returning value"
                ).fetchone()[0]
                if not self._pending(key) and self._at_bound(hint.portal_id):
                    key, outcome = (hint.portal_id, hint.resource, WHOLE_RESOURCE), COLLAPSED
                connection.execute(
                    "insert into hints (portal_id, resource, record_id, event, received_at, sequence) "
                    "values (?, ?, ?, ?, ?, ?) on conflict (portal_id, resource, record_id) "
                    "do update set event = excluded.event, sequence = excluded.sequence",
                    (*key, hint.event, now, sequence),
                )
                if sequence % 1000 == 0:  # keep the replay guard bounded
                    connection.execute(
                        "delete from deliveries where delivery_id not in "
                        "(select delivery_id from deliveries order by received_at desc limit ?)",
                        (KEPT_DELIVERY_IDS,),
                    )
            connection.commit()
            return outcome
        except BaseException:
            connection.rollback()
            raise

    def _pending(self, key: tuple[str, str, str]) -> bool:
        return self._connection.execute("select 1 from hints where portal_id = ? and resource = ? and "
                                        "record_id = ?", key).fetchone() is not None

    def _at_bound(self, portal_id: str) -> bool:
        # counts at most the bound (an index range), so the check costs the same however full the spool is
        counted = self._connection.execute(
            "select count(*) from (select 1 from hints where portal_id = ? limit ?) as bounded",
            (portal_id, self.max_pending_per_portal)).fetchone()[0]
        return int(counted) >= self.max_pending_per_portal

    def _learnt(self, portal_id: str) -> str | None:
        row = self._connection.execute("select api_portal_id from portal_ids where portal_id = ?",
                                       (portal_id,)).fetchone()
        return None if row is None else str(row[0])

    def api_portal_id(self, portal_id: str) -> str | None:
        """The service's id of the portal named `portal_id`, as an applying run learnt it (None: not yet)."""
        return self._learnt(portal_id)

    def learn_portal(self, portal_id: str, api_portal_id: str) -> None:
        """Keeps the service's id of the portal named `portal_id`, read from records the API served: the
        receiver then refuses deliveries to this portal's path whose envelope names another portal."""
        self._connection.execute("insert into portal_ids values (?, ?, ?) on conflict (portal_id) do update set "
                                 "api_portal_id = excluded.api_portal_id, learnt_at = excluded.learnt_at",
                                 (portal_id, api_portal_id, time.time()))

    def pending(self, portal_id: str | None = None, limit: int = 10_000, now: float | None = None) -> list[Hint]:
        """The pending hints due now (a failed one waits its retry delay), the resources' re-read hints first,
        then oldest first (of one portal when `portal_id` is given)."""
        query = ("select portal_id, resource, record_id, event, received_at, sequence, attempts from hints "
                 "where next_try_at <= ?")
        parameters: tuple = (time.time() if now is None else now,)
        if portal_id is not None:
            query += " and portal_id = ?"
            parameters += (portal_id,)
        rows = self._connection.execute(query + " order by record_id = ? desc, sequence limit ?",
                                        (*parameters, WHOLE_RESOURCE, limit)).fetchall()
        return [Hint(*row) for row in rows]

    def acknowledge(self, hints: Iterable[Hint]) -> int:
        """Removes the hints a run has applied and committed; a hint delivered again since it was read
        (newer sequence) stays pending. Returns how many were removed."""
        rows = [(h.portal_id, h.resource, h.record_id, h.sequence) for h in hints]
        connection = self._connection
        connection.begin_writing()
        try:
            removed = 0
            for row in rows:
                removed += connection.execute(
                    "delete from hints where portal_id = ? and resource = ? and record_id = ? and sequence = ?",
                    row,
                ).rowcount
            connection.commit()
            return removed
        except BaseException:
            connection.rollback()
            raise

    def acknowledge_resource(self, portal_id: str, resource: str, through_sequence: int) -> int:
        """Removes every pending hint of `resource` (the re-read hint included) delivered up to
        `through_sequence` (`last_sequence()` read before the re-read began): that read saw their changes.
        A hint delivered since keeps its newer sequence and stays. Returns how many were removed."""
        connection = self._connection
        connection.begin_writing()
        try:
            removed = connection.execute("delete from hints where portal_id = ? and resource = ? and sequence <= ?",
                                         (portal_id, resource, through_sequence)).rowcount
            connection.commit()
            return removed
        except BaseException:
            connection.rollback()
            raise

    def last_sequence(self) -> int:
        """The sequence number of the newest delivery spooled so far."""
        return int(self._connection.execute("select value from counters where name = 'sequence'").fetchone()[0])

    def set_aside(self, failures: Iterable[tuple[Hint, str, bool]]) -> int:
        """Counts one failed attempt of each (hint, error, hopeless) (dead_letters.set_aside): retried later,
        or kept dead; returns how many died now."""
        connection = self._connection
        connection.begin_writing()
        try:
            died = sum(dead_letters.set_aside(connection, (h.portal_id, h.resource, h.record_id), error,
                                              hopeless=hopeless) for h, error, hopeless in failures)
            connection.commit()
            return died
        except BaseException:
            connection.rollback()
            raise

    def dead_letters(self, portal_id: str | None = None, limit: int = 100) -> list[DeadLetter]:
        """The hints kept dead, newest first (dead_letters.py)."""
        return dead_letters.listed(self._connection, portal_id, limit)

    def pending_count(self, portal_id: str | None = None) -> int:
        """How many hints wait (one per record; of one portal when `portal_id` is given)."""
        if portal_id is None:
            return int(self._connection.execute("select count(*) from hints").fetchone()[0])
        return int(self._connection.execute("select count(*) from hints where portal_id = ?",
                                            (portal_id,)).fetchone()[0])
