"""Fixtures of the extraction's tests: sandboxes on 127.0.0.1 (stopped by the fixture), warehouse paths."""

from __future__ import annotations

import pytest
from invoicing_sandbox import quiet


@pytest.fixture
def start_sandbox():
    """Starts sandboxes for a test; every one is stopped at teardown. `start(contract="strict")` (or a
    `ContractProfile`) serves that contract profile instead of the default one."""
    from sandbox.config import SandboxConfig
    from sandbox.contract import ContractProfile
    from sandbox.server import SandboxServer

    started = []

    def start(**settings) -> SandboxServer:
        settings.setdefault("rate_limit_per_s", 0)
        settings.setdefault("latency_ms", 0)
        if "contract" in settings:
            settings["contract"] = ContractProfile.named(settings["contract"])
        sandbox = SandboxServer(SandboxConfig(**settings)).start()
        started.append(sandbox)
        quiet(sandbox)
        return sandbox

    yield start
    for sandbox in started:
        sandbox.stop()


@pytest.fixture
def warehouse(tmp_path) -> str:
    return str(tmp_path / "warehouse.duckdb")
