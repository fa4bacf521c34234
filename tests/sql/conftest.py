"""Fixtures the hand-computed mart tests share: the fixture warehouse (model_fixture.py) built as of D and as of
the past date P, once per test module; and its raw tables in a warehouse file of the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from model_fixture import D, P, build_warehouse, load_fixture

from tests.support.fixture_factory import empty_warehouse


@pytest.fixture(scope="module")
def at_d() -> Iterator[duckdb.DuckDBPyConnection]:
    """The fixture's models built as of D."""
    conn = build_warehouse(D)
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def at_p() -> Iterator[duckdb.DuckDBPyConnection]:
    """The fixture's models built as of the past date P."""
    conn = build_warehouse(P)
    yield conn
    conn.close()


@pytest.fixture
def warehouse(tmp_path) -> Path:
    """A warehouse file in the test's folder holding the fixture's raw tables, no model built yet (the sql
    folder's `warehouse`; the root conftest's is an empty one)."""
    path = empty_warehouse(tmp_path)
    with duckdb.connect(str(path)) as connection:
        load_fixture(connection)
    return path
