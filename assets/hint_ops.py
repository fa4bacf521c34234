"""The Dagster op that applies one portal's pending webhook hints (assets/hint_run.py).

It adds no asset: what it changes are the raw tables and models the asset graph already has, so it records
an asset materialization for each raw table whose rows changed (of the portal's partition) and for each model
it rebuilt. The regular `sync_job` stays the one that runs every model and every check.
"""

from dagster import AssetKey, AssetMaterialization, Config, Failure, MetadataValue, OpExecutionContext, op
from pydantic import Field

from assets.hint_run import apply_pending
from assets.ingestion import PERMANENT_ERROR_KINDS, api_settings
from assets.keys import raw_asset_key, raw_table_of
from assets.resources import InvoicingApiResource, WarehouseResource
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.portals import Portal
from warehouse_engine.names import DEFAULT_PORTAL

APPLY_HINTS_OP = "apply_webhook_hints"


class HintsConfig(Config):
    """Which portal's hints a run applies (the sensor sets it)."""

    portal: str = Field(default=DEFAULT_PORTAL, description="the portal (partition) whose pending hints to apply")


def build_apply_hints_op(portals: dict[str, Portal]):
    """The op applying the pending hints of the configured portal of `portals`."""

    @op(name=APPLY_HINTS_OP, description="Fetches the records pending webhook hints name, merges them, rebuilds "
        "the models downstream, publishes, then acknowledges the hints.")
    def apply_webhook_hints(context: OpExecutionContext, config: HintsConfig,
                            invoicing_api: InvoicingApiResource, warehouse: WarehouseResource) -> None:
        portal = portals.get(config.portal)
        if portal is None:
            raise Failure(description=f"portal {config.portal!r} is not configured (portals: {', '.join(portals)})",
                          allow_retries=False)
        try:
            settings, rate = api_settings(portal, invoicing_api)
            run = apply_pending(warehouse.target(), portal, settings=settings, rate_limit_per_s=rate)
        except InvoicingApiError as error:
            # the hints stay pending; a wrong secret is not retried, the rest is (the next sensor tick)
            raise Failure(description=str(error), allow_retries=error.kind not in PERMANENT_ERROR_KINDS) from None
        context.log.info(run.line())
        if run.load is None:
            return
        raw = sorted({parent for table in run.load.changed_tables if (parent := raw_table_of(table))})
        for table in raw:
            context.log_event(AssetMaterialization(
                raw_asset_key(table), partition=portal.name,
                metadata={"rows_loaded": MetadataValue.int(int(run.load.rows.get(table, 0))),
                          "source": MetadataValue.text("webhook hints")}))
        for key, rows in run.models.items():
            context.log_event(AssetMaterialization(AssetKey(key.split(".")),
                                                   metadata={"dagster/row_count": MetadataValue.int(int(rows))}))

    return apply_webhook_hints
