"""The hand-computed portal of tests/sql/model_fixture.py, built and published, for the attack rows that need
a warehouse and its readers' copy (the analysts' models, the exports)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sql"))  # the fixture's own sibling imports
from tests.sql.model_fixture import load_fixture


def _publish_fixture(folder: Path, as_of: date,
                     change: Callable[[duckdb.DuckDBPyConnection], None] | None = None) -> Path:
    from invoicing_warehouse.cli import main

    path = folder / "warehouse.duckdb"
    with duckdb.connect(str(path)) as conn:
        load_fixture(conn)
        if change is not None:
            change(conn)
    assert main(["models", "--warehouse", str(path), "--as-of", as_of.isoformat()]) == 0
    return path


@pytest.fixture()
def published_fixture(tmp_path) -> Callable[..., Path]:
    """`make(as_of, change=None)`: a warehouse of the fixture (raw tables changed by `change(conn)` when given)
    built and published as of `as_of`; returns its path (the readers' copy beside it)."""
    return lambda as_of, change=None: _publish_fixture(tmp_path, as_of, change)


@pytest.fixture(scope="module")
def published_fixture_once(tmp_path_factory) -> Callable[[date], Path]:
    """`make(as_of)`: as `published_fixture`, built once per module and as_of, for the rows whose payload is
    refused before anything runs (each still asserts that nothing changed)."""
    built: dict[date, Path] = {}

    def make(as_of: date) -> Path:
        if as_of not in built:
            built[as_of] = _publish_fixture(tmp_path_factory.mktemp("published"), as_of)
        return built[as_of]

    return make
