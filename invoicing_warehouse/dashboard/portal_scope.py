"""A dashboard limited to some portals (`INVOICING_DASHBOARD_PORTALS`), so an accounting firm can give a client
company its own view (security review 2, M4): every query of every page sees those portals' rows only.

How: the readers' copy (or the marts built as of another date) stays attached as it is, and an in-memory catalog
`portal_scope` is made current over it, holding for each of its tables with a `portal_id` column a view of the
same schema and name that keeps the allowed portals' rows. The pages' SQL (`marts.receivables`, ...) is unchanged
and resolves to those views; a table without `portal_id` (dlt's bookkeeping, a child table of the raw data, a
seed) is not there at all, so a page that needs one says so instead of showing another portal's rows. Why views
at the connection and not a filter per query: one place, which a new page cannot forget.

Unset (the default), the dashboard shows every portal of the lake.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import duckdb

from invoicing_warehouse.engine.environment.reader import environment
from invoicing_warehouse.engine.environment.run_settings import DASHBOARD_PORTALS

PORTALS_ENV = DASHBOARD_PORTALS.name
SCOPE_CATALOG = "portal_scope"
_PORTAL_NAME = re.compile(r"[a-z0-9_]+")  # the portals file's rule (pipelines/invoicing/portals.py)


class PortalScopeError(ValueError):
    """`INVOICING_DASHBOARD_PORTALS` is malformed; the message says how to write it."""


def allowed_portals(environ: Mapping[str, str] | None = None) -> frozenset[str] | None:
    """The portals this dashboard may show (None: every portal). Raises PortalScopeError on a name that is not a
    portal name (`[a-z0-9_]+`) or an empty list."""
    text = environment(environ).text(DASHBOARD_PORTALS) or ""
    if not text:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    bad = [name for name in names if not _PORTAL_NAME.fullmatch(name)]
    if bad or not names:
        raise PortalScopeError(f"{PORTALS_ENV} must list portal names separated by commas (lowercase letters, "
                               f"digits and _, e.g. acme,globex_fr); not a portal name: {', '.join(bad) or text!r}")
    return frozenset(names)


def restrict(connection: duckdb.DuckDBPyConnection, portals: frozenset[str] | None) -> duckdb.DuckDBPyConnection:
    """Makes `connection` (or a cursor of it) see only the rows of `portals` (None: nothing changes) and returns
    it. The views are made once per database: a cursor of a connection already restricted only switches to them."""
    if portals is None:
        return connection
    made = connection.execute("select count(*) from duckdb_databases() where database_name = ?",
                              [SCOPE_CATALOG]).fetchone()
    if not made or not made[0]:
        _make_views(connection, portals)
    connection.execute(f"use {SCOPE_CATALOG}")
    return connection


def _make_views(connection: duckdb.DuckDBPyConnection, portals: frozenset[str]) -> None:
    current = connection.execute("select current_database()").fetchone()
    assert current is not None  # a connection always has a current database
    source = str(current[0])
    scoped = connection.execute(
        "select table_schema, table_name from information_schema.columns where table_catalog = current_database() "
        "and column_name = 'portal_id' order by 1, 2").fetchall()
    # names are validated portal names: literals in the views' text, which cannot take parameters
    allowed = ", ".join(f"'{portal}'" for portal in sorted(portals))
    connection.execute(f"attach ':memory:' as {SCOPE_CATALOG}")
    for schema in sorted({schema for schema, _ in scoped}):
        connection.execute(f"create schema if not exists {SCOPE_CATALOG}.{_quoted(schema)}")
    for schema, table in scoped:
        connection.execute(
            f"create view {SCOPE_CATALOG}.{_quoted(schema)}.{_quoted(table)} as select * from "
            f"{_quoted(source)}.{_quoted(schema)}.{_quoted(table)} where portal_id in ({allowed})")


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
