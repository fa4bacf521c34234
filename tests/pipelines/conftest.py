"""Fixtures of the extraction's tests: sandboxes on 127.0.0.1 (stopped by the fixture), warehouse paths."""

from __future__ import annotations

import pytest
from sandbox_syncs import quiet


@pytest.fixture
def start_sandbox(sandbox_factory):
    """Starts sandboxes for a test (unpaced unless asked), past the windows' lag; every one is stopped at
    teardown. `start(contract="strict")` (or a `ContractProfile`) serves that contract profile instead of the
    default one."""

    def start(**settings):
        settings.setdefault("rate_limit_per_s", 0)
        settings.setdefault("latency_ms", 0)
        sandbox = sandbox_factory(**settings)
        quiet(sandbox)
        return sandbox

    return start


@pytest.fixture
def warehouse(tmp_path) -> str:
    return str(tmp_path / "warehouse.duckdb")
