"""Whole runs on a DuckLake with several writers: loads share the lake, a build and its publication have it alone.

A lake takes one writer per portal at once, and each load commits table by table (dlt commits each chunk on its
own). A run that built the marts and published while another portal was half way through its load would read
that half load and publish it to readers (security review M9). So the lake carries one PostgreSQL advisory lock
in its catalog database, used as a readers-writer lock:

- a load (a portal's sync, a hints run's merge) holds it *shared*: loads of several portals still run at once;
- a model build with its checks and its publication (invoicing_warehouse/runs/gate.py), and the lake's maintenance, hold
  it *exclusive*: they start once no load is half way, and no load starts until they are done.

PostgreSQL queues a shared request behind a waiting exclusive one, so a stream of loads cannot starve a
publication. The lock is a transaction-level lock on a connection of its own: a process that dies releases it
with its connection. Every wait is bounded (`INVOICING_LAKE_LOCK_WAIT_S`, default LOCK_WAIT_S): past it,
`LakeBusy` says who is waiting for what, and nothing is lost (the load is committed; on a lake the next run
publishes whatever this one did not). A DuckDB file needs none of this (one writing process per file).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from invoicing_warehouse.engine.connection import (
    WarehouseUnavailable,
    give_catalog_password,
    open_lake_instance,
    scrub,
)
from invoicing_warehouse.engine.environment.engine_settings import LAKE_LOCK_WAIT_S
from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.target import WarehouseTarget

LOCK_WAIT_ENV = LAKE_LOCK_WAIT_S.name
# a publication waits this long for the loads under way (a first load of a big portal is longer)
LOCK_WAIT_S = LAKE_LOCK_WAIT_S.default
# pg_advisory_xact_lock(class, object): 'IWWH' (invoicing-warehouse) and the one lock of the lake's database
LOCK_CLASS = 0x49575748
LOCK_OBJECT = 1
SHARED = "shared"
EXCLUSIVE = "exclusive"
_CATALOG_ALIAS = "invoicing_lake_lock"


class LakeBusy(WarehouseUnavailable):
    """The lake's lock was not granted within the bound: another writer's load or publication went on."""


def lock_wait_s() -> float:
    """The bound of a wait for the lake's lock (INVOICING_LAKE_LOCK_WAIT_S, default LOCK_WAIT_S); raises
    ValueError naming the variable when it is not a positive number."""
    return current_environment().value(LAKE_LOCK_WAIT_S)


@contextmanager
def lake_lock(target: WarehouseTarget, mode: str, *, wait_s: float | None = None) -> Iterator[None]:
    """Holds the lake's lock in `mode` (SHARED for a load, EXCLUSIVE for a build and publication) for the block;
    nothing on a DuckDB file. Raises LakeBusy when it is not granted within `wait_s` (default `lock_wait_s()`),
    WarehouseUnavailable when the catalog cannot be reached; neither message holds the catalog's password."""
    if not target.is_lake:
        yield
        return
    if mode not in (SHARED, EXCLUSIVE):
        raise ValueError(f"lock mode {mode!r}: {SHARED} or {EXCLUSIVE}")
    assert target.catalog is not None
    wait_ms = max(1, int((lock_wait_s() if wait_s is None else wait_s) * 1000))
    function = "pg_advisory_xact_lock_shared" if mode == SHARED else "pg_advisory_xact_lock"
    connection = open_lake_instance()
    try:
        try:
            give_catalog_password(connection, target)  # the libpq string names no password
            libpq = target.catalog.libpq().replace("'", "''")
            connection.execute(f"attach '{libpq}' as {_CATALOG_ALIAS} (type postgres)")
            connection.execute("begin transaction")  # one PostgreSQL transaction, on one connection, holds it
            connection.execute(f"call postgres_execute('{_CATALOG_ALIAS}', 'set lock_timeout = {wait_ms}')")
            connection.execute(f"select * from postgres_query('{_CATALOG_ALIAS}', "
                               f"'select {function}({LOCK_CLASS}, {LOCK_OBJECT})::text as granted')").fetchall()
        except duckdb.Error as error:
            text = scrub(str(error), target)
            if "lock timeout" in text:
                raise LakeBusy(f"{target.describe()}: the lake's {mode} lock was not granted within "
                               f"{wait_ms / 1000:g} s (another writer's load or publication went on); nothing "
                               f"is lost: run it again, or raise {LOCK_WAIT_ENV}") from None
            raise WarehouseUnavailable(f"cannot lock {target.describe()}: {text}") from None
        yield
    finally:
        connection.close()  # ends the transaction, and with it the lock
