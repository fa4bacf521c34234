"""Fixtures the hand-computed mart tests share: the fixture warehouse (model_fixture.py) built as of D and as of
the past date P, once per test module."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest
from model_fixture import D, P, build_warehouse


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
