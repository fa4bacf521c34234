"""The dlt source `invoicing`: every resource of an Invoicing API v2 portal, merged on `id`.

Settings (dlt conventions, resolved in one place: credentials.py): `sources.invoicing.base_url`,
`client_id`, `client_secret` (secret), from `.dlt/config.toml`, `.dlt/secrets.toml` or
SOURCES__INVOICING__BASE_URL / _CLIENT_ID / _CLIENT_SECRET.
`pipelines.invoicing.load.sync.run_sync` runs it in resumable chunks; `pipeline.run(invoicing())` works too
(one load for the whole run).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import dlt
from dlt.common.schema.typing import TMergeDispositionDict, TWriteDisposition
from dlt.extract.hints import TResourceNestedHints
from dlt.extract.resource import DltResource

from invoicing_warehouse.engine.names import DEFAULT_PORTAL, PORTAL_COLUMN
from pipelines.invoicing.capabilities import STATE_KEY
from pipelines.invoicing.credentials import resolve_settings
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.read.feed import Feed
from pipelines.invoicing.read.rows import with_portal
from pipelines.invoicing.settings import ENDPOINTS, EVENTS, Columns, Endpoint

MERGE: TMergeDispositionDict = {"disposition": "merge", "strategy": "delete-insert"}
# Many portals share one warehouse and their ids may collide: every table merges per portal.
KEY = (PORTAL_COLUMN, "id")


def _named(columns: Columns) -> Columns:
    return {name: {"name": name, **hint} for name, hint in columns.items()}


def _column_hints(endpoint: Endpoint) -> Columns:
    columns = _named(endpoint.columns)
    if endpoint.sort_column:
        # newest lastUpdate wins when one load holds an id twice
        columns[endpoint.sort_column] = {**columns[endpoint.sort_column], "dedup_sort": "desc"}
    return columns


def _save_state(feed: Feed, name: str, state: dict) -> None:
    state.clear()
    state.update(feed.reads[name].state())
    dlt.current.source_state()["page_sizes"] = feed.page_sizes.as_dict()
    dlt.current.source_state()[STATE_KEY] = feed.learnt().to_state()


def _endpoint_resource(feed: Feed, endpoint: Endpoint) -> DltResource:
    def rows():
        if endpoint.name not in feed.reads:
            # standalone: nothing started this read; run_sync starts every read before the first load
            feed.start(dlt.current.source_state(), [endpoint.name])
        state = dlt.current.resource_state()
        for batch in feed.take(endpoint.name):
            _save_state(feed, endpoint.name, state)
            yield batch if batch is None else with_portal(batch, feed.portal_id)  # None: no page ready yet
        _save_state(feed, endpoint.name, state)

    return dlt.resource(rows, name=endpoint.name, **_merge_hints(endpoint))


def _merge_hints(endpoint: Endpoint) -> dict[str, Any]:
    """The table hints of an endpoint's resource: merged per portal and id, typed, child tables typed."""
    nested: dict[str | Sequence[str], TResourceNestedHints] = {
        child: dlt.mark.make_nested_hints(columns=_named(cols)) for child, cols in endpoint.nested.items()}
    return {"write_disposition": MERGE, "primary_key": KEY, "columns": _column_hints(endpoint),
            "nested_hints": nested or None}


def _events_transformer(feed: Feed, parent: DltResource) -> DltResource:
    def events(documents: list[dict]):
        rows = feed.pop_events([d["id"] for d in documents])  # built by rows.event_rows
        if rows:
            yield with_portal(rows, feed.portal_id)

    # merged per document too: a reloaded history replaces the old one whole (synthesised ids included)
    # dlt types a transformer's write_disposition as the bare name only, yet hands it to dlt.resource,
    # which takes the strategy dict (delete-insert)
    return dlt.transformer(events, data_from=parent, name=EVENTS.name,
                           write_disposition=cast(TWriteDisposition, MERGE),
                           primary_key=KEY, merge_key=(PORTAL_COLUMN, "supplier_document_id"),
                           columns=_column_hints(EVENTS))


@dlt.source(name="invoicing", section="invoicing", max_table_nesting=2)
def record_rows(rows: dict[str, list[dict]]) -> list[DltResource]:
    """Rows already shaped (rows.to_row, rows.with_portal), as the same tables with the same merge keys
    and column types as `invoicing`: the applying run of webhook hints (hint_apply.py) loads the records
    it fetched by id through it. Touches no resource state (the incremental windows stay as they are)."""
    resources = []
    for name, batch in rows.items():
        if name == EVENTS.name:
            resources.append(dlt.resource(batch, name=name, write_disposition=MERGE, primary_key=KEY,
                                          merge_key=(PORTAL_COLUMN, "supplier_document_id"),
                                          columns=_column_hints(EVENTS)))
        else:
            resources.append(dlt.resource(batch, name=name, **_merge_hints(ENDPOINTS[name])))
    return resources


@dlt.source(name="invoicing", section="invoicing", max_table_nesting=2)
def invoicing(rate_limit_per_s: float = 10.0, feed: Any = None, portal: str = DEFAULT_PORTAL) -> list[DltResource]:
    """Every resource of the portal as dlt resources (tables of docs/resources.md, dataset invoicing_raw).

    `feed` is internal: `run_sync` passes the run's Feed (reads started, settings resolved) so that reads
    continue across its chunks. Without it, the source resolves its settings (credentials.py) and reads
    with its own client when dlt first iterates it, as portal `portal` (today's `sources.invoicing.*`).
    """
    if feed is None:
        settings = resolve_settings()
        feed = Feed(InvoicingClient(ClientSettings.of(settings, rate_limit_per_s=rate_limit_per_s)), portal_id=portal)
    resources = {name: _endpoint_resource(feed, endpoint) for name, endpoint in ENDPOINTS.items()}
    resources[EVENTS.name] = _events_transformer(feed, resources["supplier_documents"])
    return list(resources.values())
