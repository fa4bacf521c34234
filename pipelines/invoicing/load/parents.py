"""References closed in the run: the parents that loaded rows name and the warehouse does not hold, read by id.

A child can be loaded without its parent: a first sync defers the records touched within its settle lag
(windows.py) while their older children are read; a customer created while the documents were read; a server
that hides soft-deleted customers from its lists (the contract allows it) while their invoices stay listed and
owed. Before the gate judges, the sync reads each such parent by id (read/by_id.py, paced by the run's limiter)
and loads it as the list would have. A parent the API answers as gone (404) is loaded as a tombstone row (its
id, `_deleted_at` at the run's server time), the way a record found gone is marked: its children keep their
figures (an invoice is still owed when its customer is archived) under a deleted customer; one served with
`deleted: true` carries its own `_deleted_at` (rows.to_row).

At most INVOICING_PARENT_FETCH_MAX ids per run (default 500): a reference left dangling beyond that is read by a
later run, and meanwhile flagged by the gate (invoicing_warehouse/runs/checks.py: `customers_exist`, `invoices_exist`,
WARN).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import dlt

from invoicing_warehouse.engine.environment.api_settings import PARENT_FETCH_MAX
from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.names import PORTAL_COLUMN
from pipelines.invoicing import record_rows
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.load.raw_upkeep import select_rows
from pipelines.invoicing.read.by_id import fetch_by_id
from pipelines.invoicing.read.rows import normalized, to_row, with_portal
from pipelines.invoicing.settings import ENDPOINTS, REFERENCES

PARENT_FETCH_MAX_ENV = PARENT_FETCH_MAX.name
# 50 s of the service's 10 requests/s at most, in a run that found them
DEFAULT_PARENT_FETCH_MAX = PARENT_FETCH_MAX.default


@dataclass
class ParentFetch:
    """What closing the references did: parents read and loaded, found gone, refused, left for a later run."""

    loaded: dict[str, int] = field(default_factory=dict)  # parents loaded per table (found, flagged or live)
    gone: dict[str, list[str]] = field(default_factory=dict)  # answered 404: loaded as tombstone rows
    refused: dict[tuple[str, str], str] = field(default_factory=dict)  # the API refused that record alone
    left: int = 0  # dangling ids beyond the run's bound

    def notes(self) -> list[str]:
        """One note per parent table that was read by id (`<table>: ...`), for the run's report."""
        tables = sorted(set(self.loaded) | {name for name, ids in self.gone.items() if ids}
                        | {name for name, _ in self.refused})
        notes = []
        for name in tables:
            refused = sum(1 for table, _ in self.refused if table == name)
            notes.append(f"{name}: {self.loaded.get(name, 0) + len(self.gone.get(name, []))} parent(s) named by "
                         f"loaded rows read by id ({len(self.gone.get(name, []))} gone"
                         + (f", {refused} refused" if refused else "") + ")")
        if self.left:
            notes.append(f"run: {self.left} referenced parent(s) beyond {PARENT_FETCH_MAX_ENV} left for the next run")
        return notes


def parent_fetch_max() -> int:
    """INVOICING_PARENT_FETCH_MAX (ids read by id per run, 0: none); raises ValueError naming the setting."""
    return current_environment().value(PARENT_FETCH_MAX)


def dangling_parents(pipeline: dlt.Pipeline, portal_id: str, tables: list[str]) -> dict[str, list[str]]:
    """Per parent table among `tables`: the ids the portal's child rows name that the parent table does not
    hold, sorted (children of a table not loaded yet name nothing)."""
    wanted: dict[str, set[str]] = {}
    with pipeline.sql_client() as client:
        for reference in REFERENCES:
            if reference.parent not in tables:
                continue
            child = client.make_qualified_table_name(reference.child)
            parent = client.make_qualified_table_name(reference.parent)
            column = reference.column
            try:
                rows = select_rows(
                    client, f"select distinct c.{column} from {child} c left join {parent} p "
                    f"on p.{PORTAL_COLUMN} = c.{PORTAL_COLUMN} and p.id = c.{column} "
                    f"where c.{PORTAL_COLUMN} = ? and c.{column} is not null and p.id is null", portal_id)
            except Exception:  # the child or the parent table does not exist yet  # noqa: BLE001, S112
                continue
            wanted.setdefault(reference.parent, set()).update(str(row[0]) for row in rows)
    return {name: sorted(ids) for name, ids in wanted.items() if ids}


def close_references(pipeline: dlt.Pipeline, client: InvoicingClient, portal_id: str, *, tables: list[str],
                     observed: datetime, limit: int) -> ParentFetch:
    """Reads by id (at most `limit`) the parents the portal's loaded rows name and the warehouse does not hold,
    among the parent `tables` of this run, and loads them; a 404 loads a tombstone row stamped `observed` (the
    run's server time). Raises InvoicingApiError as the client does (a failure that is not the record's)."""
    outcome = ParentFetch()
    dangling = dangling_parents(pipeline, portal_id, tables)
    wanted: dict[str, list[str]] = {}
    budget = limit
    for name, ids in dangling.items():
        wanted[name] = ids[:budget]
        budget -= len(wanted[name])
        outcome.left += len(ids) - len(wanted[name])
    wanted = {name: ids for name, ids in wanted.items() if ids}
    if not wanted:
        return outcome
    records, gone, outcome.refused = fetch_by_id(client, wanted)
    outcome.gone = {name: ids for name, ids in gone.items() if ids}
    rows: dict[str, list[dict]] = {}
    for name, found in records.items():
        endpoint = ENDPOINTS[name]
        rows[name] = [to_row(endpoint, record, observed=observed) for record in found.values()]
        outcome.loaded[name] = len(found)
        for record_id in outcome.gone.get(name, []):
            # what the service said: gone. Kept as a row, as every deletion, so what names it still resolves
            tombstone = to_row(endpoint, {"id": record_id}, observed=observed)
            tombstone["_deleted_at"] = normalized(observed)
            if "deleted" in endpoint.columns:
                tombstone["deleted"] = True
            rows[name].append(tombstone)
    rows = {name: with_portal(batch, portal_id) for name, batch in rows.items() if batch}
    if rows:
        pipeline.run(record_rows(rows), loader_file_format="parquet")
    return outcome
