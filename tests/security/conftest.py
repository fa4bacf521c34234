"""The hand-computed portal of tests/models/model_fixture.py, built and published, for the attack rows that need
a warehouse and its readers' copy (the analysts' models, the exports)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))  # the fixture's own sibling imports
from model_fixture import load_fixture


@pytest.fixture()
def published_fixture(tmp_path) -> Callable[..., Path]:
    """`make(as_of, change=None)`: a warehouse of the fixture (raw tables changed by `change(conn)` when given)
    built and published as of `as_of`; returns its path (the readers' copy beside it)."""
    from invoicing_warehouse.cli import main

    def make(as_of: date, change: Callable[[duckdb.DuckDBPyConnection], None] | None = None) -> Path:
        path = tmp_path / "warehouse.duckdb"
        with duckdb.connect(str(path)) as conn:
            load_fixture(conn)
            if change is not None:
                change(conn)
        assert main(["models", "--warehouse", str(path), "--as-of", as_of.isoformat()]) == 0
        return path

    return make
