"""A list fails alone on the Dagster path too (issue 40, point 3), as the CLI's `sync` (tests/reliability/
test_list_fails_alone.py): the sync job succeeds, the failed list's raw table is not materialized and the assets
built on it are skipped, every other raw table and mart is materialized, the gate holds only the marts built on
the failed list, and the publication sensor publishes the rest; the next run heals it.

Truth: a real sandbox over HTTP on 127.0.0.1 failing one list (switch `failing_lists`), the SQL files on disk
(which marts read the supplier documents), and the readers' copy the sensor publishes.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import duckdb
from dagster import (
    AssetKey,
    AssetSelection,
    DagsterEventType,
    DagsterInstance,
    Definitions,
    build_run_status_sensor_context,
    define_asset_job,
)

from assets.resources import InvoicingApiResource, WarehouseResource
from dagster_project.definitions import build_definitions
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import held_marts
from invoicing_warehouse.runs.gate_state import load
from pipelines.invoicing.portals import Portal

FAILED = {AssetKey(["invoicing_raw", "supplier_documents"]), AssetKey(["invoicing_raw", "supplier_document_events"])}
# read from the models' SQL (sql/marts): built on the supplier documents, or not at all
PAYABLES = {"marts.supplier_payables", "marts.payables_by_supplier", "marts.payables_schedule", "marts.cash_outlook"}
RECEIVABLES = {"marts.receivables", "marts.receivables_by_customer", "marts.overdue_customers", "marts.dso"}
WATCHED = ("marts.receivables", "marts.supplier_payables")


def _publish_after(defs, instance: DagsterInstance, result, warehouse: Path) -> None:
    """Runs the publication sensor on the run's success event, as the daemon would."""
    sensor = next(s for s in defs.sensors if s.name == "publish_snapshot_after_run")
    (success,) = instance.all_logs(result.run_id, of_type=DagsterEventType.RUN_SUCCESS)
    sensor(build_run_status_sensor_context(
        sensor_name=sensor.name, dagster_event=success.dagster_event, dagster_instance=instance,
        dagster_run=result.dagster_run, resources={"warehouse": WarehouseResource(path=str(warehouse))}))


def _published_customers(warehouse: Path) -> set[str]:
    with duckdb.connect(str(default_snapshot_path(warehouse)), read_only=True) as connection:
        return {row[0] for row in connection.execute("select name from invoicing_raw.customers").fetchall()}


def test_a_failed_list_is_skipped_its_marts_held_and_the_rest_published(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    with (SandboxServer(SandboxConfig(seed=23, scale=40, rate_limit_per_s=0)) as sandbox,
          DagsterInstance.ephemeral() as instance):
        api = InvoicingApiResource(base_url=sandbox.base_url, client_id=sandbox.client_id,
                                   client_secret=sandbox.client_secret, rate_limit_per_s=0.0)
        defs = build_definitions({"invoicing_api": api, "warehouse": WarehouseResource(path=str(warehouse))},
                                 {"default": Portal("default")})
        # the sync job's graph cut to two marts and what they are built on: a whole graph's run costs 20 s
        selection = AssetSelection.assets(*(AssetKey(mart.split(".")) for mart in WATCHED)).upstream()
        job = Definitions.merge(defs, Definitions(jobs=[define_asset_job("two_marts_job", selection)])
                                ).resolve_job_def("two_marts_job")

        def run():
            sandbox.clock.advance(timedelta(seconds=10))  # past the windows' lag
            return job.execute_in_process(instance=instance, raise_on_error=False, partition_key="default")

        # the first sync, with one list failing all along
        sandbox.portal.create("customers", {"name": "Partielle Dagster SARL"})
        sandbox.config.failing_lists = (("/supplier-documents", 404),)
        partial = run()
        assert partial.success  # partial, not failed: the sensor publishes what is whole
        materialized = {event.asset_key for event in partial.get_asset_materialization_events()}
        assert not materialized & FAILED
        assert AssetKey(["invoicing_raw", "customers"]) in materialized
        built = {".".join(key.path) for key in materialized}
        assert "marts.receivables" in built and "marts.supplier_payables" not in built, built
        held = set(held_marts(load(WarehouseTarget.duckdb_file(warehouse))))  # what the gate will hold
        assert PAYABLES <= held and not held & RECEIVABLES, held
        _publish_after(defs, instance, partial, warehouse)
        assert "Partielle Dagster SARL" in _published_customers(warehouse)  # the rest reached the readers
        assert PAYABLES <= set(load(WarehouseTarget.duckdb_file(warehouse)).held_marts)

        sandbox.config.failing_lists = ()
        healed = run()
        assert healed.success
        assert FAILED <= {event.asset_key for event in healed.get_asset_materialization_events()}
        _publish_after(defs, instance, healed, warehouse)
        state = load(WarehouseTarget.duckdb_file(warehouse))
        assert state.held_marts == {} and state.degraded_reads == {}

