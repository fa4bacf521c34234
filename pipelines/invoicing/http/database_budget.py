"""One rate budget per egress IP and API host, shared by every process of every host, kept in PostgreSQL.

`host_budget.py` shares the limiter's state between the processes of ONE machine through a locked file. Hosts
behind one egress IP (one NAT, one public address) share the service's 10 requests/s too, so when a PostgreSQL
database is configured the same state lives in a row of it instead, and every process, whichever host it runs
on, paces on the same grants:

- Which database (`budget_database_from_env`): `INVOICING_RATE_BUDGET_URL` (a libpq URL; its password in
  `INVOICING_RATE_BUDGET_PASSWORD` or libpq's usual places, never printed), else the lake's catalog when the
  DuckLake engine is configured (`INVOICING_DUCKLAKE_CATALOG` and its password, invoicing_warehouse/engine/target.py);
  `INVOICING_RATE_BUDGET_URL=file` keeps the machine's file even then. No database: the file, as before.
- Key: the egress (`egress.py`: `INVOICING_EGRESS_IP`, else the source address towards the API host) and the
  API host (`host_budget.host_key`): one row per key in `invoicing_rate_budget`, created when missing.
- Each hold is one short transaction: `SELECT ... FOR UPDATE` of the key's row, the limiter's work on it in
  memory (microseconds), `UPDATE`, `COMMIT`. Nothing is held between holds and there is no session state: a
  process that dies mid-hold loses its connection and PostgreSQL rolls its transaction back, releasing the row.
  A host that vanishes without closing its connection is cut by `idle_in_transaction_session_timeout`
  (`IDLE_IN_HOLD_S`); the others wait for the row `LOCK_WAIT_S` at most (longer, so they outlive that cut).
  What a dead process had reserved costs at most the slots it reserved (about a second), as with the file.
- One clock for every host: the grant times in the row are the database server's clock (seconds since the
  epoch). Each process maps its own `time.monotonic()` onto it with an offset measured by round trips
  (`clock`): error at most half the best round trip seen, a fraction of a millisecond on one network, where two
  hosts' own clocks may differ by milliseconds or more.
- Fail closed: a database that cannot be reached, or a row held too long, raises `BudgetDatabaseError` (no
  password in it): a process pacing alone beside others would exceed the egress's limit.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import psycopg2.errors
from psycopg2.extensions import connection as Connection
from psycopg2.extensions import cursor as Cursor
from psycopg2.extras import Json

from invoicing_warehouse.engine.environment.api_settings import RATE_BUDGET_PASSWORD, RATE_BUDGET_URL
from invoicing_warehouse.engine.environment.reader import environment
from invoicing_warehouse.engine.redaction import redact, register_secret
from invoicing_warehouse.engine.target import catalog_from_env
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.egress import egress_for
from pipelines.invoicing.http.host_budget import STALE_S, host_key

log = logging.getLogger(__name__)

__all__ = ["BudgetDatabase", "BudgetDatabaseError", "DatabaseBudget", "budget_database_from_env"]

URL_ENV = RATE_BUDGET_URL.name
PASSWORD_ENV = RATE_BUDGET_PASSWORD.name
KEEP_FILE = "file"
TABLE = "invoicing_rate_budget"
FORMAT = 1
LOCK_WAIT_S = 15.0
IDLE_IN_HOLD_S = 5.0
CONNECT_TIMEOUT_S = 10
# The clock offset: the best of a few round trips at connection, then any hold's quicker one. A measure ages
# by this many seconds per second (a generous drift between two clocks), so a fresh quick one replaces it.
OFFSET_SAMPLES = 5
OFFSET_AGEING = 5e-4
KIND = "rate_budget"
# Creation of the table by several processes at once: one advisory lock (transaction-scoped) serialises it.
CREATE_LOCK_KEY = 0x1A7E_B0D6


class BudgetDatabaseError(InvoicingApiError):
    """The shared rate budget's database cannot be used: one line naming it (no password) and what went wrong."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(KIND, where, detail=redact(detail))


@dataclass(frozen=True)
class BudgetDatabase:
    """Where the budget lives: a libpq connection string or URL without its password, and the password."""

    conninfo: str
    public: str  # printable: no password
    password: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        register_secret(self.password)


def budget_database_from_env(environ: dict[str, str] | None = None) -> BudgetDatabase | None:
    """The configured budget database (see the module's doc), None for the machine's file."""
    settings = environment(environ)
    url = settings.text(RATE_BUDGET_URL) or ""
    if url.lower() == KEEP_FILE:
        return None
    if url:
        parts = urlsplit(url)
        if parts.scheme not in ("postgres", "postgresql"):
            raise BudgetDatabaseError(URL_ENV, "must be a PostgreSQL URL: postgresql://user@host:port/dbname")
        register_secret(parts.password)
        netloc = parts.netloc.rsplit("@", 1)
        public_netloc = (netloc[0].split(":", 1)[0] + "@" + netloc[1]) if len(netloc) == 2 else parts.netloc
        public = urlunsplit((parts.scheme, public_netloc, parts.path, parts.query, ""))
        return BudgetDatabase(url, public, settings.text(RATE_BUDGET_PASSWORD))
    catalog = catalog_from_env(environ)
    if catalog is None:
        return None
    return BudgetDatabase(catalog.libpq(), catalog.public(), catalog.password)


class DatabaseBudget:
    """The shared pacing state of one (egress, API host) in PostgreSQL: `hold` gives it under the row's lock, and
    `clock` is the time the state's times are in (the database server's, as this process reads it)."""

    def __init__(self, base_url: str, database: BudgetDatabase, egress: str | None = None) -> None:
        self.key = host_key(base_url)
        self.egress = egress if egress is not None else egress_for(base_url)
        self.database = database
        self._lock = threading.RLock()  # threads of this process take turns on its one connection
        self._connection: Connection | None = None
        self._offset: float | None = None  # database clock - time.monotonic()
        self._offset_error = float("inf")  # half the round trip it was measured over, aged
        self._offset_at = 0.0
        self._row_ready = False

    def clock(self) -> float:
        """Now, on the database server's clock (seconds since the epoch), from this process's monotonic clock."""
        if self._offset is None:
            with self._lock:
                self._connect()
        assert self._offset is not None
        return time.monotonic() + self._offset

    @contextlib.contextmanager
    def hold(self) -> Iterator[dict]:
        """The state (a dict, empty when new or stale) under the row's lock; what the caller leaves in it is
        saved, and the lock released, when the block ends without an error (an error rolls back)."""
        with self._lock:
            connection = self._connect()
            try:
                with _transaction(connection) as cursor:
                    state = self._select_for_update(cursor)
                    yield state
                    cursor.execute(
                        f"UPDATE {TABLE} SET state = %s, touched = clock_timestamp() WHERE egress = %s AND api_host = "
                        "%s",
                        (Json({"format": FORMAT, "state": state}), self.egress, self.key))
            except psycopg2.Error as error:
                self._drop_connection()
                raise self._error(error) from None

    def close(self) -> None:
        """Closes this process's connection (a later hold opens another)."""
        with self._lock:
            self._drop_connection()

    def _select_for_update(self, cursor: Cursor) -> dict:
        query = (f"SELECT state, extract(epoch FROM clock_timestamp() - touched)::float8, "
                 f"extract(epoch FROM clock_timestamp())::float8 FROM {TABLE} "
                 "WHERE egress = %s AND api_host = %s FOR UPDATE")
        for _ in range(2):
            sent = time.monotonic()
            cursor.execute(query, (self.egress, self.key))
            row = cursor.fetchone()
            received = time.monotonic()
            if row is not None:
                saved, idle_s, server_now = row
                self._measured(sent, received, server_now)
                return _state_of(saved, idle_s)
            # the row is missing (first use of this key, or deleted): create it, then lock it
            cursor.execute(f"INSERT INTO {TABLE} (egress, api_host) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                           (self.egress, self.key))
        raise BudgetDatabaseError(self.database.public, f"the row of {self.egress} {self.key} cannot be created")

    def _connect(self) -> Connection:
        if self._connection is not None and not self._connection.closed:
            return self._connection
        options = (f"-c idle_in_transaction_session_timeout={int(IDLE_IN_HOLD_S * 1000)} "
                   f"-c lock_timeout={int(LOCK_WAIT_S * 1000)} -c statement_timeout={int(LOCK_WAIT_S * 2000)}")
        connection = None
        try:
            # the password given apart as a keyword (None: left out, libpq's own places), never printed
            connection = psycopg2.connect(self.database.conninfo, connect_timeout=CONNECT_TIMEOUT_S, options=options,
                                          application_name="invoicing-rate-budget", password=self.database.password)
            # autocommit: no statement opens a transaction of its own; each hold's is explicit and short
            connection.autocommit = True
            _create_table(connection)
            with connection.cursor() as cursor:
                for _ in range(OFFSET_SAMPLES):
                    sent = time.monotonic()
                    cursor.execute("SELECT extract(epoch FROM clock_timestamp())::float8")
                    row = cursor.fetchone()
                    received = time.monotonic()
                    assert row is not None
                    self._measured(sent, received, row[0])
        except psycopg2.Error as error:
            if connection is not None:
                with contextlib.suppress(psycopg2.Error):
                    connection.close()
            raise self._error(error) from None
        self._connection = connection
        log.info("rate budget: shared in %s for egress %s, %s", self.database.public, self.egress, self.key)
        return connection

    def _measured(self, sent: float, received: float, server_now: float) -> None:
        """One reading of the server's clock between `sent` and `received` (monotonic): kept when it bounds the
        offset more tightly than the current one, aged by the time since it was taken."""
        error = (received - sent) / 2
        current = self._offset_error + OFFSET_AGEING * (received - self._offset_at)
        if error <= current:
            self._offset = server_now - (sent + received) / 2
            self._offset_error, self._offset_at = error, received

    def _drop_connection(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(psycopg2.Error):
                self._connection.close()
        self._connection = None

    def _error(self, error: psycopg2.Error) -> BudgetDatabaseError:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        if isinstance(error, psycopg2.errors.LockNotAvailable):
            first_line = f"the budget's row stayed locked for {LOCK_WAIT_S:.0f} s (a stopped process?)"
        return BudgetDatabaseError(self.database.public, f"rate budget of {self.egress} {self.key}: {first_line}")


@contextlib.contextmanager
def _transaction(connection: Connection) -> Iterator[Cursor]:
    """One explicit transaction on an autocommit connection: committed when the block ends, rolled back when it
    raises (a connection that cannot even roll back is closed: the next hold opens another)."""
    with connection.cursor() as cursor:
        cursor.execute("BEGIN")
        try:
            yield cursor
        except BaseException:
            try:
                cursor.execute("ROLLBACK")
            except psycopg2.Error:
                connection.close()  # the block's own error is the one to report
            raise
        cursor.execute("COMMIT")


def _create_table(connection: Connection) -> None:
    """The budget's table, created once by whichever process comes first (the others wait on the advisory lock
    of the transaction, then find it)."""
    with _transaction(connection) as cursor:
        # PostgreSQL checks the privilege to create before it looks whether the table exists: a role granted
        # only the budget's table must find it without asking to create it
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", (TABLE,))
        row = cursor.fetchone()
        if row is not None and row[0]:
            return
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (CREATE_LOCK_KEY,))
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} ("
            " egress text NOT NULL, api_host text NOT NULL,"
            " state jsonb NOT NULL DEFAULT '{}'::jsonb,"
            " touched timestamptz NOT NULL DEFAULT clock_timestamp(),"
            " PRIMARY KEY (egress, api_host))")


def _state_of(saved: object, idle_s: float) -> dict:
    """The limiter's state from the row: empty when of another format, or untouched for `STALE_S` (the server
    may have restarted its windows since), as `host_budget.HostBudget` reads its file."""
    if not isinstance(saved, dict) or saved.get("format") != FORMAT or not 0 <= idle_s <= STALE_S:
        return {}
    state = saved.get("state")
    return state if isinstance(state, dict) else {}
