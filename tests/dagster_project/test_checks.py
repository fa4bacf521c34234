"""The asset checks against hand-made warehouses: each one fails on the defect it exists for and
passes on clean data. Checks run through Dagster (a job executed in process), not called directly."""

from __future__ import annotations

import time
from datetime import timedelta

import duckdb
import pytest
from dagster import (
    AssetCheckSeverity,
    AssetKey,
    AssetMaterialization,
    AssetSelection,
    AssetSpec,
    DagsterInstance,
    Definitions,
    define_asset_job,
)
from dagster_expectations import SPEC_RAW_TABLES

from assets.checks import model_checks, raw_checks, raw_sync_read_exactly
from assets.resources import WarehouseResource
from invoicing_warehouse.engine.sql_runner import discover_models


def _warehouse(tmp_path, statements: list[str]) -> WarehouseResource:
    path = tmp_path / "warehouse.duckdb"
    connection = duckdb.connect(str(path))
    for statement in statements:
        connection.execute(statement)
    connection.close()
    return WarehouseResource(path=str(path))


def _run_checks(
    warehouse: WarehouseResource, checks: list, targets: list[AssetKey]
) -> dict[tuple[str, str], bool]:
    """Runs only `checks` in a job; returns {(asset key, check name): passed}."""
    job = define_asset_job("checks_only", selection=AssetSelection.checks(*checks))
    defs = Definitions(
        assets=[AssetSpec(key) for key in targets],
        asset_checks=checks,
        jobs=[job],
        resources={"warehouse": warehouse},
    )
    result = defs.resolve_job_def("checks_only").execute_in_process(raise_on_error=False)
    return {
        (evaluation.asset_key.to_user_string(), evaluation.check_name): evaluation.passed
        for evaluation in result.get_asset_check_evaluations()
    }


RAW_KEYS = [AssetKey(["invoicing_raw", table]) for table in SPEC_RAW_TABLES]
raw_ids_unique = [step for step in raw_checks() if {k.name for k in step.check_keys} == {"ids_unique"}]
assert len(raw_ids_unique) == len(SPEC_RAW_TABLES)  # one step per table
documents_customers_exist, usages_invoices_exist = (
    next(step for step in raw_checks() if {k.name for k in step.check_keys} == {name})
    for name in ("customers_exist", "invoices_exist"))


def test_ids_unique_fails_on_a_duplicate_id_and_only_there(tmp_path):
    warehouse = _warehouse(
        tmp_path,
        [
            "create schema invoicing_raw",
            "create table invoicing_raw.customers (portal_id varchar, id varchar, name varchar)",
            "insert into invoicing_raw.customers values ('default', 'c1', 'Ana'), ('default', 'c2', 'Bo')",
            # the same id in another portal is another record
            "insert into invoicing_raw.customers values ('acme', 'c2', 'Bo of Acme')",
            "create table invoicing_raw.items (portal_id varchar, id varchar, name varchar)",
            "insert into invoicing_raw.items values ('default', 'i1', 'Tea'), ('default', 'i2', 'Cake')",
        ],
    )
    clean = _run_checks(warehouse, raw_ids_unique, RAW_KEYS)
    assert clean[("invoicing_raw/customers", "ids_unique")] is True
    assert len(clean) == len(SPEC_RAW_TABLES)  # one check per raw table, absent tables pass

    with duckdb.connect(warehouse.path) as connection:
        connection.execute("insert into invoicing_raw.customers values ('default', 'c2', 'Bo again')")
    results = _run_checks(warehouse, raw_ids_unique, RAW_KEYS)
    assert results[("invoicing_raw/customers", "ids_unique")] is False
    assert results[("invoicing_raw/items", "ids_unique")] is True


def test_ids_unique_fails_on_a_null_id(tmp_path):
    warehouse = _warehouse(
        tmp_path,
        [
            "create schema invoicing_raw",
            "create table invoicing_raw.webhooks (portal_id varchar, id varchar)",
            "insert into invoicing_raw.webhooks values ('default', 'w1'), ('default', null)",
        ],
    )
    assert _run_checks(warehouse, raw_ids_unique, RAW_KEYS)[("invoicing_raw/webhooks", "ids_unique")] is False


@pytest.mark.parametrize("dangling", [False, True])
def test_documents_customers_exist(tmp_path, dangling):
    customer_of_d2 = "c9" if dangling else "c1"
    warehouse = _warehouse(
        tmp_path,
        [
            "create schema invoicing_raw",
            "create table invoicing_raw.customers (portal_id varchar, id varchar)",
            "insert into invoicing_raw.customers values ('p', 'c1'), ('q', 'c9')",  # c9 is another portal's
            ("create table invoicing_raw.documents (portal_id varchar, id varchar, customer_id varchar, "
             "amount_vat_net decimal(18, 2), _deleted_at timestamptz)"),
            (f"insert into invoicing_raw.documents values ('p', 'd1', 'c1', 10, null), "
             f"('p', 'd2', '{customer_of_d2}', 120.5, null)"),
            ("create table invoicing_raw.transaction_usages (portal_id varchar, id varchar, invoice_id varchar, "
             "amount decimal(18, 2), _deleted_at timestamptz)"),
            "insert into invoicing_raw.transaction_usages values ('p', 'u1', 'd1', 10, null)",
        ],
    )
    results = _run_checks(warehouse, [documents_customers_exist, usages_invoices_exist], RAW_KEYS)
    assert results[("invoicing_raw/documents", "customers_exist")] is (not dangling)
    # a flag, not a hold (issue 40: the contract does not promise every parent is listed): the usages check,
    # which reads documents too, still runs when the documents' check fails
    assert results[("invoicing_raw/transaction_usages", "invoices_exist")] is True


def test_usage_of_an_unknown_invoice_fails(tmp_path):
    warehouse = _warehouse(
        tmp_path,
        [
            "create schema invoicing_raw",
            "create table invoicing_raw.documents (portal_id varchar, id varchar, customer_id varchar)",
            "insert into invoicing_raw.documents values ('default', 'd1', 'c1')",
            ("create table invoicing_raw.transaction_usages (portal_id varchar, id varchar, invoice_id varchar, "
             "amount decimal(18, 2), _deleted_at timestamptz)"),
            ("insert into invoicing_raw.transaction_usages values ('default', 'u1', 'd1', 5, null), "
             "('default', 'u2', 'd7', 7, null)"),
        ],
    )
    results = _run_checks(warehouse, [usages_invoices_exist], RAW_KEYS)
    assert results[("invoicing_raw/transaction_usages", "invoices_exist")] is False


def test_mart_keys_unique_uses_each_marts_grain(tmp_path):
    # receivables is keyed by (portal_id, invoice_id) although as_of_date comes first: one invoice id in two
    # portals is two rows; the schedule by (portal_id, week_start) (each mart's front matter). The schedule's
    # second row also has no as_of_date, which its front matter's not_null test catches.
    warehouse = _warehouse(
        tmp_path,
        [
            "create schema marts",
            "create table marts.receivables (as_of_date date, invoice_id varchar, open_amount decimal(18,2), "
            "portal_id varchar)",
            "insert into marts.receivables values ('2026-01-01', 'd1', 10, 'p'), ('2026-01-01', 'd2', 5, 'p'), "
            "('2026-01-01', 'd1', 7, 'q')",
            "create table marts.payables_schedule (as_of_date date, week_start date, portal_id varchar)",
            "insert into marts.payables_schedule values ('2026-01-01', '2025-12-29', 'p')",
            "insert into marts.payables_schedule values (null, '2025-12-29', 'p')",
        ],
    )
    keys = [AssetKey(["marts", "receivables"]), AssetKey(["marts", "payables_schedule"])]
    models = [m for m in discover_models() if m.key in ("marts.receivables", "marts.payables_schedule")]
    results = _run_checks(warehouse, model_checks(models), keys)
    assert results == {
        ("marts/receivables", "keys_unique"): True,
        ("marts/receivables", "not_null"): True,
        ("marts/payables_schedule", "keys_unique"): False,
        ("marts/payables_schedule", "not_null"): False,
    }


def test_the_raw_tables_freshness_policy_fails_when_the_last_sync_is_older_than_the_window(monkeypatch):
    """Each raw table carries Dagster's time-window freshness policy (assets/ingestion.py); Dagster's own evaluator
    (the one its freshness daemon runs) says PASS after a sync, UNKNOWN for a table never synced, FAIL once the
    window has passed (Dagster's smallest window is a minute: its clock is moved on instead of waiting)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from dagster._core.definitions import freshness_evaluator
    from dagster._core.definitions.freshness import FreshnessState
    from dagster._core.definitions.freshness_evaluator import TimeWindowFreshnessPolicyEvaluator
    from dagster._core.loader import LoadingContextForTest

    from assets.ingestion import build_ingestion_assets
    from pipelines.invoicing.portals import Portal

    ingestion = build_ingestion_assets({"default": Portal("default")}, stale_after=timedelta(minutes=1))
    defs = Definitions(assets=list(ingestion.specs))  # the raw tables' specs, as the ingestion declares them
    graph = defs.resolve_asset_graph()
    customers, documents = (AssetKey(["invoicing_raw", table]) for table in ("customers", "documents"))
    assert graph.get(customers).freshness_policy.fail_window.to_timedelta() == timedelta(minutes=1)
    with DagsterInstance.ephemeral() as instance:
        instance.report_runless_asset_event(AssetMaterialization(customers))

        def state(key: AssetKey) -> FreshnessState:
            evaluation = TimeWindowFreshnessPolicyEvaluator().evaluate_freshness(LoadingContextForTest(instance),
                                                                                  graph.get(key))
            # a loop of its own, in a thread of its own: an earlier test of the worker may leave one running here
            with ThreadPoolExecutor(max_workers=1) as thread:
                return thread.submit(asyncio.run, evaluation).result(timeout=60)

        assert (state(customers), state(documents)) == (FreshnessState.PASS, FreshnessState.UNKNOWN)
        later = time.time() + 61
        monkeypatch.setattr(freshness_evaluator, "get_current_timestamp", lambda: later)
        assert state(customers) == FreshnessState.FAIL


def test_sync_read_exactly_warns_for_a_table_whose_last_sync_left_a_degraded_note():
    job = define_asset_job("sync_read_only", selection=AssetSelection.checks(raw_sync_read_exactly))
    defs = Definitions(
        assets=[AssetSpec(key) for key in RAW_KEYS], asset_checks=[raw_sync_read_exactly], jobs=[job],
        # the step reads no warehouse (a DuckDB file open there would block a writer); the resource is bound only
        resources={"warehouse": WarehouseResource(path="never-opened.duckdb")},
    )
    degraded = "webhooks: paging parameters refused; read as one answer of 3 records (may be incomplete)"
    with DagsterInstance.ephemeral() as instance:
        for table, notes in {
            "webhooks": [{"text": degraded, "degraded": True}],
            "suppliers": [{"text": "suppliers: window not honoured by the server, read in full",
                           "degraded": False}],
            "documents": [],
        }.items():
            instance.report_runless_asset_event(
                AssetMaterialization(AssetKey(["invoicing_raw", table]), metadata={"sync_notes": notes})
            )
        result = defs.resolve_job_def("sync_read_only").execute_in_process(instance=instance)
        assert result.success  # a warning never fails the run
        evaluations = {e.asset_key.path[-1]: e for e in result.get_asset_check_evaluations()}
    assert len(evaluations) == len(SPEC_RAW_TABLES)
    assert (evaluations["webhooks"].passed, evaluations["webhooks"].severity) == (False, AssetCheckSeverity.WARN)
    assert evaluations["webhooks"].description == degraded  # names what is unknown
    assert evaluations["suppliers"].passed  # slower, still exact
    assert evaluations["documents"].passed
    assert evaluations["customers"].passed  # never synced: nothing degraded (freshness says "never")


def test_a_run_wide_degraded_note_reaches_every_raw_tables_sync_notes():
    from assets.ingestion import table_notes
    from pipelines.invoicing.load.sync import SyncReport

    no_date = "run: no Date header; windows frozen from the local clock minus 60 s"
    report = SyncReport(notes=[no_date, "documents: read in full", "customers: 2 hidden"], degraded_notes=[no_date])
    assert table_notes(report, "documents") == [{"text": no_date, "degraded": True},
                                                {"text": "documents: read in full", "degraded": False}]
    assert [note["text"] for note in table_notes(report, "items")] == [no_date]
