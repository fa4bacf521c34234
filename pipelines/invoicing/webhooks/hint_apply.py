"""Applying webhook hints: the records the hints name, fetched by id and merged into the raw tables.

A hint says what to look at (hint_spool.py); the data always comes from the API. A resource with at least
`WINDOW_READ_MIN_IDS` hinted records (a burst) is first read as a narrow window of its list (changed since a
little before its oldest hint arrived): one page holds up to 100 of them, where GETs by id would cost one
request each. Every hinted record the window did not hold (changed long before its delivery, deleted,
hidden from lists, a list refusing windows) is then fetched by id: GET /<resource>/{id} (a supplier
document's status history with it, as the regular sync reads it); a 404
confirms a deletion and sets `_deleted_at` the way the regular sync does (warehouse.apply_tombstones, at
the server's time), a record served with `deleted: true` carries its own `_deleted_at` (rows.to_row).
Payments have no event of their own (`invoice.paid` names the invoice): when a hinted document shows a payment
may have changed (its `totalPayments` differs from the warehouse's row, a credit note, or a server that does
not serve `totalPayments`), the run also reads a narrow window of transactions and transaction usages, from a
little before the oldest document hint arrived. Other document changes (drafts, validations, reminders...)
cost no payments request.

Rows go through the source's own shaping (rows.py) and load with dlt into the same tables, merge keys and
column types as the regular sync (`record_rows`), through the portal's own pipeline: the incremental
windows' state is not touched. Newest `lastUpdate` wins: a fetched record older than the warehouse's row
(a hint applied late, a reordered delivery) is dropped, never loaded over the newer row.
One hint never fails its batch: a record the API refuses alone (a 4xx other than 401, 403, 404, 408 and 429),
an answer that is not the record asked for, or an id that is not a record id (record_ids.py: asked nothing)
is left out and named in `HintLoad.failed`, for the caller to set aside (dead_letters.py); failures that
are not the record's (credentials, rate limit, server errors) still raise, every hint staying pending.
Ids go into request paths as one encoded segment (record_ids.record_path), whatever the spool holds.
The portal's API id (`portalId` of the records served) is reported (`HintLoad.api_portal_id`) so that the
receiver can refuse deliveries naming another portal.

This module only loads; acknowledging the hints, the models and publication are the caller's
(invoicing_warehouse/runs/hints.py), after this load committed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation

import dlt

from invoicing_warehouse.engine.names import PORTAL_COLUMN
from pipelines.invoicing import record_rows
from pipelines.invoicing.capabilities import STATE_KEY, ServerCapabilities
from pipelines.invoicing.dates import parse_timestamp
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.load.raw_upkeep import apply_tombstones, select_rows
from pipelines.invoicing.load.sync import committed_state, finish_pending, portal_of
from pipelines.invoicing.read.by_id import fetch_by_id
from pipelines.invoicing.read.paging import ListRequests, PageSizes, WindowNotHonoured, keyset_pages
from pipelines.invoicing.read.rows import event_rows, normalized, to_row, with_portal
from pipelines.invoicing.record_ids import child_path, record_id_problem
from pipelines.invoicing.settings import ENDPOINTS, EVENTS
from pipelines.invoicing.webhooks.hint_spool import Hint

log = logging.getLogger(__name__)

# Windows start this long before the oldest hint arrived: the change is written before its event is sent,
# and the sender's and our clocks differ (a window is in server time).
WINDOW_MARGIN_S = 120
# From this many hinted records of one resource, a window read comes before the GETs by id: one page
# replaces up to 100 of them, and a window that holds fewer costs at most a request or two for nothing.
WINDOW_READ_MIN_IDS = 3
PAYMENT_TABLES = ("transactions", "transaction_usages")
# Version = (last_update, _deleted_at) of a warehouse row as canonical text.
Version = tuple[str | None, str | None]


@dataclass
class HintLoad:
    """What applying a set of hints did."""

    hints: list[Hint]
    rows: dict[str, int] = field(default_factory=dict)  # rows loaded per table (child tables included)
    tombstoned: dict[str, list[str]] = field(default_factory=dict)  # ids confirmed gone (404)
    stale: int = 0  # fetched records older than the warehouse's row: not loaded
    fetched: int = 0  # records fetched by id
    windowed: int = 0  # hinted records found by a window read of their list (no GET by id)
    window_records: int = 0  # transactions and usages read by the payments window
    payments_read: bool = False  # whether the payments windows were read (a hinted document's payments changed)
    requests: int = 0
    notes: list[str] = field(default_factory=list)
    fetched_at: float = 0.0  # time.time() when the last fetch answered (before the load)
    failed: list[tuple[Hint, str, bool]] = field(default_factory=list)  # (hint, why, hopeless): not applied
    api_portal_id: str | None = None  # the `portalId` the fetched records carry (when they all agree)

    @property
    def changed_tables(self) -> set[str]:
        """Raw tables whose rows this load changed (child tables included)."""
        changed = {table for table, count in self.rows.items() if count}
        for table, ids in self.tombstoned.items():
            if ids:
                changed |= {table, *(f"{table}__{child}" for child in ENDPOINTS[table].nested)}
        return changed


def load_hints(pipeline: dlt.Pipeline, client: InvoicingClient, hints: list[Hint]) -> HintLoad:
    """Fetches the records of `hints` (all of the pipeline's portal) and merges them into the raw tables;
    returns what changed. Raises InvoicingApiError (nothing loaded, the hints stay pending)."""
    portal_id = portal_of(pipeline)
    stray = sorted({h.portal_id for h in hints} - {portal_id})
    if stray:
        raise ValueError(f"hints of portal(s) {stray} given to the pipeline of portal {portal_id}")
    outcome = HintLoad(hints)
    requests_before = _requests(client)  # the client may serve several runs (sync --follow keeps its token)
    finish_pending(pipeline)  # a killed run's package first, so state and data agree (as run_sync does)
    wanted: dict[str, list[str]] = {}
    for hint in hints:
        problem = record_id_problem(hint.record_id)
        if problem is not None:  # spooled before the receiver checked ids: no request can be right for it
            outcome.failed.append((hint, problem, True))
            continue
        wanted.setdefault(hint.resource, [])
        if hint.record_id not in wanted[hint.resource]:
            wanted[hint.resource].append(hint.record_id)
    unknown = sorted(set(wanted) - set(ENDPOINTS))
    if unknown:
        raise ValueError(f"hints name unknown resource(s) {unknown}")
    oldest = {name: min(h.received_at for h in hints if h.resource == name) for name in wanted}
    learnt = ServerCapabilities.from_state(committed_state(pipeline).get(STATE_KEY))
    windowed = _read_windows(client, wanted, oldest, learnt, outcome.notes)
    records, gone, refused = fetch_by_id(client, {name: [i for i in ids if i not in windowed.get(name, {})]
                                                   for name, ids in wanted.items()})
    outcome.failed += [(hint, refused[(hint.resource, hint.record_id)], False) for hint in hints
                       if (hint.resource, hint.record_id) in refused]
    outcome.fetched = sum(len(found) for found in records.values())
    for name, found in windowed.items():
        records[name].update(found)
        outcome.windowed += len(found)
    server_now = client.last_server_time
    if "documents" in wanted and _payments_may_have_changed(
            records["documents"].values(), _warehouse_paid(pipeline, portal_id, list(records["documents"]))):
        outcome.payments_read = True
        outcome.window_records = _read_payments(client, records, server_now, oldest["documents"], outcome.notes)
    outcome.fetched_at = time.time()
    served_portals = {str(record["portalId"]) for found in records.values() for record in found.values()
                      if isinstance(record.get("portalId"), str)}
    outcome.api_portal_id = served_portals.pop() if len(served_portals) == 1 else None
    versions = _warehouse_versions(pipeline, portal_id, {name: list(found) for name, found in records.items()})
    rows: dict[str, list[dict]] = {}
    for name, found in records.items():
        fresh = [record for record in found.values() if not _older(record, versions[name].get(record["id"]))]
        outcome.stale += len(found) - len(fresh)
        if not fresh:
            continue
        endpoint = ENDPOINTS[name]
        rows[name] = with_portal([to_row(endpoint, record, observed=server_now,
                                         known_deleted_at=(versions[name].get(record["id"]) or (None, None))[1])
                                  for record in fresh], portal_id)
        if name == "supplier_documents":
            rows[EVENTS.name] = with_portal(_events_of(client, [r["id"] for r in fresh]), portal_id)
    if rows:
        counts = _load_rows(pipeline, rows)
        outcome.rows = {table: count for table, count in counts.items() if not table.startswith("_dlt")}
    gone = {name: ids for name, ids in gone.items() if ids}
    if gone:
        # the server's time, as the regular sync stamps a record found gone (its run time)
        apply_tombstones(pipeline, gone, server_now or datetime.now().astimezone(), portal_id)
        outcome.tombstoned = gone
    outcome.requests = _requests(client) - requests_before
    return outcome


def _load_rows(pipeline: dlt.Pipeline, rows: dict[str, list[dict]]) -> dict[str, int]:
    """Loads `rows` (table -> rows) with dlt's extract, normalize and load; returns the rows per table.

    Not `pipeline.run`: run() restores the state from the destination once more, and `finish_pending` has just
    done it in this run (one writer per portal's pipeline, so nothing changed it since). That second restore was
    a tenth of a hint run (bench/RESULTS.md, the doorbell); the three steps are run()'s own once nothing is
    pending."""
    pipeline.extract(record_rows(rows), loader_file_format="parquet")
    normalized = pipeline.normalize()
    pipeline.load()
    return dict(normalized.row_counts) if normalized is not None else {}


def _requests(client: InvoicingClient) -> int:
    return sum(client.stats.snapshot()["requests"].values())


def _payments_may_have_changed(documents: Iterable[dict], paid_before: dict[str, Decimal | None] | None) -> bool:
    """Whether a payment may have been recorded on or used for these fetched documents since the warehouse's
    rows (`paid_before`: id -> total_payments of the rows there; None when the warehouse cannot tell).

    `totalPayments` is the sum of the payments used on a document (api-facts): a payment used on an invoice
    changes it, whatever event announced the change. A credit note's usage falls on another document, and a
    server that does not serve `totalPayments` gives no way to tell: both read the payments. A payment
    recorded without being used names no document at all: the scheduled sync reads it, as every change no
    event announces."""
    for record in documents:
        if paid_before is None or record.get("subtype") == "CREDIT_NOTE":
            return True
        paid = _amount(record.get("totalPayments"))
        if paid is None:
            return True
        if record["id"] in paid_before:
            if paid_before[record["id"]] != paid:
                return True
        elif paid != 0:  # new to the warehouse, payments already used on it
            return True
    return False


def _amount(value: object) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _warehouse_paid(pipeline: dlt.Pipeline, portal_id: str, ids: list[str]) -> dict[str, Decimal | None] | None:
    """id -> total_payments of the portal's document rows among `ids` (None: the table or column is missing)."""
    if not ids:
        return {}
    with pipeline.sql_client() as client:
        table = client.make_qualified_table_name("documents")
        marks = ", ".join(["?"] * len(ids))
        try:
            rows = select_rows(client, f"select id, total_payments from {table} "
                               f"where {PORTAL_COLUMN} = ? and id in ({marks})", portal_id, *ids)
        except Exception:  # no documents table or no total_payments column yet: cannot tell  # noqa: BLE001
            return None
    return {row[0]: None if row[1] is None else Decimal(str(row[1])) for row in rows}


def _window_start(now: datetime, oldest_hint: float) -> datetime:
    """A little before the oldest hint arrived, `now` being the server's time now."""
    age = max(0.0, time.time() - oldest_hint) if oldest_hint else 0.0
    return now - timedelta(seconds=age + WINDOW_MARGIN_S)


def _read_windows(client: InvoicingClient, wanted: dict[str, list[str]], oldest: dict[str, float],
                  learnt: ServerCapabilities, notes: list[str]) -> dict[str, dict[str, dict]]:
    """The hinted records found by a window read of their list, per resource with at least
    WINDOW_READ_MIN_IDS hinted ids. A window read stops once its pages would cost as much as the GETs of
    the ids still missing; those, and a list that refuses or ignores windows (as the sync learnt, `learnt`,
    or as this read finds), are left to the GETs by id."""
    found: dict[str, dict[str, dict]] = {}
    for name, ids in wanted.items():
        list_learnt = learnt.of(ENDPOINTS[name].path)
        if len(ids) < WINDOW_READ_MIN_IDS or {list_learnt.window, list_learnt.ordering} & {"refused", "ignored"}:
            continue
        missing, pages = set(ids), 0
        # server time once it answered, else this machine's; either way a record the window misses is
        # fetched by id, so a clock off by more than the margin costs requests, never a record
        now = client.last_server_time or datetime.now().astimezone()
        since, until = _window_start(now, oldest[name]), now + timedelta(seconds=WINDOW_MARGIN_S)
        try:
            for page in keyset_pages(ListRequests(client.get, ENDPOINTS[name].path, PageSizes(), name), since, until):
                pages += 1
                for record in page.records:
                    if record["id"] in missing:
                        found.setdefault(name, {})[record["id"]] = record
                        missing.discard(record["id"])
                if not missing or pages >= len(missing):
                    break
        except WindowNotHonoured as reason:
            notes.append(f"{name}: no window read ({reason}); fetched by id")
    return found


def _read_payments(client: InvoicingClient, records: dict[str, dict[str, dict]], server_now: datetime | None,
                   oldest_hint: float, notes: list[str]) -> int:
    """Transactions and usages changed since shortly before the oldest document hint (server time), added
    to `records`; returns how many were read. Without a server clock or a window, the scheduled sync
    reads them instead (a note says so)."""
    if server_now is None:
        notes.append("payments: no Date header to place a window in; left to the scheduled sync")
        return 0
    since = _window_start(server_now, oldest_hint)
    read = 0
    for name in PAYMENT_TABLES:
        path = ENDPOINTS[name].path
        found = records.setdefault(name, {})
        try:
            for page in keyset_pages(ListRequests(client.get, path, PageSizes(), name), since, server_now):
                for record in page.records:
                    found[record["id"]] = record
                read += len(page.records)
        except WindowNotHonoured as reason:
            notes.append(f"{name}: no window read ({reason}); left to the scheduled sync")
    return read


def _events_of(client: InvoicingClient, document_ids: Iterable[str]) -> list[dict]:
    """The status histories of these supplier documents, as the regular sync shapes them (rows.event_rows)."""
    rows: list[dict] = []
    for document_id in document_ids:
        try:
            events = client.get(child_path(EVENTS.path, document_id), tag=EVENTS.name)
        except InvoicingApiError as error:
            if error.status != 404:
                raise
            continue  # gone a moment after it was read: its next hint (or the sync) settles it
        if not isinstance(events, list):
            raise InvoicingApiError("malformed", f"GET {EVENTS.path}", 200, detail="'data' is not a list")
        rows += event_rows(EVENTS, document_id, events)[0]
    return rows


def _warehouse_versions(pipeline: dlt.Pipeline, portal_id: str, ids: dict[str, list[str]]
                        ) -> dict[str, dict[str, Version]]:
    """id -> (last_update, _deleted_at) of the portal's rows among `ids`, per table (absent: not there)."""
    versions: dict[str, dict[str, Version]] = {name: {} for name in ids}
    with pipeline.sql_client() as client:
        for name, wanted in ids.items():
            if not wanted:
                continue
            table = client.make_qualified_table_name(name)
            marks = ", ".join(["?"] * len(wanted))
            try:
                found = select_rows(client, f"select id, last_update, _deleted_at from {table} "
                                    f"where {PORTAL_COLUMN} = ? and id in ({marks})", portal_id, *wanted)
            except Exception:  # the table does not exist yet: nothing to be newer than  # noqa: BLE001, S112
                continue
            versions[name] = {row[0]: (normalized(row[1]), normalized(row[2])) for row in found}
    return versions


def _older(record: dict, version: Version | None) -> bool:
    """Whether `record` is older than the warehouse's row (newest `lastUpdate` wins; a tie loads again)."""
    if version is None or version[0] is None or record.get("lastUpdate") is None:
        return False
    return parse_timestamp(str(record["lastUpdate"])) < parse_timestamp(version[0])
