"""Builds partitioned by portal (issue 45, point 1): two portals synced from two sandboxes of one seed (their ids
collide); a change to portal acme through its API, synced, then published through the gate for acme only.

- the gate rebuilt acme's rows only (its outcome says so) and beta's rows of every mart are the same;
- the result equals, row for row, a full rebuild of every model on a copy of the same warehouse (the truth: the
  build every other run makes, independent of the partitioned path);
- a blocking check failing on acme's rows publishes nothing: the readers' copy and the warehouse's marts stay.
"""

import shutil
from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from harness.marts_truth import compare_marts
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.engine.sql_runner import build_models, downstream_models
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import build_and_publish
from pipelines.invoicing.load.sync import make_pipeline, run_sync
from tests.sql.test_models_two_portals import open_invoices, pay_some
from tests.support.fixture_factory import empty_warehouse

SEED, SCALE = 7, 30
START = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)
CHANGED = ("documents", "transactions", "transaction_usages")


def _sync(warehouse, name, sb):
    return run_sync(make_pipeline(warehouse, name), base_url=sb.base_url, client_id=sb.client_id,
                    client_secret=sb.client_secret, rate_limit_per_s=0)


def _portal_tables(conn) -> list[str]:
    """The marts and reference tables that hold rows per portal."""
    return [f"{s}.{t}" for s, t in conn.execute(
        "select table_schema, table_name from information_schema.columns where column_name = 'portal_id' "
        "and table_schema = 'marts' and table_name in (select table_name from information_schema.tables "
        "where table_type = 'BASE TABLE' and table_schema = 'marts') order by 1, 2").fetchall()]


def _portal_rows(conn, table: str, portal: str) -> list[tuple]:
    return sorted(conn.execute(f"select * from {table} where portal_id = ?", [portal]).fetchall(), key=repr)


def _rows(conn, table: str) -> list[tuple]:
    return sorted(conn.execute(f"select * from {table}").fetchall(), key=repr)


@pytest.fixture
def two_portals(tmp_path, sandbox_factory):
    """A warehouse of two portals (acme, beta), every model built and published through the gate; the
    sandboxes stay up for the test's changes."""
    warehouse = empty_warehouse(tmp_path)
    config = SandboxConfig(seed=SEED, scale=SCALE, rate_limit_per_s=0)
    acme_clock = Clock(fixed=START)
    acme = sandbox_factory(config=config, clock=acme_clock)
    beta = sandbox_factory(config=config, clock=Clock(fixed=START))
    for name, sb in (("acme", acme), ("beta", beta)):
        _sync(warehouse, name, sb)
    outcome = build_and_publish(WarehouseTarget.duckdb_file(warehouse), note="first", as_of=START.date())
    assert outcome.ok, outcome.lines()
    return warehouse, acme, acme_clock, beta


def test_a_change_in_one_portal_rebuilds_its_rows_only_and_equals_a_full_rebuild(two_portals, tmp_path):
    warehouse, acme, acme_clock, beta = two_portals
    target = WarehouseTarget.duckdb_file(warehouse)
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        tables = _portal_tables(conn)
        beta_before = {table: _portal_rows(conn, table, "beta") for table in tables}
        acme_before = {table: _portal_rows(conn, table, "acme") for table in tables}
    assert "marts.receivables" in tables and len(tables) >= 10, tables  # the comparison covers the marts
    paid = sorted(open_invoices(acme))[-3:]
    assert paid, "no open invoice to pay: the change would prove nothing"
    pay_some(acme, paid)
    acme_clock.advance(timedelta(minutes=1))  # past the windows' lag: the payments are synced
    _sync(warehouse, "acme", acme)

    outcome = build_and_publish(target, note="hints acme", as_of=START.date(), select=downstream_models(CHANGED),
                                portals=["acme"])

    assert outcome.ok and outcome.published, outcome.lines()
    assert outcome.portals == ["acme"]  # the partitioned path ran, not a build of every portal
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        for table in tables:  # beta's rows: the same values
            assert _portal_rows(conn, table, "beta") == beta_before[table], table
        changed = [t for t in tables if _portal_rows(conn, t, "acme") != acme_before[t]]
        assert "marts.receivables" in changed  # acme's figures moved with its payments
        receivables = dict(conn.execute(
            "select invoice_id, open_amount from marts.receivables where portal_id = 'acme'").fetchall())
        assert receivables == open_invoices(acme)  # the paid invoices left acme's receivables (the API's truth)
        assert not set(paid) & set(receivables)
        assert compare_marts(conn, acme, portal_id="acme").mismatches == []
        assert compare_marts(conn, beta, portal_id="beta").mismatches == []
        partitioned = {table: _rows(conn, table) for table in tables}
    full = tmp_path / "full.duckdb"
    shutil.copyfile(warehouse, full)
    with duckdb.connect(str(full)) as conn:
        build_models(conn, as_of=START.date())  # every model, every portal: the build of every other run
        for table in tables:
            assert _rows(conn, table) == partitioned[table], table
    with duckdb.connect(str(default_snapshot_path(warehouse)), read_only=True) as reader:
        for table in tables:  # and readers see it
            assert _rows(reader, table) == partitioned[table], table


def test_a_failing_check_in_the_changed_portal_publishes_nothing(two_portals):
    warehouse, _, _, _ = two_portals
    target = WarehouseTarget.duckdb_file(warehouse)
    snapshot = default_snapshot_path(warehouse)
    published = snapshot.read_bytes()
    with duckdb.connect(str(warehouse)) as conn:
        marts_before = _rows(conn, "marts.receivables")
        # an acme document held twice (a merge gone wrong): the blocking check ids_unique fails on acme's rows
        conn.execute("insert into invoicing_raw.documents select * replace ('dup-' || _dlt_id as _dlt_id) "
                     "from invoicing_raw.documents where portal_id = 'acme' limit 1")

    outcome = build_and_publish(target, note="hints acme", as_of=START.date(), select=downstream_models(CHANGED),
                                portals=["acme"])

    assert outcome.failures and outcome.published is None, outcome.lines()
    assert outcome.portals == ["acme"]
    assert "ids_unique" in [failure.name for failure in outcome.failures], outcome.lines()
    assert snapshot.read_bytes() == published  # readers keep the last good copy
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        assert _rows(conn, "marts.receivables") == marts_before  # the build rolled back
