"""The marts once per interval: one `models_job` run after a schedule tick's portal runs have all ended.

The SQL models are not partitioned: one build covers every portal (docs/scaling.md: 6.3 s at 1 M documents), so
building them in each portal's run costs N builds per interval and, on a DuckLake, N model builds taking the
lake's exclusive lock in turn. The sync and reconcile schedules launch the portals' raw tables only, each run
tagged with its tick (run_tags.INTERVAL_TAG); this sensor looks at the newest tick that launched portal runs and,
once none of them is queued or running any more and at least one succeeded, requests one `models_job` run
(run key `models:<tick>`: never twice for a tick, whatever the number of evaluations). Its success publishes
through the gate (sensors.py). A tick whose portal runs all failed builds nothing (nothing new to build); a tick
still going when the next one starts is covered by the next one's build.

Why a sensor rather than declarative automation (`AutomationCondition.on_cron`): the condition "every
partition of the upstream updated since the tick" never holds on a tick where one portal failed, and the marts
would wait for the next tick that every portal survives; the gate (invoicing_warehouse/runs/gate.py), not the scheduler,
decides what a failed read holds back.
"""

from __future__ import annotations

from collections.abc import Iterator

from dagster import (
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SkipReason,
    sensor,
)

from assets.run_tags import INTERVAL_TAG

PORTAL_JOBS = ("portal_sync_job", "portal_reconcile_job")
MINIMUM_INTERVAL_S = 30  # a model build waits at most this long after its interval's last portal run
RECENT_RUNS = 50
ENDED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}


def build_models_sensor(models_job, default_status: DefaultSensorStatus = DefaultSensorStatus.RUNNING):
    """The sensor launching `models_job` once per interval after its portal runs. Running by default: it
    requests nothing until a schedule has launched portal runs."""

    @sensor(name="build_models_after_portal_runs", job=models_job, minimum_interval_seconds=MINIMUM_INTERVAL_S,
            default_status=default_status,
            description="Builds every SQL model once per interval, after the interval's portal runs ended.")
    def build_models_after_portal_runs(context: SensorEvaluationContext) -> Iterator[RunRequest | SkipReason]:
        tick = newest_interval(context)
        if tick is None:
            yield SkipReason("no portal run launched by a schedule yet")
            return
        if context.cursor == tick:
            yield SkipReason(f"the models of interval {tick} are requested already")
            return
        runs = [run for run in context.instance.get_runs(RunsFilter(tags={INTERVAL_TAG: tick}))
                if run.job_name in PORTAL_JOBS]
        going = [run for run in runs if run.status not in ENDED]
        if going:
            yield SkipReason(f"{len(going)} of {len(runs)} portal runs of interval {tick} not ended yet")
            return
        context.update_cursor(tick)
        if not any(run.status == DagsterRunStatus.SUCCESS for run in runs):
            yield SkipReason(f"none of the {len(runs)} portal runs of interval {tick} succeeded: nothing new")
            return
        yield RunRequest(run_key=f"models:{tick}", tags={INTERVAL_TAG: tick})

    return build_models_after_portal_runs


def newest_interval(context: SensorEvaluationContext) -> str | None:
    """The tick of the newest portal run a schedule launched (its INTERVAL_TAG), if any, among the last
    RECENT_RUNS runs of each portal job (runs launched by hand carry no tick)."""
    ticks = [run.tags[INTERVAL_TAG] for job_name in PORTAL_JOBS
             for run in context.instance.get_runs(RunsFilter(job_name=job_name), limit=RECENT_RUNS)
             if INTERVAL_TAG in run.tags]
    return max(ticks, default=None)  # ISO times in UTC: their text order is their time order
