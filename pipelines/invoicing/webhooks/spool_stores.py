"""Where the hints spool keeps its tables: a SQLite file (one host), or a PostgreSQL schema (any host).

The spool's logic (hint_spool.py, dead_letters.py) is written once, in the SQL both databases speak (`?`
placeholders, `on conflict`, `returning`, row values), against `SpoolConnection`: `execute`, and a writing
transaction that excludes every other writer until it commits. The two stores differ only in how they open,
make their tables, and serialise writers:

| | SQLite file (`Path`) | PostgreSQL (`PostgresSpool`) |
|---|---|---|
| where | beside the warehouse file (one host: the receiver and the runs share the disk) | schema `invoicing_hints` of a database (a DuckLake's catalog, or `INVOICING_HINT_SPOOL`) |
| a writer excludes the others | `begin immediate` (SQLite's one writer) | `begin` + a transaction-scoped advisory lock |
| durable before 200 | WAL, `synchronous=full` | the commit (`synchronous_commit=on` for the spool's sessions, whatever the server's default) |
| a waiting writer gives up after | `BUSY_TIMEOUT_S` | `lock_timeout` = `BUSY_TIMEOUT_S` |
| a killed process | its transaction rolled back by the journal | its transaction rolled back when its connection drops; the advisory lock with it |

Readers that must never create a spool (the status, the dashboard, a Dagster check) open it with
`open_for_reading`, which answers None when there is none yet.
"""  # noqa: E501 (a table, one row a line)

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from invoicing_warehouse.engine.private_files import make_private, private_dir, private_umask
from invoicing_warehouse.engine.redaction import redact
from invoicing_warehouse.engine.target import CatalogDsn
from pipelines.invoicing.errors import InvoicingApiError

BUSY_TIMEOUT_S = 10.0
WAL_SWITCH_RETRY_S = 0.01
POSTGRES_SCHEMA = "invoicing_hints"
CONNECT_TIMEOUT_S = 10
# every spool's writers of one database take this lock (pg_advisory_xact_lock(hashtext(...))): one writer at a time
WRITER_LOCK = "invoicing_hints.writer"
_CREATED_TABLE = re.compile(r"create table if not exists (\w+)")


class SpoolUnreachable(InvoicingApiError):
    """The spool's PostgreSQL cannot be reached or refuses the connection (down, wrong password, no such
    database): one line naming the server (never the password) and what to check (security review 2, L6)."""

    def __init__(self, location: PostgresSpool, reason: str) -> None:
        super().__init__("unreachable", f"hint spool {location}", detail=f"unreachable: {reason}",
                         hint="check INVOICING_DUCKLAKE_CATALOG, INVOICING_DUCKLAKE_PASSWORD and that the "
                              "PostgreSQL server runs")


class SpoolCursor(Protocol):
    """What a spool statement returns (sqlite3's and psycopg2's cursors both are this)."""

    @property
    def rowcount(self) -> int:
        """Rows the statement changed."""
        ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class SpoolConnection(Protocol):
    """A spool's database, whichever it is: statements with `?` placeholders, writing transactions."""

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> SpoolCursor:
        """Runs one statement (autocommit outside `begin_writing`)."""
        ...

    def begin_writing(self) -> None:
        """Starts a transaction that no other writer of this spool runs beside (it waits, at most BUSY_TIMEOUT_S)."""
        ...

    def commit(self) -> None:
        """Commits the writing transaction."""
        ...

    def rollback(self) -> None:
        """Rolls the writing transaction back."""
        ...

    def tables(self) -> set[str]:
        """The spool's tables that exist."""
        ...

    def close(self) -> None:
        """Closes the connection."""
        ...


@dataclass(frozen=True)
class PostgresSpool:
    """A spool in PostgreSQL: the database (password apart, never printed) and the schema of its tables."""

    dsn: CatalogDsn
    schema: str = POSTGRES_SCHEMA

    def __str__(self) -> str:
        return f"{self.dsn.public()} (schema {self.schema})"


SpoolLocation = Path | PostgresSpool


class SqliteSpoolConnection:
    """The spool file, in WAL mode; one instance per thread (sqlite3 connections are not shared)."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        if read_only:
            self._connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
            return
        # the spool, its WAL and shared memory: the owner's only (invoicing_warehouse/engine/private_files.py)
        private_umask()
        if not path.parent.exists():
            private_dir(path.parent)
        make_private(path)  # a spool an older version left 0644
        self._connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        _enter_wal_mode(self._connection)
        # FULL: an append is on disk before the receiver answers 200 (the sender will not retry after it)
        self._connection.execute("pragma synchronous=full")

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> SpoolCursor:
        """Runs one statement."""
        return self._connection.execute(sql, tuple(parameters))

    def begin_writing(self) -> None:
        """`begin immediate`: SQLite's write lock, taken now rather than at the first write."""
        self._connection.execute("begin immediate")

    def commit(self) -> None:
        """Commits."""
        self._connection.execute("commit")

    def rollback(self) -> None:
        """Rolls back."""
        self._connection.execute("rollback")

    def create_tables(self, schema: str, upgrade: Callable[[sqlite3.Connection], None] | None = None) -> None:
        """The spool's tables (idempotent), then `upgrade`: the columns a file made by an older version lacks."""
        self._connection.executescript(schema)
        if upgrade is not None:
            upgrade(self._connection)

    def tables(self) -> set[str]:
        """The tables of the file."""
        return {row[0] for row in self._connection.execute("select name from sqlite_master where type = 'table'")}

    def close(self) -> None:
        """Closes the file."""
        self._connection.close()


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


class PostgresSpoolConnection:
    """The spool's schema in PostgreSQL, through psycopg2 in autocommit mode (transactions are explicit)."""

    def __init__(self, location: PostgresSpool) -> None:
        import psycopg2  # only a deployment with a PostgreSQL spool pays the import

        self.location = location
        dsn = location.dsn
        timeout_ms = int(BUSY_TIMEOUT_S * 1000)
        # keyword arguments: the password is never part of a connection string that an error could repeat
        try:
            self._connection = psycopg2.connect(
                host=dsn.host, port=dsn.port, user=dsn.user, dbname=dsn.database, password=dsn.password,
                connect_timeout=CONNECT_TIMEOUT_S, application_name="invoicing-hints",
                # synchronous_commit on whatever the server's default: a commit is on disk before the 200
                options=f"-c search_path={location.schema} -c lock_timeout={timeout_ms} "
                        f"-c statement_timeout={3 * timeout_ms} -c synchronous_commit=on")
        except psycopg2.OperationalError as error:
            # libpq's text names the server and the user, never the password (passed apart); redacted anyway
            reason = redact(" ".join(str(error).split())) or type(error).__name__
            raise SpoolUnreachable(location, reason) from None
        self._connection.autocommit = True
        self._cursor = self._connection.cursor()

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> SpoolCursor:
        """Runs one statement (`?` placeholders become psycopg2's `%s`; the spool's SQL holds no other `?` or `%`)."""
        self._cursor.execute(sql.replace("?", "%s"), tuple(parameters))
        return self._cursor

    def begin_writing(self) -> None:
        """`begin`, then the spool's writer lock until commit or rollback (or the connection's end)."""
        self._cursor.execute("begin")
        self._cursor.execute("select pg_advisory_xact_lock(hashtext(%s))", (f"{WRITER_LOCK}.{self.location.schema}",))

    def commit(self) -> None:
        """Commits (durable when this returns: PostgreSQL's synchronous commit)."""
        self._cursor.execute("commit")

    def rollback(self) -> None:
        """Rolls back."""
        self._cursor.execute("rollback")

    def create_tables(self, schema: str, upgrade: Callable[[sqlite3.Connection], None] | None = None) -> None:
        """The schema and its tables (idempotent; two processes creating them at once wait on the writer lock).
        `upgrade` is for files only: no PostgreSQL spool predates a column.

        Nothing is created when everything exists, and the schema only when it is missing: PostgreSQL checks the
        privilege to create before it looks whether the object exists, and a role with only its grants on the
        spool (the receiver's, docs/deploy/postgres/roles.sql) must still open it."""
        wanted = set(_CREATED_TABLE.findall(schema))
        if wanted <= self.tables():
            return
        self.begin_writing()
        try:
            self._cursor.execute("select 1 from pg_namespace where nspname = %s", (self.location.schema,))
            if self._cursor.fetchone() is None:
                self._cursor.execute(f'create schema if not exists "{self.location.schema}"')
            self._cursor.execute(schema)
            self.commit()
        except BaseException:
            self.rollback()
            raise

    def tables(self) -> set[str]:
        """The spool's tables in its schema."""
        self._cursor.execute("select table_name from information_schema.tables where table_schema = %s",
                             (self.location.schema,))
        return {str(row[0]) for row in self._cursor.fetchall()}

    def close(self) -> None:
        """Closes the connection."""
        self._connection.close()


def open_spool(location: SpoolLocation, schema: str, upgrade_file: Callable[[sqlite3.Connection], None] | None = None
               ) -> SqliteSpoolConnection | PostgresSpoolConnection:
    """The spool at `location`, its tables made from `schema` (hint_spool.py's one schema text) if missing; a
    file is then upgraded by `upgrade_file` (dead_letters.upgrade: columns older versions lacked)."""
    connection: SqliteSpoolConnection | PostgresSpoolConnection
    if isinstance(location, PostgresSpool):
        connection = PostgresSpoolConnection(location)
    else:
        connection = SqliteSpoolConnection(Path(location))
    try:
        connection.create_tables(schema, upgrade_file)
    except BaseException:
        connection.close()
        raise
    return connection


def open_for_reading(location: SpoolLocation) -> SqliteSpoolConnection | PostgresSpoolConnection | None:
    """The spool at `location` for reading only, never created: None when there is none yet."""
    if isinstance(location, PostgresSpool):
        return PostgresSpoolConnection(location)
    path = Path(location)
    if not path.exists():
        return None
    return SqliteSpoolConnection(path, read_only=True)
