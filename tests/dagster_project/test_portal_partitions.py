"""One partition per portal: `default` alone without a portals file, one per portal of the file; the schedules
launch one run per portal; a run syncs its partition's portal only, and a portal that fails (bad credentials)
fails its own run while another portal's run succeeds, exact against its sandbox."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from dagster import AssetKey, DagsterInstance, build_schedule_context

from assets.resources import InvoicingApiResource, WarehouseResource
from dagster_project.definitions import build_definitions
from harness.warehouse_truth import mismatches
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.server import SandboxServer

RAW = AssetKey(["invoicing_raw", "customers"])
MART = AssetKey(["marts", "receivables"])


def _resources(warehouse: str, sandbox=None) -> dict:
    return {
        "invoicing_api": InvoicingApiResource(base_url=sandbox.base_url if sandbox else "http://127.0.0.1:9/api/v2",
                                              client_id=sandbox.client_id if sandbox else "unused",
                                              client_secret=sandbox.client_secret if sandbox else "unused",
                                              rate_limit_per_s=0),
        "warehouse": WarehouseResource(path=warehouse),
    }


@pytest.fixture
def no_portals_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no portals.toml here
    monkeypatch.delenv("INVOICING_PORTALS_PATH", raising=False)


def test_without_a_portals_file_the_raw_tables_have_the_one_partition_default(tmp_path, no_portals_file):
    graph = build_definitions(_resources(str(tmp_path / "w.duckdb"))).resolve_asset_graph()
    assert graph.get(RAW).partitions_def.get_partition_keys() == ["default"]
    assert graph.get(MART).partitions_def is None  # the models build every portal's rows in one go


def test_one_partition_per_portal_and_one_scheduled_run_per_portal(tmp_path, no_portals_file, monkeypatch):
    path = tmp_path / "portals.toml"
    path.write_text('[portals.acme]\nbase_url = "http://127.0.0.1:9/api/v2"\n\n'
                    '[portals.beta]\nbase_url = "http://127.0.0.1:9/api/v2"\n', encoding="utf-8")
    monkeypatch.setenv("INVOICING_PORTALS_PATH", str(path))
    defs = build_definitions(_resources(str(tmp_path / "w.duckdb")))
    assert defs.resolve_asset_graph().get(RAW).partitions_def.get_partition_keys() == ["acme", "beta"]
    tick = datetime(2026, 11, 24, 15, 0, tzinfo=UTC)
    for name in ("sync_schedule", "reconcile_schedule"):
        schedule = defs.resolve_schedule_def(name)
        with DagsterInstance.ephemeral() as instance:
            data = schedule.evaluate_tick(build_schedule_context(instance=instance, scheduled_execution_time=tick,
                                                                   repository_def=defs.get_repository_def()))
        assert sorted(r.partition_key for r in data.run_requests) == ["acme", "beta"], name
        assert len({r.run_key for r in data.run_requests}) == 2


def test_a_failing_portal_fails_its_own_run_and_the_other_portal_syncs_exactly(tmp_path, no_portals_file,
                                                                               monkeypatch):
    config = SandboxConfig(seed=4, scale=60, rate_limit_per_s=0)
    with SandboxServer(config) as acme, SandboxServer(config) as beta:
        path = tmp_path / "portals.toml"
        path.write_text(f'[portals.acme]\nbase_url = "{acme.base_url}"\nrate_limit = 0\n\n'
                        f'[portals.beta]\nbase_url = "{beta.base_url}"\nrate_limit = 0\n', encoding="utf-8")
        monkeypatch.setenv("INVOICING_PORTALS_PATH", str(path))
        monkeypatch.setenv("SOURCES__INVOICING__PORTALS__ACME__CLIENT_ID", acme.client_id)
        monkeypatch.setenv("SOURCES__INVOICING__PORTALS__ACME__CLIENT_SECRET", acme.client_secret)
        monkeypatch.setenv("SOURCES__INVOICING__PORTALS__BETA__CLIENT_ID", beta.client_id)
        monkeypatch.setenv("SOURCES__INVOICING__PORTALS__BETA__CLIENT_SECRET", "wrong-beta-secret")
        warehouse = str(tmp_path / "warehouse.duckdb")
        defs = build_definitions(_resources(warehouse))
        job = defs.resolve_job_def("sync_job")
        with DagsterInstance.ephemeral() as instance:
            failed = job.execute_in_process(instance=instance, raise_on_error=False, partition_key="beta")
            succeeded = job.execute_in_process(instance=instance, raise_on_error=False, partition_key="acme")
            logged = " ".join(str(r.user_message) for r in instance.all_logs(failed.run_id))
        assert not failed.success
        (failure,) = [e for e in failed.all_events if e.is_step_failure]
        message = failure.step_failure_data.error.message
        assert "HTTP 401" in message and "SOURCES__INVOICING__PORTALS__BETA__CLIENT_SECRET" in message
        assert "wrong-beta-secret" not in logged
        assert succeeded.success, [e.message for e in succeeded.all_events if e.is_failure]
        assert mismatches(warehouse, acme.portal, portal_id="acme") == []
        checks = {(e.asset_key.to_user_string(), e.check_name): e.passed
                  for e in succeeded.get_asset_check_evaluations()}
        assert checks[("marts/receivables_by_customer", "total_open_matches_due_amount")] is True
        assert checks[("marts/receivables", "keys_unique")] is True
        materialized = {e.asset_key for e in succeeded.get_asset_materialization_events()}
        assert {RAW, MART} <= materialized
