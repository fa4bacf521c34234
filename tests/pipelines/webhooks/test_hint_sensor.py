"""The Dagster path: the sensor requests exactly one run of `apply_hints_job` for the pending hints of a
portal (the same run key while that set is pending, so it launches once), none while another writing run of
the warehouse waits in the queue, none while a hints run of the portal is running and runs stay for the hints
that follow, and the job applies them: the readers' copy then equals the sandbox's own
records. (Runs never overlap: the writer tag and the run queue's limit, tests/dagster_project/test_definitions.py.)"""

from __future__ import annotations

import threading
import time

from dagster import DagsterInstance, DagsterRunStatus, build_sensor_context
from hint_support import dagster_resources, reader, scheduled_sync

from assets.hint_ops import APPLY_HINTS_OP
from assets.writer_queue import WAREHOUSE_TAG
from dagster_project.definitions import build_definitions
from dagster_project.hint_sensor import PORTAL_TAG
from harness.hinted_changes import DELETIONS, HintedMutator
from harness.warehouse_truth import compare_raw_tables
from invoicing_warehouse.demo.hint_feed import ListenerFeed
from invoicing_warehouse.engine.environment.run_settings import HINTS_STANDBY
from invoicing_warehouse.runs.linger import LINGER_ENV, RUN_MAX_ENV
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_path

STANDBY_ENV = HINTS_STANDBY.name


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


def test_in_standby_a_run_waits_for_the_first_hint_and_applies_it(sandbox, tmp_path, monkeypatch):
    """INVOICING_HINTS_STANDBY: with no hint pending, the sensor requests one run of the portal, none while a
    hints run of it is queued or running; that run waits past INVOICING_HINTS_LINGER_S for the first hint (a hint
    coming 3 s after its start, its idle bound 1 s), applies it and ends at INVOICING_HINTS_RUN_MAX_S; none in the
    minute after a hints run of the portal failed."""
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(sandbox, warehouse)
    resources = dagster_resources(sandbox, warehouse)
    defs = build_definitions(resources, {"default": Portal("default")})
    job = defs.resolve_job_def("apply_hints_job")
    with DagsterInstance.ephemeral() as instance:
        assert _tick(defs, instance, resources).run_requests == []  # standby off: nothing without hints
        monkeypatch.setenv(STANDBY_ENV, "1")
        (request,) = _tick(defs, instance, resources).run_requests
        assert request.run_key.startswith("standby:default:") and request.tags[WAREHOUSE_TAG] == warehouse
        assert request.run_config == {"ops": {APPLY_HINTS_OP: {"config": {"portal": "default"}}}}
        for status in (DagsterRunStatus.STARTING, DagsterRunStatus.STARTED):
            active = instance.create_run_for_job(job, run_config=request.run_config, status=status,
                                                tags={WAREHOUSE_TAG: warehouse, PORTAL_TAG: "default"})
            assert _tick(defs, instance, resources).run_requests == [], status
            instance.delete_run(active.run_id)
        # a hints run of the portal failed a moment ago (a wrong secret would fail every one): none in standby
        failed = instance.create_run_for_job(job, run_config=request.run_config, status=DagsterRunStatus.FAILURE,
                                            tags={WAREHOUSE_TAG: warehouse, PORTAL_TAG: "default"})
        assert _tick(defs, instance, resources).run_requests == []
        instance.delete_run(failed.run_id)

        monkeypatch.setenv(LINGER_ENV, "1")
        monkeypatch.setenv(RUN_MAX_ENV, "10")
        feed = ListenerFeed(sandbox.portal, spool_path(warehouse)).start()
        changes = threading.Timer(3.0, lambda: HintedMutator(sandbox.portal, 0, seed=23, without=DELETIONS).steps(4))
        changes.start()
        try:
            started = time.monotonic()
            result = job.execute_in_process(run_config=request.run_config, instance=instance, tags=request.tags,
                                            resources=resources)
            lasted = time.monotonic() - started
        finally:
            changes.join(timeout=30)
            feed.stop()
        assert result.success
        assert 10 <= lasted < 30, lasted  # it stayed its whole length, idle or not
        logged = " ".join(entry.user_message for entry in instance.all_logs(result.run_id))
        assert "ended: run length 10 s reached" in logged, logged[-2000:]
    with HintSpool(spool_path(warehouse)) as spool:
        assert spool.pending_count() == 0
        assert spool.last_sequence() > 0  # the changes did send hints, and this run applied them
    with reader(warehouse) as connection:
        comparison = compare_raw_tables(connection, sandbox.portal)
    assert comparison.mismatches == [], comparison.summary()
