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
ACTIVE = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]
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
        lake = warehouse.target().is_lake
        if lake:
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
                # a hints run of the portal running applies them while it stays
                if _hints_run(context, job.name, warehouse.path, portal, [DagsterRunStatus.STARTED]):
                    del newest[portal]
        standby = [portal for portal in sorted(by_name) if staying.standby and portal not in newest
                   # none while one is queued, starting or running, nor within STANDBY_RETRY_S of a failed one (a
                   # wrong secret would fail a run at every evaluation; a hint still launches one)
                   and not _hints_run(context, job.name, warehouse.path, portal, ACTIVE)
                   and not _hints_run(context, job.name, warehouse.path, portal, ENDED_BADLY, STANDBY_RETRY_S)
                   and not (lake and waiting_writer(context.instance, warehouse.path, portal))]
        if not newest and not standby:
            yield SkipReason("the running hints run applies the pending hints" if staying.enabled
                             else "no pending hints")
            return

        def request(portal: str, key: str, run_key: str) -> RunRequest:
            return RunRequest(run_key=run_key, run_config={"ops": {APPLY_HINTS_OP: {"config": {"portal": portal}}}},
                              tags={WAREHOUSE_TAG: warehouse.path, HINTS_KEY_TAG: key,
                                    **portal_run_tags(by_name[portal], api)})

        for portal in standby:
            yield request(portal, f"standby:{portal}", f"standby:{portal}:{int(time.time())}")
        for portal, sequence in sorted(newest.items()):
            key = f"hints:{portal}:{sequence}"
            attempt = len(context.instance.get_runs(RunsFilter(tags={HINTS_KEY_TAG: key}, statuses=ENDED_BADLY)))
            yield request(portal, key, key if attempt == 0 else f"{key}:retry{attempt}")

    return apply_hints_when_pending


def _hints_run(context: SensorEvaluationContext, job_name: str, warehouse_path: str, portal: str,
               statuses: list[DagsterRunStatus], within_s: float | None = None) -> bool:
    """Whether a hints run of `portal` of the warehouse has one of `statuses` (changed in the last `within_s`
    seconds, when given)."""
    since = None if within_s is None else datetime.now(UTC) - timedelta(seconds=within_s)
    return bool(context.instance.get_runs(
        RunsFilter(job_name=job_name, tags={WAREHOUSE_TAG: warehouse_path, PORTAL_TAG: portal}, statuses=statuses,
                   updated_after=since), limit=1))
