"""Issue 33, point 2: where the budget shared across hosts lives, what it is keyed by, its clock, and its errors.

Against the session's real PostgreSQL; no pacing measured here (tests/reliability/test_database_budget.py does).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import psycopg2
import pytest

from pipelines.invoicing.http.client import InvoicingClient, shared_budget_of
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.http.database_budget import (
    BudgetDatabase,
    BudgetDatabaseError,
    DatabaseBudget,
    budget_database_from_env,
)
from pipelines.invoicing.http.egress import egress_for
from pipelines.invoicing.http.host_budget import HostBudget
from pipelines.invoicing.http.ratelimit import RateLimiter

API = "http://127.0.0.1:8765/portals/p1/api/v2"


@contextlib.contextmanager
def sql(database: BudgetDatabase, password: str | None) -> Iterator:
    """A cursor of the test's own on the budget's database (autocommit: each statement on its own)."""
    connection = psycopg2.connect(database.conninfo, password=password)
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            yield cursor
    finally:
        connection.close()


@pytest.fixture(scope="module")
def budget_database(postgres_cluster) -> BudgetDatabase:
    dsn = postgres_cluster.create_database("budget_settings")
    return BudgetDatabase(dsn, dsn, postgres_cluster.password)


def test_the_budget_database_is_the_url_else_the_lake_catalog_else_none():
    assert budget_database_from_env({}) is None
    lake = {"INVOICING_WAREHOUSE_ENGINE": "ducklake", "INVOICING_DUCKLAKE_CATALOG": "postgresql://lake@db:5433/cat",
            "INVOICING_DUCKLAKE_PASSWORD": "catalog-pw"}
    from_lake = budget_database_from_env(lake)
    assert from_lake is not None and from_lake.password == "catalog-pw"
    assert from_lake.public == "postgresql://lake@db:5433/cat" and "catalog-pw" not in repr(from_lake)
    assert "port='5433'" in from_lake.conninfo and "catalog-pw" not in from_lake.conninfo
    own = budget_database_from_env({**lake, "INVOICING_RATE_BUDGET_URL": "postgresql://rb:url-pw@budget:5432/rb",
                                    "INVOICING_RATE_BUDGET_PASSWORD": "given-pw"})
    assert own is not None and own.password == "given-pw" and own.public == "postgresql://rb@budget:5432/rb"
    assert budget_database_from_env({**lake, "INVOICING_RATE_BUDGET_URL": "file"}) is None
    with pytest.raises(BudgetDatabaseError, match="PostgreSQL URL"):
        budget_database_from_env({"INVOICING_RATE_BUDGET_URL": "mysql://x@y/z"})


def test_the_egress_is_the_setting_else_the_source_address_towards_the_api():
    assert egress_for(API, {}) == "127.0.0.1"  # the route to a loopback host leaves from loopback
    assert egress_for(API, {"INVOICING_EGRESS_IP": " nat-paris-1 "}) == "nat-paris-1"
    assert egress_for("https://api.invalid./v2", {}) == "unrouted"  # no such name: no route to tell
    with pytest.raises(ValueError):
        egress_for(API, {"INVOICING_EGRESS_IP": "x" * 300})


def test_the_client_paces_on_the_database_when_one_is_configured(monkeypatch, postgres_cluster, budget_database):
    monkeypatch.delenv("INVOICING_WAREHOUSE_ENGINE", raising=False)
    assert isinstance(shared_budget_of(API), HostBudget)
    monkeypatch.setenv("INVOICING_RATE_BUDGET_URL", budget_database.conninfo)
    monkeypatch.setenv("INVOICING_RATE_BUDGET_PASSWORD", postgres_cluster.password)
    monkeypatch.setenv("INVOICING_EGRESS_IP", "203.0.113.7")
    with InvoicingClient(ClientSettings(API, "id", "secret")) as client:
        budget = client.limiter.shared
        assert isinstance(budget, DatabaseBudget) and budget.egress == "203.0.113.7"
        grants = [client.limiter.acquire() for _ in range(3)]
    assert [g.seq for g in grants] == [1, 2, 3]
    with sql(budget_database, postgres_cluster.password) as cursor:
        cursor.execute("SELECT state -> 'state' -> 'seq' FROM invoicing_rate_budget "
                       "WHERE egress = '203.0.113.7' AND api_host = 'http://127.0.0.1:8765'")
        row = cursor.fetchone()
    assert row == (3,)  # the three grants are the row's, not a file's


def test_the_clock_is_the_database_servers_and_two_budgets_pace_as_one(budget_database):
    one = DatabaseBudget(API, budget_database, egress="198.51.100.1")
    other = DatabaseBudget("http://127.0.0.1:8765/portals/p2/api/v2", budget_database, egress="198.51.100.1")
    with sql(budget_database, budget_database.password) as cursor:
        before = one.clock()
        cursor.execute("SELECT extract(epoch FROM clock_timestamp())::float8")
        (server,) = cursor.fetchone()
        after = one.clock()
    assert before - 0.05 <= server <= after + 0.05  # the database's epoch seconds, within a round trip or so
    assert abs(time.time() - server) < 5  # the same machine: its wall clock too
    first, second = RateLimiter(10, clock=one.clock, shared=one), RateLimiter(10, clock=other.clock, shared=other)
    grants = [limiter.acquire() for _ in range(3) for limiter in (first, second)]
    assert [g.seq for g in grants] == [1, 2, 3, 4, 5, 6]  # one key (egress, host): one sequence, in turn
    assert grants[-1].at - grants[0].at >= 5 * 0.075 - 0.01  # each the minimum gap after the one before
    elsewhere = DatabaseBudget(API, budget_database, egress="198.51.100.2")
    assert RateLimiter(10, clock=elsewhere.clock, shared=elsewhere).acquire().seq == 1  # another egress: its own


def test_a_stale_or_foreign_row_is_started_afresh(budget_database):
    budget = DatabaseBudget(API, budget_database, egress="198.51.100.9")
    RateLimiter(10, clock=budget.clock, shared=budget).acquire()
    with sql(budget_database, budget_database.password) as cursor:
        cursor.execute("UPDATE invoicing_rate_budget SET touched = touched - interval '1 hour' "
                       "WHERE egress = '198.51.100.9'")
    with budget.hold() as state:
        assert state == {}  # an hour unused: the server may have moved its windows since
        state["seq"] = 1
    with sql(budget_database, budget_database.password) as cursor:
        cursor.execute("""UPDATE invoicing_rate_budget SET state = '{"format": 99, "state": {"seq": 5}}'"""
                       " WHERE egress = '198.51.100.9'")
    with budget.hold() as state:
        assert state == {}


def test_an_unreachable_database_fails_closed_without_the_password(postgres_cluster):
    wrong = BudgetDatabase(f"postgresql://{postgres_cluster.user}@127.0.0.1:{postgres_cluster.port}/budget_settings",
                           "postgresql://lake@127.0.0.1/budget_settings", "not-the-password-x7")
    budget = DatabaseBudget(API, wrong, egress="198.51.100.3")
    with pytest.raises(BudgetDatabaseError) as raised:
        RateLimiter(10, clock=budget.clock, shared=budget).acquire()
    assert "not-the-password-x7" not in str(raised.value) and "budget_settings" in str(raised.value)


def test_a_forged_pause_in_the_row_does_not_freeze_the_hosts(budget_database):
    """Security review M2 on the database store: whoever may write the row (any host with the database's
    password) cannot stop every host's syncs with a pause a server could never ask for."""
    budget = DatabaseBudget(API, budget_database, egress="198.51.100.11")
    limiter = RateLimiter(10, clock=budget.clock, shared=budget)
    limiter.acquire()
    with sql(budget_database, budget_database.password) as cursor:
        cursor.execute("UPDATE invoicing_rate_budget SET state = jsonb_set(state, '{state,paused_until}', "
                       "'1e12') WHERE egress = '198.51.100.11'")
        cursor.execute("SELECT state -> 'state' -> 'paused_until' FROM invoicing_rate_budget "
                       "WHERE egress = '198.51.100.11'")
        (forged,) = cursor.fetchone()
    assert forged == 1e12  # the row the next process reads does carry the forged pause
    started = time.monotonic()
    second = RateLimiter(10, clock=budget.clock, shared=budget).acquire()
    assert time.monotonic() - started < 2  # the forged state dropped for the process's own, not waited for
    assert second.seq >= 1


def test_a_row_held_too_long_fails_closed_saying_so(budget_database, monkeypatch):
    monkeypatch.setattr("pipelines.invoicing.http.database_budget.LOCK_WAIT_S", 0.3)  # the server's lock_timeout
    budget = DatabaseBudget(API, budget_database, egress="198.51.100.13")
    with budget.hold() as state:
        state["seq"] = 1
    with sql(budget_database, budget_database.password) as cursor:  # a stopped process's open hold of the row
        cursor.execute("BEGIN")
        cursor.execute("SELECT state FROM invoicing_rate_budget WHERE egress = '198.51.100.13' FOR UPDATE")
        with pytest.raises(BudgetDatabaseError, match="stayed locked") as raised, budget.hold():
            pass
        cursor.execute("ROLLBACK")
    assert budget_database.password not in str(raised.value)
    with budget.hold() as state:  # released: the next hold opens a new connection and finds the row as left
        assert state == {"seq": 1}
