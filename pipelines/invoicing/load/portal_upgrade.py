"""The upgrade of a warehouse made before portals existed: its rows become portal `default`.

Such a warehouse has no `portal_id` of its own, yet most of its tables have a `portal_id` column: the API's
`portalId`, which is now kept as `api_portal_id` (settings.py). At the start of every sync, for each raw
table of the catalogue still in the old shape, one transaction moves that column to `api_portal_id` and sets
`portal_id` to `default` (a table without the API's column just gains `portal_id = 'default'`). Idempotent:
a table already in the new shape is left alone, so a warehouse is upgraded once, by whichever sync comes
first, and the next merge on (`portal_id`, `id`) meets its rows instead of duplicating them.
"""

from __future__ import annotations

import dlt

from invoicing_warehouse.engine.names import DEFAULT_PORTAL, PORTAL_COLUMN
from pipelines.invoicing.load.raw_upkeep import select_rows
from pipelines.invoicing.settings import ENDPOINTS, EVENTS

API_COLUMN = "api_portal_id"


def upgrade_to_portals(pipeline: dlt.Pipeline) -> list[str]:
    """Brings the raw tables of an older warehouse to the portal shape; returns the tables changed."""
    changed: list[str] = []
    with pipeline.sql_client() as client:
        if not client.has_dataset():
            return changed
        columns: dict[str, set[str]] = {}
        for table, column in select_rows(
                client, "select table_name, column_name from information_schema.columns where table_schema = ?",
                client.dataset_name):
            columns.setdefault(table, set()).add(column)
        with client.begin_transaction():
            for endpoint in (*ENDPOINTS.values(), EVENTS):
                have = columns.get(endpoint.name)
                if have is None or (PORTAL_COLUMN in have and API_COLUMN in have):
                    continue
                table = client.make_qualified_table_name(endpoint.name)
                if API_COLUMN in endpoint.columns and API_COLUMN not in have:
                    client.execute_sql(f"alter table {table} add column {API_COLUMN} varchar")
                    if PORTAL_COLUMN in have:  # the old column held the API's id: keep it under its new name
                        client.execute_sql(f"update {table} set {API_COLUMN} = {PORTAL_COLUMN}")
                        client.execute_sql(f"update {table} set {PORTAL_COLUMN} = ?", DEFAULT_PORTAL)
                if PORTAL_COLUMN not in have:
                    client.execute_sql(f"alter table {table} add column {PORTAL_COLUMN} varchar")
                    client.execute_sql(f"update {table} set {PORTAL_COLUMN} = ?", DEFAULT_PORTAL)
                changed.append(endpoint.name)
    return changed
