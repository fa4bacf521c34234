"""The whole asset graph against a real sandbox over HTTP on 127.0.0.1, into a temporary DuckDB.

The truth is the sandbox's own records (`portal.snapshot`): after each run every customer's open
total in marts.receivables_by_customer must equal the API's dueAmount. The tests share one sandbox
and one warehouse (a sync is the expensive part) and run in file order; the last one corrupts the
warehouse on purpose.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import httpx
import pytest
from dagster import (
    AssetKey,
    AssetSelection,
    AssetSpec,
    DagsterEventType,
    DagsterInstance,
    Definitions,
    build_run_status_sensor_context,
    define_asset_job,
)
from dagster_expectations import SPEC_RAW_TABLES, sql_model_paths

from assets.checks import gate_steps
from assets.resources import InvoicingApiResource, WarehouseResource
from dagster_project.definitions import build_definitions
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.runs.due_amount_check import DUE_AMOUNT_CHECK
from pipelines.invoicing.portals import Portal
from tests.support.fixture_factory import empty_warehouse

SCALE = 300
# The sandbox's rate limit is off and the client does not pace (0): pacing is the extraction's own tests'
# subject; here it would only make the runs slower.
FAST_RATE_PER_S = 0.0


class Harness:
    """A sandbox, a warehouse, the project's definitions bound to both, and one Dagster instance."""

    def __init__(self, sandbox: SandboxServer, warehouse_path: str, instance: DagsterInstance) -> None:
        self.sandbox = sandbox
        self.warehouse_path = warehouse_path
        self.instance = instance
        self.resources = {
            "invoicing_api": InvoicingApiResource(
                base_url=sandbox.base_url,
                client_id=sandbox.client_id,
                client_secret=sandbox.client_secret,
                rate_limit_per_s=FAST_RATE_PER_S,
            ),
            "warehouse": WarehouseResource(path=warehouse_path),
        }
        self.defs = build_definitions(self.resources, {"default": Portal("default")})

    def run(self, job: str = "sync_job", selection: list[AssetKey] | None = None):
        return self.defs.resolve_job_def(job).execute_in_process(
            instance=self.instance, raise_on_error=False, asset_selection=selection, partition_key="default"
        )

    def query(self, sql: str, params: list | None = None) -> list[tuple]:
        with duckdb.connect(self.warehouse_path, read_only=True) as connection:
            return connection.execute(sql, params or []).fetchall()

    def open_totals(self) -> dict[str, Decimal]:
        return dict(self.query("select customer_id, total_open from marts.receivables_by_customer"))

    def comparable_customers(self) -> set[str]:
        """The sandbox's customers (not deleted, dueAmount served) none of whose documents, payments or usages
        changed after the customer itself: those whose dueAmount describes the same moment as their records."""
        newest: dict[str, str] = {}
        for resource in ("documents", "transactions", "transaction_usages"):
            for record in self.sandbox.portal.snapshot(resource):
                if record.get("customerId"):
                    newest[record["customerId"]] = max(newest.get(record["customerId"], ""), record["lastUpdate"])
        return {c["id"] for c in self.sandbox.portal.snapshot("customers")
                if not c.get("deleted") and "dueAmount" in c and newest.get(c["id"], "") <= c["lastUpdate"]}

    def api_due_amounts(self) -> dict[str, Decimal]:
        return {c["id"]: Decimal(str(c["dueAmount"])) for c in self.sandbox.portal.snapshot("customers")}

    def pay_open_invoice_of_largest_debtor(self) -> tuple[str, str]:
        """Pays one open invoice of the largest debtor in full, through the API; (customer, invoice)."""
        due = self.api_due_amounts()
        customer_id = max(due, key=due.get)
        invoice = next(
            d
            for d in self.sandbox.portal.snapshot("documents")
            if d["customerId"] == customer_id
            and d["type"] == "INVOICE"
            and d["status"] == "VALIDATED"
            and d["subtype"] in (None, "DEPOSIT")
            and Decimal(str(d["remaining"])) > 0
        )
        response = httpx.post(
            f"{self.sandbox.base_url}/documents/{invoice['id']}/payment",
            json={"method": "TRANSFER"},
            headers={"Authorization": f"Bearer {self.sandbox.token('read write')}"},
            timeout=30,
        )
        response.raise_for_status()
        # A sync reads up to "server time at start - a few seconds" (frozen windows): move the
        # sandbox's clock past that lag instead of sleeping.
        self.sandbox.clock.advance(timedelta(seconds=10))
        return customer_id, invoice["id"]


def assert_marts_match_api(harness: Harness) -> None:
    open_totals = harness.open_totals()
    due = harness.api_due_amounts()
    mismatches = {
        customer_id: (amount, open_totals.get(customer_id, Decimal(0)))
        for customer_id, amount in due.items()
        if amount != open_totals.get(customer_id, Decimal(0))
    }
    assert mismatches == {}
    assert sum(due.values()) > 0


@pytest.fixture(scope="module")
def harness(tmp_path_factory, module_sandbox_factory):
    warehouse = empty_warehouse(tmp_path_factory.mktemp("warehouse"))
    sandbox = module_sandbox_factory(seed=7, scale=SCALE, rate_limit_per_s=0, real_date=True)
    with DagsterInstance.ephemeral() as instance:
        yield Harness(sandbox, str(warehouse), instance)


@pytest.fixture(scope="module")
def first_run(harness):
    return harness.run()


def test_full_graph_materializes_every_asset_and_passes_every_check(harness, first_run):
    assert first_run.success
    materialized = {event.asset_key for event in first_run.get_asset_materialization_events()}
    assert materialized == {AssetKey(["invoicing_raw", t]) for t in SPEC_RAW_TABLES} | {
        AssetKey(list(p)) for p in sql_model_paths()
    }
    evaluations = first_run.get_asset_check_evaluations()
    assert [(e.asset_key, e.check_name) for e in evaluations if not e.passed] == []
    # the due-amount check compared the customers whose stored dueAmount is as new as their records, worked out
    # here from the sandbox's own records
    due_check = next(e for e in evaluations if e.check_name == "total_open_matches_due_amount")
    comparable = harness.comparable_customers()
    assert len(comparable) > 0
    assert due_check.metadata["customers_compared"].value == len(comparable)
    for mart in ("receivables", "receivables_by_customer", "overdue_customers", "supplier_payables"):
        assert harness.query(f"select count(*) from marts.{mart}")[0][0] > 0, mart
    # ingestion metadata: rows loaded and the schema of the raw table, as DuckDB holds it
    documents = next(
        e
        for e in first_run.get_asset_materialization_events()
        if e.asset_key == AssetKey(["invoicing_raw", "documents"])
    )
    metadata = documents.materialization.metadata
    assert metadata["rows_loaded"].value == len(harness.sandbox.portal.snapshot("documents"))
    columns = {column.name for column in metadata["dagster/column_schema"].value.columns}
    assert {"id", "customer_id", "amount_vat_net", "last_update", "_deleted_at"} <= columns
    assert metadata["sync_notes"].value == []  # read exactly as planned
    # the sync's note about /webhooks (it needs the write scope) reaches the table's metadata, not degraded
    webhooks = next(
        e
        for e in first_run.get_asset_materialization_events()
        if e.asset_key == AssetKey(["invoicing_raw", "webhooks"])
    )
    (note,) = webhooks.materialization.metadata["sync_notes"].value
    assert note["text"].startswith("webhooks: not read") and note["degraded"] is False
    assert_marts_match_api(harness)


def test_second_run_after_a_payment_updates_the_marts(harness, first_run):
    assert first_run.success
    customer_id, _ = harness.pay_open_invoice_of_largest_debtor()
    before = harness.open_totals()[customer_id]
    after_api = harness.api_due_amounts()[customer_id]
    assert after_api < before  # the payment moved the sandbox's own figure
    result = harness.run()
    assert result.success
    assert harness.open_totals().get(customer_id, Decimal(0)) == after_api
    assert_marts_match_api(harness)


def test_a_subset_run_syncs_only_the_selected_endpoint(harness, first_run):
    assert first_run.success
    customer_id, invoice_id = harness.pay_open_invoice_of_largest_debtor()
    result = harness.run(selection=[AssetKey(["invoicing_raw", "customers"])])
    assert result.success
    assert {e.asset_key for e in result.get_asset_materialization_events()} == {
        AssetKey(["invoicing_raw", "customers"])
    }
    api_due = harness.api_due_amounts()[customer_id]
    assert harness.query("select due_amount from invoicing_raw.customers where id = ?", [customer_id]) == [
        (api_due,)
    ]
    # documents were not read: the paid invoice still shows its old remaining amount in the warehouse
    (remaining,) = harness.query("select remaining from invoicing_raw.documents where id = ?", [invoice_id])[
        0
    ]
    assert remaining > 0


def test_the_reconcile_job_marks_an_item_deleted_upstream(harness, first_run):
    assert first_run.success
    item_id = harness.sandbox.portal.snapshot("items")[0]["id"]
    response = httpx.delete(
        f"{harness.sandbox.base_url}/items/{item_id}",
        headers={"Authorization": f"Bearer {harness.sandbox.token('read write')}"},
        timeout=30,
    )
    response.raise_for_status()
    harness.sandbox.clock.advance(timedelta(seconds=10))
    assert harness.run().success  # an incremental sync cannot see a hard delete
    query = "select _deleted_at is not null from invoicing_raw.items where id = ?"
    assert harness.query(query, [item_id]) == [(False,)]
    assert harness.run("reconcile_job").success  # the job's config turns the full id scan on
    assert harness.query(query, [item_id]) == [(True,)]


def test_the_sensor_publishes_a_readers_snapshot(harness, first_run):
    assert first_run.success
    sensor = next(s for s in harness.defs.sensors if s.name == "publish_snapshot_after_run")
    (success_record,) = harness.instance.all_logs(first_run.run_id, of_type=DagsterEventType.RUN_SUCCESS)
    context = build_run_status_sensor_context(
        sensor_name=sensor.name,
        dagster_event=success_record.dagster_event,
        dagster_instance=harness.instance,
        dagster_run=first_run.dagster_run,
        resources={"warehouse": WarehouseResource(path=harness.warehouse_path)},
    )
    sensor(context)
    snapshot = default_snapshot_path(Path(harness.warehouse_path))
    with duckdb.connect(str(snapshot), read_only=True) as connection:
        (rows,) = connection.execute("select count(*) from marts.receivables_by_customer").fetchone()
    assert rows == len(harness.open_totals())


def test_the_due_amount_check_flags_a_mart_that_disagrees_with_the_stored_due_amount(harness, first_run):
    assert first_run.success
    customer_id = min(set(harness.open_totals()) & harness.comparable_customers())
    with duckdb.connect(harness.warehouse_path) as connection:
        connection.execute(
            "update marts.receivables_by_customer set total_open = total_open + 0.01 where customer_id = ?",
            [customer_id],
        )
    due_check = gate_steps("due_amounts", [DUE_AMOUNT_CHECK])
    job = define_asset_job(
        "api_check_only", selection=AssetSelection.checks(*due_check)
    )
    defs = Definitions(
        assets=[AssetSpec(AssetKey(["marts", "receivables_by_customer"]))],
        asset_checks=due_check,
        jobs=[job],
        resources=harness.resources,
    )
    result = defs.resolve_job_def("api_check_only").execute_in_process(instance=harness.instance)
    (evaluation,) = result.get_asset_check_evaluations()
    assert evaluation.passed is False
    assert evaluation.metadata["mismatches"].value == 1
    assert customer_id in str(evaluation.metadata["sample"].value)


def test_bad_credentials_fail_once_with_an_actionable_message(harness, tmp_path):
    secret = "wrong-secret-7f3a9c"
    defs = build_definitions(
        {
            "invoicing_api": InvoicingApiResource(
                base_url=harness.sandbox.base_url, client_id=harness.sandbox.client_id, client_secret=secret
            ),
            "warehouse": WarehouseResource(path=str(tmp_path / "other.duckdb")),
        },
        {"default": Portal("default")},
    )
    result = defs.resolve_job_def("sync_job").execute_in_process(
        instance=harness.instance,
        raise_on_error=False,
        partition_key="default",
        asset_selection=[AssetKey(["invoicing_raw", "customers"])],
    )
    assert not result.success
    failures = [e for e in result.all_events if e.is_step_failure]
    assert len(failures) == 1 and failures[0].step_key == "invoicing_raw"
    message = failures[0].step_failure_data.error.message
    assert "SOURCES__INVOICING__CLIENT_SECRET" in message  # says what to fix
    assert not any(e.event_type_value == "STEP_UP_FOR_RETRY" for e in result.all_events)  # not retried
    logged = " ".join(str(record.user_message) for record in harness.instance.all_logs(result.run_id))
    assert secret not in logged and secret not in message


def test_a_duplicate_raw_id_blocks_the_models(harness, first_run):
    assert first_run.success
    with duckdb.connect(harness.warehouse_path) as connection:
        connection.execute(
            "insert into invoicing_raw.customers select * from invoicing_raw.customers order by id limit 1"
        )
    result = harness.run()
    assert not result.success
    evaluations = {
        (e.asset_key.to_user_string(), e.check_name): e.passed for e in result.get_asset_check_evaluations()
    }
    assert evaluations[("invoicing_raw/customers", "ids_unique")] is False
    materialized = {e.asset_key for e in result.get_asset_materialization_events()}
    customers = AssetKey(["invoicing_raw", "customers"])
    downstream = AssetSelection.assets(customers).downstream().resolve(harness.defs.resolve_asset_graph()) - {
        customers
    }
    assert AssetKey(["marts", "receivables_by_customer"]) in downstream
    assert materialized & downstream == set()  # nothing built on the duplicated customer
    assert customers in materialized  # the sync itself ran; the check judged what it loaded
    # marts that do not read customers are not held back
    assert AssetKey(["marts", "supplier_payables"]) in materialized


def test_after_a_run_held_by_a_blocking_check_the_sensors_publish_nothing(harness, first_run):
    """Runs after the duplicate test (file order): the warehouse still holds the duplicated customer."""
    from invoicing_warehouse.dashboard.gate_banner import banner_lines

    snapshot = default_snapshot_path(Path(harness.warehouse_path))
    published = snapshot.read_bytes()
    result = harness.run()
    assert not result.success
    (failure_record,) = harness.instance.all_logs(result.run_id, of_type=DagsterEventType.RUN_FAILURE)
    resources = {"warehouse": WarehouseResource(path=harness.warehouse_path)}
    for name, record in (("hold_snapshot_after_failed_run", failure_record),
                         # a success sensor fired anyway (a run that passed, on a warehouse changed since)
                         ("publish_snapshot_after_run", failure_record)):
        sensor = next(s for s in harness.defs.sensors if s.name == name)
        sensor(build_run_status_sensor_context(sensor_name=sensor.name, dagster_event=record.dagster_event,
                                               dagster_instance=harness.instance,
                                               dagster_run=result.dagster_run, resources=resources))
        assert snapshot.read_bytes() == published  # readers keep the last good copy
    banner = banner_lines(WarehouseResource(path=harness.warehouse_path).target())
    assert any("ids_unique on invoicing_raw.customers" in line and "marts.receivables_by_customer" in line
               for line in banner), banner
