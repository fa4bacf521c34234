"""Shared fixtures of the Dagster tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def temporary_dagster_home(tmp_path_factory, monkeypatch) -> Path:
    """Every test runs with its own empty DAGSTER_HOME, so no test reads or writes a real instance."""
    home = tmp_path_factory.mktemp("dagster_home")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home
