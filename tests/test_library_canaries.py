"""Canaries of the library internals the product relies on (issue 44, point 5): each fails, naming the internal,
the day an upgrade within the declared bounds renames or reshapes it, before a user meets the consequence.

- Streamlit (`streamlit>=1.50,<1.68`): invoicing_warehouse/dashboard/host_guard.py wraps
  `starlette_app.create_streamlit_middleware` and calls `starlette_websocket.is_host_allowed`;
- dlt (`dlt>=1.31,<1.32`): pipelines/invoicing/load/lake.py subclasses `DuckDbConnectionPool` and calls its
  `_apply_config`, `_execute_statements`, `_apply_local_config`, `_conn_lock` and `_conn_borrows`.
"""

from __future__ import annotations

import inspect

import duckdb


def test_streamlits_middleware_factory_and_host_check_are_there_as_the_host_guard_uses_them():
    from starlette.middleware import Middleware
    from streamlit.web.server.starlette import starlette_app
    from streamlit.web.server.starlette.starlette_websocket import is_host_allowed

    factory = starlette_app.create_streamlit_middleware
    assert callable(factory) and not inspect.signature(factory).parameters  # called with no argument
    assert all(isinstance(entry, Middleware) for entry in factory())
    assert len(inspect.signature(is_host_allowed).parameters) == 1  # called with the Host header only


def test_the_host_guard_installs_in_front_of_streamlits_middleware():
    from streamlit.web.server.starlette import starlette_app

    from invoicing_warehouse.dashboard.host_guard import HostGuard, install

    original = starlette_app.create_streamlit_middleware
    try:
        install()
        stack = starlette_app.create_streamlit_middleware()
        assert stack[0].cls is HostGuard  # first: before Streamlit answers anything
    finally:
        starlette_app.create_streamlit_middleware = original


def test_dlts_connection_pool_internals_are_there_as_the_lake_pool_uses_them():
    from dlt.destinations.impl.duckdb.configuration import DuckDbConnectionPool

    for name in ("_apply_config", "_execute_statements", "_apply_local_config"):
        assert callable(getattr(DuckDbConnectionPool, name, None)), name
    # a static method: (connection, "GLOBAL" or "SESSION", settings), as lake.py calls it on the instance
    assert list(inspect.signature(DuckDbConnectionPool._apply_config).parameters) == ["conn", "scope", "config"]
    assert "always_open_connection" in inspect.signature(DuckDbConnectionPool.__init__).parameters
    pool = DuckDbConnectionPool.__new__(DuckDbConnectionPool)  # the attributes its __init__ sets
    from dlt.destinations.impl.duckdb.configuration import DuckDbCredentials

    credentials = DuckDbCredentials(":memory:")
    DuckDbConnectionPool.__init__(pool, credentials, always_open_connection=True)
    with pool._conn_lock:  # a lock the subclass takes around its count of borrows
        assert pool._conn_borrows == 0
    connection = duckdb.connect()
    try:
        pool._apply_config(connection, "GLOBAL", {"threads": 1})
        assert connection.execute("select current_setting('threads')").fetchone()[0] == 1
    finally:
        connection.close()
