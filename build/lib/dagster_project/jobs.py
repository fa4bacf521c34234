"""Jobs: the incremental sync with every model, the daily reconcile, and the freshness checks; for the schedules, the
same syncs of one portal's raw tables only (`portal_sync_job`, `portal_reconcile_job`) and the models once after
them (`models_job`, launched by model_sensor.py once per interval).

The writing jobs (and the webhook hints job, `build_hints_job`) carry the tag WAREHOUSE_TAG with the warehouse
path as value (assets/writer_queue.py: one writing run per warehouse at a time).
"""

from __future__ import annotations

from dagster import AssetChecksDefinition, AssetSelection, Backoff, Jitter, RetryPolicy, define_asset_job, job

from assets.hint_ops import build_apply_hints_op
from assets.ingestion import RAW_ASSET_KEYS
from assets.lake_ops import maintain_lake
from assets.writer_queue import WAREHOUSE_TAG
from pipelines.invoicing.portals import Portal

INGESTION_OP = "invoicing_raw"

# Transient failures: the API's 5xx or timeouts beyond the client's own retries, or the warehouse
# file briefly locked by another process (a manual `invoicing-warehouse sync`, a snapshot being
# published). 3 retries, about 10 s, 20 s then 40 s apart.
TRANSIENT_RETRY_POLICY = RetryPolicy(
    max_retries=3, delay=10, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS
)


def build_jobs(warehouse_path: str, freshness_checks: list[AssetChecksDefinition]) -> list:
    """The sync, reconcile and freshness-check jobs for the warehouse at `warehouse_path`; `freshness_checks`
    are the checks that read the Dagster instance or the hints spool, never DuckDB (its own job runs them)."""
    writer_tags = {WAREHOUSE_TAG: warehouse_path}
    sync_job = define_asset_job(
        "sync_job",
        selection=AssetSelection.all(),
        description="Incremental sync of every endpoint, then every SQL model, with all checks.",
        tags=writer_tags,
        op_retry_policy=TRANSIENT_RETRY_POLICY,
    )
    reconcile_job = define_asset_job(
        "reconcile_job",
        selection=AssetSelection.all(),
        description="The sync plus a full id scan per endpoint (marks upstream deletions), then every model.",
        tags=writer_tags,
        op_retry_policy=TRANSIENT_RETRY_POLICY,
        config={"ops": {INGESTION_OP: {"config": {"reconcile": True}}}},
    )
    freshness_job = define_asset_job(
        "freshness_check_job",
        selection=AssetSelection.checks(*freshness_checks),
        description="Only the freshness and dead-hint checks of the raw tables (they read the instance and "
                    "the hints spool, not DuckDB).",
    )
    raw_tables = AssetSelection.assets(*RAW_ASSET_KEYS)
    portal_sync_job = define_asset_job(
        "portal_sync_job",
        selection=raw_tables,
        description="Incremental sync of one portal's raw tables with their checks (the sync schedule's run per "
                    "portal); the models follow once per interval (models_job).",
        tags=writer_tags,
        op_retry_policy=TRANSIENT_RETRY_POLICY,
    )
    portal_reconcile_job = define_asset_job(
        "portal_reconcile_job",
        selection=raw_tables,
        description="The portal's sync plus a full id scan per endpoint (the reconcile schedule's run per portal).",
        tags=writer_tags,
        op_retry_policy=TRANSIENT_RETRY_POLICY,
        config={"ops": {INGESTION_OP: {"config": {"reconcile": True}}}},
    )
    models_job = define_asset_job(
        "models_job",
        selection=AssetSelection.all() - raw_tables,
        description="Every SQL model with its checks, once after an interval's portal runs (model_sensor.py); "
                    "published through the gate when it succeeds.",
        tags=writer_tags,
        op_retry_policy=TRANSIENT_RETRY_POLICY,
    )
    return [sync_job, reconcile_job, freshness_job, portal_sync_job, portal_reconcile_job, models_job]


def build_hints_job(warehouse_path: str, portals: dict[str, Portal]):
    """`apply_hints_job`: applies one portal's pending webhook hints (the sensor of hint_sensor.py launches it).
    It writes the warehouse, so it carries the writer tag and queues behind the sync and the reconcile."""
    apply_webhook_hints = build_apply_hints_op(portals)

    @job(name="apply_hints_job", tags={WAREHOUSE_TAG: warehouse_path},
         description="Fetch the records pending webhook hints name, merge, rebuild downstream models, publish.")
    def apply_hints_job() -> None:
        apply_webhook_hints()

    return apply_hints_job


def build_lake_maintenance_job(warehouse_path: str):
    """`lake_maintenance_job`: the DuckLake's upkeep (assets/lake_ops.py). It writes the lake's catalog, so it
    carries the writer tag; on the lake it also waits for the loads under way (the lake's lock)."""

    @job(name="lake_maintenance_job", tags={WAREHOUSE_TAG: warehouse_path}, op_retry_policy=TRANSIENT_RETRY_POLICY,
         description="Expire DuckLake snapshots older than the horizon (never the last published one nor any a "
                     "reader may be on), remove the files only they held, merge small files.")
    def lake_maintenance_job() -> None:
        maintain_lake()

    return lake_maintenance_job
