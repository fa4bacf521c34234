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


@pytest.fixture(scope="session")
def postgres_cluster():
    """One real PostgreSQL server on 127.0.0.1 for the session (the DuckLake catalogs), as the `postgres`
    user in a temporary folder; stopped and removed at the end, also when tests fail. No PostgreSQL on
    the machine fails the tests that need it, saying how to install it (never a skip)."""
    from harness.postgres_cluster import PostgresCluster, PostgresMissing

    try:
        cluster = PostgresCluster().start()
    except PostgresMissing as missing:
        pytest.fail(str(missing), pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def lake(postgres_cluster, tmp_path, request):
    """A new, empty DuckLake: its own catalog database in the session's PostgreSQL, data under tmp_path."""
    from warehouse_engine.target import WarehouseTarget

    name = "lake_" + "".join(c if c.isalnum() else "_" for c in request.node.name.lower())[:50]
    dsn = postgres_cluster.create_database(f"{name}_{len(_LAKES)}")
    _LAKES.append(dsn)
    return WarehouseTarget.ducklake(dsn, tmp_path / "lake-data", password=postgres_cluster.password)


_LAKES: list[str] = []
