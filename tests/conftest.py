"""Session-wide settings of the whole suite, its one PostgreSQL server (the DuckLake catalogs) and its one
S3-compatible server (the object store of the lakes on `s3://`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_rate_budgets(tmp_path_factory) -> Iterator[None]:
    """The hosts' shared rate budgets of this test session live in its own directory (the sync processes
    it starts inherit it): another session's syncs, or a developer's, never pace this one's."""
    with pytest.MonkeyPatch.context() as session:  # set for the session, restored after it
        session.setenv("INVOICING_RATE_BUDGET_DIR", str(tmp_path_factory.mktemp("rate-budgets")))
        yield


@pytest.fixture(scope="session", autouse=True)
def trends_published_only_where_tested() -> Iterator[None]:
    """The gate computes the month-end trends before every publication (twelve builds of three marts: about a
    second on a test's sandbox, on each of the suite's hundreds of publications). The suite turns that off but
    in the tests of it (tests/sql/test_month_end_trends.py) and the dashboard's warehouse, whose Trends page
    reads the published table; a copy without it is the page's other path, tested there too."""
    with pytest.MonkeyPatch.context() as session:
        session.setenv("INVOICING_PUBLISH_TRENDS", "0")
        yield


@pytest.fixture(autouse=True)
def own_rate_budget_dir(tmp_path, monkeypatch) -> None:
    """Within the session, every test paces and keeps its tokens (token_cache.py) in a folder of its own:
    sandboxes share one client id and secret, so a test's sandbox on a port an earlier test's used would
    refuse the token kept there and add a token request to the counts the test asserts."""
    monkeypatch.setenv("INVOICING_RATE_BUDGET_DIR", str(tmp_path / "rate-budget"))


def pytest_configure(config) -> None:
    """Registers the suite's own marker (the run is `--strict-markers`); written here, not imported from the
    factory, whose import brings the emulator's server into every run, also of the tests that start none."""
    config.addinivalue_line("markers", "sandbox(**settings): the sandbox that the test's `sandbox`, or the "
                            "module's `shared_sandbox`, starts (tests/support/fixture_factory.py)")


@pytest.fixture
def sandbox_factory() -> Iterator:
    """`sandbox_factory(seed=.., scale=.., clock=None, generate=True, quiet=False, **config)`: a started sandbox on
    127.0.0.1 on the run's date (INVOICING_TEST_TODAY, tests/support/sandboxes.py); every one is stopped at
    teardown. The one way the suite starts its seeded sandboxes (tests/support/fixture_factory.py)."""
    from tests.support.fixture_factory import SandboxFactory

    with SandboxFactory() as factory:
        yield factory


@pytest.fixture(scope="module")
def module_sandbox_factory() -> Iterator:
    """`sandbox_factory` for a module's shared sandbox (its module-scoped fixtures); stopped after the module."""
    from tests.support.fixture_factory import SandboxFactory

    with SandboxFactory() as factory:
        yield factory


@pytest.fixture
def sandbox(sandbox_factory, request):
    """The test's own sandbox, of its closest `@pytest.mark.sandbox(**settings)` (the test's, its class's or its
    module's `pytestmark`); unmarked, a small one, unpaced, past the windows' lag (DEFAULT_SANDBOX). Stopped at
    teardown."""
    return sandbox_factory.marked(request.node)


@pytest.fixture(scope="module")
def shared_sandbox(module_sandbox_factory, request):
    """The module's one sandbox, shared by its tests and its module-scoped fixtures (a synced base warehouse),
    of the module's `pytestmark = pytest.mark.sandbox(**settings)`; stopped after the module."""
    return module_sandbox_factory.marked(request.node)


@pytest.fixture
def warehouse(tmp_path) -> str:
    """The path of an empty warehouse in the test's folder (the first sync makes it)."""
    from tests.support.fixture_factory import empty_warehouse

    return str(empty_warehouse(tmp_path))


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


@pytest.fixture(scope="session")
def s3_server():
    """One S3-compatible server (moto's, a real HTTP server) on 127.0.0.1 for the session: the object store of
    the lakes whose data path is `s3://`. Stopped at the end, also when tests fail. Each user makes its own
    bucket (`s3_server.create_bucket`)."""
    from harness.s3_server import S3Server, S3ServerMissing

    try:
        server = S3Server().start()
    except S3ServerMissing as missing:
        pytest.fail(str(missing), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def lake(postgres_cluster, tmp_path, request):
    """A new, empty DuckLake: its own catalog database in the session's PostgreSQL, data under tmp_path."""
    from invoicing_warehouse.engine.target import WarehouseTarget

    name = "lake_" + "".join(c if c.isalnum() else "_" for c in request.node.name.lower())[:50]
    dsn = postgres_cluster.create_database(f"{name}_{len(_LAKES)}")
    _LAKES.append(dsn)
    return WarehouseTarget.ducklake(dsn, tmp_path / "lake-data", password=postgres_cluster.password)


_LAKES: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` hands out the heaviest files first and keeps the dashboard's together
    (tests/support/work_order.py); any other mode is xdist's own."""
    if config.getoption("dist") != "loadfile":
        return None
    from tests.support.work_order import HeaviestFirst

    return HeaviestFirst(config, log)
