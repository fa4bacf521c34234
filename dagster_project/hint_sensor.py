"""The doorbell's sensor: every few seconds, a run of `apply_hints_job` per portal with pending webhook hints.

Run keys name the newest hint of the set (`hints:<portal>:<sequence>`), so one set is launched once; a run
that failed or was canceled is launched again under the next attempt number (its hints are still pending).
Runs never overlap another writing run of the same warehouse (sync, reconcile, hints): they carry the writer
tag, and the run queue starts one run per tag value at a time (assets/writer_queue.py). While a writing run is
running, the sensor may queue one hints run behind it, which starts as soon as the writer ends and applies
whatever is pending then (Dagster evaluates sensors at most every 5 s: waiting for the next evaluation would
add that to every change's latency); while a writing run is already waiting in the queue, it requests
nothing, so runs never pile up. A portal whose hints run is running requests nothing either while runs stay
for the hints that follow (invoicing_warehouse/runs/linger.py): that run applies them, and a run queued behind it would
only make it end. The interval is INVOICING_HINTS_SENSOR_INTERVAL_S (default 3).

In standby (INVOICING_HINTS_STANDBY), it also requests a run for each configured portal that has no hints run
queued, starting or running, hints pending or not (run key `standby:<portal>:<second>`): that run waits for the
portal's first hint, so a change reaches the readers without the sensor's next evaluation, the queue and a new
process before it (bench/RESULTS.md, the doorbell's p95). The same rules hold: nothing while a writer waits.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from dagster import (
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SkipReason,
    sensor,
)

from assets.hint_ops import APPLY_HINTS_OP
from assets.resources import InvoicingApiResource, WarehouseResource
from assets.run_tags import PORTAL_TAG, portal_run_tags
from assets.writer_queue import WAREHOUSE_TAG, waiting_writer
from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.environment.run_settings import HINTS_SENSOR_INTERVAL_S
from invoicing_warehouse.runs.hints import spool_for
from invoicing_warehouse.runs.linger import Linger
from pipelines.invoicing.portals import Portal

INTERVAL_ENV = HINTS_SENSOR_INTERVAL_S.name
HINTS_KEY_TAG = "invoicing-warehouse/hints"
ENDED_BADLY = [DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED]
STANDBY_RETRY_S = 60


def sensor_interval_s() -> int:
    """Seconds between two evaluations (INVOICING_HINTS_SENSOR_INTERVAL_S, default 3, at least 1)."""
    return current_environment().value(HINTS_SENSOR_INTERVAL_S)


def build_hints_sensor(job, portals: dict[str, Portal] | list[str],
                       default_status: DefaultSensorStatus = DefaultSensorStatus.STOPPED,
                       api: InvoicingApiResource | None = None):
    """The sensor launching `job` (the hints job) for each portal of `portals` with pending hints (hints of a
    portal not configured are left alone: there is no API to fetch them from). Its runs carry the portal's
    egress tag (run_tags.py; the API host of the portal, or of `api` for the portal `default`)."""
    by_name = portals if isinstance(portals, dict) else {name: Portal(name) for name in portals}

    @sensor(name="apply_hints_when_pending", job=job, minimum_interval_seconds=sensor_interval_s(),
            default_status=default_status,
            description="Requests a run applying the pending webhook hints of each portal, one writer at a time.")
    def apply_hints_when_pending(context: SensorEvaluationContext,
                                 warehouse: WarehouseResource) -> Iterator[RunRequest | SkipReason]:
        with spool_for(warehouse.target()) as spool:
            newest: dict[str, int] = {}
            for hint in spool.pending():
                if hint.portal_id not in by_name:
                    continue
                newest[hint.portal_id] = max(newest.get(hint.portal_id, 0), hint.sequence)
        staying = Linger.from_environment()
        if not newest and not staying.standby:
            yield SkipReason("no pending hints")
            return
        if warehouse.target().is_lake:
            # a DuckLake takes a writer per portal: only a run of the same portal waiting holds its hints back
            # (with a thousand portals' runs in the queue, a warehouse-wide wait would hold every hint back)
            for portal in list(newest):
                if waiting_writer(context.instance, warehouse.path, portal):
                    del newest[portal]
            if not newest and not staying.standby:
                yield SkipReason("a run of each portal with hints waits to write; the hints follow them")
                return
        else:
            waiting = waiting_writer(context.instance, warehouse.path)
            if waiting:
                yield SkipReason(f"run {waiting.run_id} waits to write {warehouse.path}; the hints follow it")
                return
        if staying.enabled:
            for portal in list(newest):
                if _hints_run_working(context, job.name, warehouse.path, portal):
                    del newest[portal]
        standby = [portal for portal in sorted(by_name) if staying.standby and portal not in newest
                   and not _hints_run_active(context, job.name, warehouse.path, portal)
                   and not _hints_run_failed_lately(context, job.name, warehouse.path, portal)
                   and not (warehouse.target().is_lake and waiting_writer(context.instance, warehouse.path, portal))]
        if not newest and not standby:
            yield SkipReason("the running hints run applies the pending hints" if staying.enabled
                             else "no pending hints")
            return
        for portal in standby:
            yield RunRequest(
                run_key=f"standby:{portal}:{int(time.time())}",
                run_config={"ops": {APPLY_HINTS_OP: {"config": {"portal": portal}}}},
                tags={WAREHOUSE_TAG: warehouse.path, HINTS_KEY_TAG: f"standby:{portal}",
                      **portal_run_tags(by_name[portal], api)},
            )
        for portal, sequence in sorted(newest.items()):
            key = f"hints:{portal}:{sequence}"
            attempt = len(context.instance.get_runs(RunsFilter(tags={HINTS_KEY_TAG: key}, statuses=ENDED_BADLY)))
            yield RunRequest(
                run_key=key if attempt == 0 else f"{key}:retry{attempt}",
                run_config={"ops": {APPLY_HINTS_OP: {"config": {"portal": portal}}}},
                tags={WAREHOUSE_TAG: warehouse.path, HINTS_KEY_TAG: key, **portal_run_tags(by_name[portal], api)},
            )

    return apply_hints_when_pending


def _hints_run_active(context: SensorEvaluationContext, job_name: str, warehouse_path: str, portal: str) -> bool:
    """Whether a hints run of `portal` is queued, starting or running (a standby run is then not needed)."""
    return bool(context.instance.get_runs(
        RunsFilter(job_name=job_name, tags={WAREHOUSE_TAG: warehouse_path, PORTAL_TAG: portal},
                   statuses=[DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING,
                             DagsterRunStatus.STARTED]), limit=1))


def _hints_run_failed_lately(context: SensorEvaluationContext, job_name: str, warehouse_path: str,
                             portal: str) -> bool:
    """Whether a hints run of `portal` failed or was canceled in the last STANDBY_RETRY_S: no run waits in standby
    then (a wrong secret would otherwise fail a run at every evaluation); a hint still launches one."""
    since = datetime.now(UTC) - timedelta(seconds=STANDBY_RETRY_S)
    return bool(context.instance.get_runs(
        RunsFilter(job_name=job_name, tags={WAREHOUSE_TAG: warehouse_path, PORTAL_TAG: portal},
                   statuses=ENDED_BADLY, updated_after=since), limit=1))


def _hints_run_working(context: SensorEvaluationContext, job_name: str, warehouse_path: str, portal: str) -> bool:
    """Whether a hints run of `portal` is running (it applies new hints while it stays)."""
    return bool(context.instance.get_runs(
        RunsFilter(job_name=job_name, tags={WAREHOUSE_TAG: warehouse_path, PORTAL_TAG: portal},
                   statuses=[DagsterRunStatus.STARTED]), limit=1))
