"""The Dagster path: the sensor requests exactly one run of `apply_hints_job` for the pending hints of a
portal (the same run key while that set is pending, so it launches once), none while another writing run of
the warehouse waits in the queue, none while a hints run of the portal is running and runs stay for the hints
that follow, and the job applies them: the readers' copy then equals the sandbox's own
records. (Runs never overlap: the writer tag and the run queue's limit, tests/dagster_project/test_definitions.py.)"""

from __future__ import annotations

from dagster import DagsterInstance, DagsterRunStatus, build_sensor_context
from hint_support import dagster_resources, reader, scheduled_sync

from assets.writer_queue import WAREHOUSE_TAG
from dagster_project.definitions import build_definitions
from dagster_project.hint_sensor import PORTAL_TAG
from harness.hinted_changes import DELETIONS, HintedMutator
from harness.warehouse_truth import compare_raw_tables
from invoicing_warehouse.demo.hint_feed import ListenerFeed
from invoicing_warehouse.runs.linger import LINGER_ENV
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_path


def _tick(defs, instance, resources):
    sensor = next(s for s in defs.sensors if s.name == "apply_hints_when_pending")
    return sensor.evaluate_tick(build_sensor_context(instance=instance, resources=resources))


def test_the_sensor_requests_one_run_for_pending_hints_and_the_job_applies_them(sandbox, tmp_path, monkeypatch):
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(sandbox, warehouse)
    resources = dagster_resources(sandbox, warehouse)
    defs = build_definitions(resources, {"default": Portal("default")})
    with DagsterInstance.ephemeral() as instance:
        assert _tick(defs, instance, resources).run_requests == []
        feed = ListenerFeed(sandbox.portal, spool_path(warehouse)).start()
        try:
            HintedMutator(sandbox.portal, 0, seed=23, without=DELETIONS).steps(12)
        finally:
            feed.stop()
        with HintSpool(spool_path(warehouse)) as spool:
            newest = max(h.sequence for h in spool.pending())
        first, second = _tick(defs, instance, resources), _tick(defs, instance, resources)
        assert len(first.run_requests) == 1
        request = first.run_requests[0]
        assert request.run_key == f"hints:default:{newest}"
        assert [r.run_key for r in second.run_requests] == [request.run_key]  # one launch per hint set
        assert request.tags[WAREHOUSE_TAG] == warehouse

        job = defs.resolve_job_def("apply_hints_job")
        # a hints run of the portal is running: while runs stay for more hints, that run applies these
        working = instance.create_run_for_job(job, run_config=request.run_config, status=DagsterRunStatus.STARTED,
                                             tags={WAREHOUSE_TAG: warehouse, PORTAL_TAG: "default"})
        staying = _tick(defs, instance, resources)
        assert staying.run_requests == [] and "running hints run" in (staying.skip_message or "")
        monkeypatch.setenv(LINGER_ENV, "0")  # runs that do not stay: one set is queued behind the running one
        assert [r.run_key for r in _tick(defs, instance, resources).run_requests] == [request.run_key]
        instance.delete_run(working.run_id)  # (and the job below applies its set and ends: test_hint_linger.py)
        # another writer of the warehouse waits in the run queue: the sensor requests nothing more
        queued = instance.create_run_for_job(job, run_config=request.run_config, tags={WAREHOUSE_TAG: warehouse},
                                            status=DagsterRunStatus.NOT_STARTED)
        waiting = _tick(defs, instance, resources)
        assert waiting.run_requests == [] and queued.run_id in (waiting.skip_message or "")
        instance.report_run_failed(queued)

        result = job.execute_in_process(run_config=request.run_config, instance=instance, tags=request.tags,
                                        resources=resources)
        assert result.success
        materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
        assert "marts/receivables" in materialized or "marts/supplier_payables" in materialized
        assert _tick(defs, instance, resources).run_requests == []
    with HintSpool(spool_path(warehouse)) as spool:
        assert spool.pending_count() == 0
    with reader(warehouse) as connection:
        comparison = compare_raw_tables(connection, sandbox.portal)
    assert comparison.mismatches == [], comparison.summary()
