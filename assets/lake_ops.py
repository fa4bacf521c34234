"""The Dagster op of the DuckLake's upkeep (invoicing_warehouse/engine/lake_maintenance.py): old snapshots expire,
except the last published one and any a reader may be on; the files only they held are removed; small files merged.

The horizon is the deployment's (INVOICING_LAKE_SNAPSHOT_HORIZON_DAYS, default 7 days; and the month-ends kept
beyond it, INVOICING_LAKE_MONTH_ENDS_KEPT, default 12), never run
configuration: a shorter one launched from the UI would throw away history that time travel reads. On a DuckDB
file there is nothing to expire: the op says so and succeeds.
"""

from dagster import Failure, OpExecutionContext, op

from assets.resources import WarehouseResource
from invoicing_warehouse.engine.connection import WarehouseUnavailable
from invoicing_warehouse.engine.lake_lock import LakeBusy
from invoicing_warehouse.engine.lake_maintenance import horizon_from_env, maintain, month_ends_from_env

MAINTAIN_LAKE_OP = "maintain_lake"


@op(name=MAINTAIN_LAKE_OP, description="Expires DuckLake snapshots older than the horizon (never the last "
    "published one, any a reader may be on, nor the month-end ones), removes the files only they held, merges small "
    "files.")
def maintain_lake(context: OpExecutionContext, warehouse: WarehouseResource) -> None:
    """Runs the lake's upkeep; a busy lake is retried by the job's policy, a wrong setting fails at once."""
    target = warehouse.target()
    if not target.is_lake:
        context.log.info(f"{target.describe()} is a DuckDB file: no snapshot to expire")
        return
    try:
        report = maintain(target, horizon=horizon_from_env(), month_ends=month_ends_from_env())
    except ValueError as error:
        raise Failure(description=str(error), allow_retries=False) from None
    except LakeBusy:
        raise
    except WarehouseUnavailable as error:
        raise Failure(description=str(error)) from None
    context.log.info(f"{target.describe()}: {report.line()}")
