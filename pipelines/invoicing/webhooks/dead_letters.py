"""Hints set aside: a hint the applying run could not apply alone waits here, never blocking its batch.

A hint fails alone when the API refuses *that record* (a 4xx other than 401, 403, 404, 408, 429: the id is
not one the service serves) or answers with another record than the one asked for, or when its id is not a
record id at all (record_ids.py; spooled before the receiver checked ids). Failures that are not the
record's (credentials, rate limit, the server down) still fail the whole run and leave every hint pending.

A failed hint stays in the spool's `hints` table with its attempt count, last error and the time before which
it is not tried again (`RETRY_DELAY_S`, doubled per attempt); at `MAX_ATTEMPTS` (at once for an id that is not
an id) it moves to the `dead_letters` table and is kept dead: later deliveries for the same record only count
on its dead letter (`deliveries_since`) and spool nothing, so a forged id costs at most `MAX_ATTEMPTS` fetches.
An operator who fixed the cause deletes its row (`delete from dead_letters where record_id = ...`); the
scheduled sync reads the record anyway. The table keeps the newest `KEPT_DEAD_LETTERS` rows.

Readers (the dashboard's Freshness page, the Dagster check) use `read_dead_letters`, which opens the spool
(a file read-only, or its PostgreSQL schema) and never creates it. The statements here run on either store
(spool_stores.py).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from pipelines.invoicing.webhooks.spool_stores import SpoolConnection, SpoolLocation, open_for_reading

MAX_ATTEMPTS = 3
RETRY_DELAY_S = 60.0  # then 120 s: a record the service refuses now is rarely served a minute later
KEPT_DEAD_LETTERS = 10_000
MAX_ERROR_CHARS = 300

SCHEMA = """
create table if not exists dead_letters (
    portal_id text not null,
    resource text not null,
    record_id text not null,
    event text not null,
    received_at double precision not null,  -- the first delivery of the hint that died
    attempts integer not null,
    last_error text not null,
    dead_at double precision not null,
    deliveries_since integer not null default 0,  -- later deliveries of the record, not spooled
    primary key (portal_id, resource, record_id)
);
"""
# Columns the hints table gained with per-hint failures (a spool made before gets them on open).
HINT_COLUMNS = {"attempts": "integer not null default 0", "last_error": "text",
                "next_try_at": "real not null default 0"}


@dataclass(frozen=True)
class DeadLetter:
    """One hint kept dead: the record it named, how often it was tried, the last error and when."""

    portal_id: str
    resource: str
    record_id: str
    event: str
    received_at: float
    attempts: int
    last_error: str
    dead_at: float
    deliveries_since: int


def upgrade(connection: sqlite3.Connection) -> None:
    """Adds the dead-letter table and the hints' failure columns to a spool file made before them (idempotent;
    a PostgreSQL spool was never made without them)."""
    connection.executescript(SCHEMA)
    if set(HINT_COLUMNS) <= _hint_columns(connection):
        return
    connection.execute("begin immediate")  # another process may upgrade the same old spool at this moment
    try:
        for name, declaration in HINT_COLUMNS.items():
            if name not in _hint_columns(connection):
                connection.execute(f"alter table hints add column {name} {declaration}")
        connection.execute("commit")
    except BaseException:
        connection.execute("rollback")
        raise


def _hint_columns(connection: sqlite3.Connection) -> set[str]:
    return {row[1] for row in connection.execute("pragma table_info(hints)")}


def set_aside(connection: SpoolConnection, key: tuple[str, str, str], error: str, *, hopeless: bool,
              now: float | None = None) -> bool:
    """Counts a failed attempt of the pending hint `key` (portal, resource, record id) inside the caller's
    transaction: it waits `RETRY_DELAY_S * 2**(attempts-1)`, or moves to the dead letters at MAX_ATTEMPTS
    (at once when `hopeless`). Returns True when it died; False also when it is no longer pending."""
    now = time.time() if now is None else now
    row = connection.execute("select event, received_at, attempts from hints where portal_id = ? and resource = ? "
                             "and record_id = ?", key).fetchone()
    if row is None:
        return False
    event, received_at, attempts = row[0], row[1], int(row[2]) + 1
    error = error[:MAX_ERROR_CHARS]
    if not hopeless and attempts < MAX_ATTEMPTS:
        connection.execute("update hints set attempts = ?, last_error = ?, next_try_at = ? where portal_id = ? "
                           "and resource = ? and record_id = ?",
                           (attempts, error, now + RETRY_DELAY_S * 2 ** (attempts - 1), *key))
        return False
    connection.execute("delete from hints where portal_id = ? and resource = ? and record_id = ?", key)
    connection.execute("insert into dead_letters values (?, ?, ?, ?, ?, ?, ?, ?, 0) "
                       "on conflict (portal_id, resource, record_id) do update set event = excluded.event, "
                       "attempts = dead_letters.attempts + excluded.attempts, last_error = excluded.last_error, "
                       "dead_at = excluded.dead_at", (*key, event, received_at, attempts, error, now))
    connection.execute("delete from dead_letters where (portal_id, resource, record_id) not in (select portal_id, "
                       "resource, record_id from dead_letters order by dead_at desc limit ?)", (KEPT_DEAD_LETTERS,))
    return True


def count_delivery(connection: SpoolConnection, key: tuple[str, str, str]) -> bool:
    """Inside the caller's transaction: when the record of `key` is dead, counts one more delivery of it
    and returns True (the delivery spools nothing); False when it is not dead."""
    return connection.execute("update dead_letters set deliveries_since = deliveries_since + 1 where "
                              "portal_id = ? and resource = ? and record_id = ?", key).rowcount > 0


def listed(connection: SpoolConnection, portal_id: str | None = None, limit: int = 100) -> list[DeadLetter]:
    """The dead letters, newest first (of one portal when `portal_id` is given)."""
    query = "select * from dead_letters"
    parameters: tuple = ()
    if portal_id is not None:
        query += " where portal_id = ?"
        parameters = (portal_id,)
    rows = connection.execute(query + " order by dead_at desc limit ?", (*parameters, limit)).fetchall()
    return [DeadLetter(*row) for row in rows]


def read_dead_letters(spool: SpoolLocation, limit: int = 100,
                      portals: frozenset[str] | None = None) -> tuple[int, list[DeadLetter]]:
    """(how many, the newest `limit`) dead letters of the spool at `spool` (of `portals` only, when given: a
    dashboard limited to some portals), opened for reading: (0, []) when there is no spool yet or it has no
    dead-letter table. Raises what the store raises on an unreadable spool (sqlite3.Error, psycopg2.Error)."""
    connection = open_for_reading(spool)
    if connection is None:
        return 0, []
    try:
        if "dead_letters" not in connection.tables():
            return 0, []
        if portals is None:
            total = int(connection.execute("select count(*) from dead_letters").fetchone()[0])
            return total, listed(connection, limit=limit)
        letters = [letter for portal in sorted(portals) for letter in listed(connection, portal, limit)]
        total = sum(int(connection.execute("select count(*) from dead_letters where portal_id = ?",
                                           (portal,)).fetchone()[0]) for portal in portals)
        return total, sorted(letters, key=lambda letter: letter.dead_at, reverse=True)[:limit]
    finally:
        connection.close()


def counts_by_portal(spool: SpoolLocation) -> tuple[dict[str, int], dict[str, int]]:
    """(pending hints, dead letters) per portal in the spool at `spool`, opened for reading (the status never
    creates a spool): ({}, {}) when there is none. Raises what the store raises on an unreadable spool."""
    connection = open_for_reading(spool)
    if connection is None:
        return {}, {}
    try:
        tables = connection.tables()
        counts = []
        for table in ("hints", "dead_letters"):
            rows = (connection.execute(f"select portal_id, count(*) from {table} group by 1").fetchall()
                    if table in tables else [])
            counts.append({str(portal): int(count) for portal, count in rows})
        return counts[0], counts[1]
    finally:
        connection.close()
