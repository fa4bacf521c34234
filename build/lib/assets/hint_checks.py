"""Webhook hints kept dead: a WARN check per raw table that webhooks hint at, failing while the spool holds
dead letters of that table (pipelines/invoicing/webhooks/dead_letters.py).

Why a warning, not a blocking check: a dead letter means the real-time path skipped one record (the API
refused it alone, or the delivery named an id that is no record); the scheduled sync still reads every
record of the table, so no figure is wrong because of it. Blocking would hold every mart downstream
back, and would hand anyone holding the receiver's URL token (the only thing a delivery needs) a way to
freeze the readers' figures with one forged delivery. The warning names the records and the last error,
for a person to look at: a forgery to trace, or a record the service cannot serve.
"""

from collections.abc import Iterator

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    MetadataValue,
    multi_asset_check,
)

from assets.keys import raw_asset_key
from assets.resources import WarehouseResource
from pipelines.invoicing.webhooks.dead_letters import read_dead_letters
from pipelines.invoicing.webhooks.hint_events import EVENTS
from pipelines.invoicing.webhooks.hint_spool import spool_location_for

DEAD_HINTS_CHECK_NAME = "no_dead_hints"
HINTED_TABLES = sorted({resource for resource, _ in EVENTS.values()})
SHOWN = 20  # records named in a check's description and metadata


@multi_asset_check(
    specs=[
        AssetCheckSpec(
            DEAD_HINTS_CHECK_NAME,
            asset=raw_asset_key(table),
            description="No webhook hint of this table is kept dead in the spool (the scheduled sync still "
            "reads the records; a dead hint is one the real-time path skipped).",
        )
        for table in HINTED_TABLES
    ],
    can_subset=True,
    name="raw_no_dead_hints",
)
def raw_no_dead_hints(context: AssetCheckExecutionContext, warehouse: WarehouseResource
                      ) -> Iterator[AssetCheckResult]:
    """Warns for each selected table with dead letters in the warehouse's spool, naming them."""
    spool = spool_location_for(warehouse.target())
    _, letters = read_dead_letters(spool, limit=1_000)
    for check_key in sorted(context.selected_asset_check_keys, key=str):
        table = check_key.asset_key.path[-1]
        dead = [letter for letter in letters if letter.resource == table]
        named = [f"{letter.portal_id}/{letter.record_id}: {letter.attempts} attempts, {letter.last_error}"
                 for letter in dead[:SHOWN]]
        yield AssetCheckResult(
            asset_key=check_key.asset_key,
            check_name=DEAD_HINTS_CHECK_NAME,
            passed=not dead,
            severity=AssetCheckSeverity.WARN,
            description=None if not dead else f"{len(dead)} dead webhook hint(s) in {spool}: " + "; ".join(named),
            metadata={"dead_hints": MetadataValue.int(len(dead)), "records": MetadataValue.json(named)},
        )
