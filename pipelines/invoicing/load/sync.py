"""Running the extraction: one Feed per run, loaded by dlt in chunks that each commit data and state.

Order of a run: prove the credentials and freeze the windows (GET /me) before the warehouse is touched;
finish any load package a killed run left behind; read the committed state; start every read; then
`pipeline.run` chunk after chunk (each chunk: at most `chunk_pages` pages per resource or `chunk_seconds`
of extraction) until every read is consumed; mark records found gone upstream (`_deleted_at`). A first sync or
a full refresh whose lag zone holds records then waits out the lag and runs once more, incrementally
(load/settle.py). Last, the parents that loaded rows name and the run did not load are read by id
(load/parents.py), so that references are closed before the gate judges.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import dlt
from dlt.pipeline.exceptions import PipelineStepFailed

from invoicing_warehouse.engine.environment.api_settings import PARENT_FETCH_MAX
from invoicing_warehouse.engine.lake_conflicts import is_commit_conflict, retry_on_conflict
from invoicing_warehouse.engine.names import DEFAULT_PORTAL, RAW_DATASET
from invoicing_warehouse.engine.private_files import private_dir, private_umask
from invoicing_warehouse.engine.target import WarehouseTarget
from pipelines.invoicing import invoicing
from pipelines.invoicing.capabilities import ServerCapabilities
from pipelines.invoicing.credentials import resolve_settings
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.load.lake import lake_destination, shares_writers
from pipelines.invoicing.load.parents import close_references, parent_fetch_max
from pipelines.invoicing.load.pdf_archive import PDF_ARCHIVE_MAX_ENV, archive_pdfs, pdf_archive_max
from pipelines.invoicing.load.portal_upgrade import upgrade_to_portals
from pipelines.invoicing.load.raw_upkeep import (
    apply_tombstones,
    create_empty_tables,
    load_digests,
    load_indexes,
    remove_replayed_rows,
    remove_unreloaded_rows,
)
from pipelines.invoicing.load.settle import lag_zone_holds_records, wait_out_lag
from pipelines.invoicing.load.trace_redaction import install_trace_redaction
from pipelines.invoicing.read.feed import Feed
from pipelines.invoicing.read.read_host import RunPlan
from pipelines.invoicing.settings import EVENTS, RESOURCE_NAMES, WINDOW_LAG_S

# One dlt pipeline per portal: `invoicing` for `default` (the name a warehouse made before portals has, so its
# state carries on), `invoicing__<portal>` for the others. Each has its own state (windows, capabilities)
# in the warehouse and its own working folder, so portals never share a cursor and may run at once.
PIPELINE_NAME = "invoicing"
T = TypeVar("T")
PORTAL_SEPARATOR = "__"
DATASET_NAME = RAW_DATASET
CHUNK_PAGES = 200  # pages per resource per load: 20,000 records at most between two commits
CHUNK_SECONDS = 20.0  # the last load, after the last request, holds about this much reading
PROGRESS_EVERY_S = 2.0
# dlt's normalizer turns this many rows into one Arrow batch in a single call that holds the GIL: at its
# default (5,000) the reading threads stall for up to half a second, miss their turn at the rate limiter
# and may reach the service late enough to fall into the next one-second window.
NORMALIZE_BUFFER_ROWS = 500


@dataclass
class SyncReport:
    """What a run did: rows loaded per table, traffic per resource, time per dlt step."""

    rows: dict[str, int] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)
    throttled: int = 0
    retried: int = 0
    pages: dict[str, int] = field(default_factory=dict)
    records_read: dict[str, int] = field(default_factory=dict)
    tombstoned: dict[str, int] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)  # empty tables created (create_empty_tables)
    finished_pending: bool = False  # loaded what a killed run had left (finish_pending)
    chunks: int = 0
    extract_s: float = 0.0
    normalize_s: float = 0.0
    load_s: float = 0.0
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)  # `<table>: ...` remarks, every kind
    degraded_notes: list[str] = field(default_factory=list)  # those of `notes` saying something is unknown
    standing_notes: list[str] = field(default_factory=list)  # those of `notes` about the account, not the run
    limiter: dict[str, int] = field(default_factory=dict)  # pacing: locks onto the server's windows etc.
    refused: int = 0  # requests answered 400 (a parameter the server refuses; learnt in `capabilities`)
    capabilities: ServerCapabilities | None = None  # what the run learnt about the server (kept in state)
    removed: int = 0  # rows a full refresh found no longer served and deleted
    conflicts: int = 0  # loads retried after another writer of the same DuckLake committed first
    settled: bool = False  # a first sync's lag zone was read once the lag had passed (load/settle.py)
    parents_loaded: dict[str, int] = field(default_factory=dict)  # parents read by id (load/parents.py)
    # tables whose read failed alone (read/feed.py FAILS_ALONE), each with its error's line: loaded no further
    # than the chunks committed, their cursors kept, read again by the next run; the other tables were read
    failed: dict[str, str] = field(default_factory=dict)
    tables: list[str] = field(default_factory=list)  # the tables this run read (its selection of resources)
    archived: dict[str, int] = field(default_factory=dict)  # PDFs stored per resource (load/pdf_archive.py)

    @property
    def total_requests(self) -> int:
        return sum(self.requests.values())

    def add(self, other: SyncReport) -> None:
        """Adds a second pass of the same run (the settle-lag read of load/settle.py) to this report."""
        for mine, theirs in ((self.rows, other.rows), (self.requests, other.requests), (self.pages, other.pages),
                             (self.records_read, other.records_read), (self.tombstoned, other.tombstoned)):
            for key, value in theirs.items():
                mine[key] = mine.get(key, 0) + value
        self.throttled += other.throttled
        self.retried += other.retried
        self.refused += other.refused
        self.chunks += other.chunks
        self.extract_s += other.extract_s
        self.normalize_s += other.normalize_s
        self.load_s += other.load_s
        self.conflicts += other.conflicts
        self.created += [table for table in other.created if table not in self.created]
        self.notes += [note for note in other.notes if note not in self.notes]
        # a note of either pass: the second, incremental read cannot bring back what the first may have missed
        self.degraded_notes += [note for note in other.degraded_notes if note not in self.degraded_notes]
        self.capabilities = other.capabilities or self.capabilities
        self.parents_loaded = other.parents_loaded
        self.archived = other.archived
        self.failed = other.failed  # the second pass reads a failed list again from its kept cursor

    @property
    def changed_data(self) -> bool:
        """Whether the run changed any data table: rows loaded, rows marked deleted, tables created, or
        a killed run's load finished.

        A run that read no new or changed record loads no row (single objects are compared by digest),
        so this is False for it; dlt's state still advances in its own small load."""
        return (any(self.rows.values()) or any(self.tombstoned.values()) or bool(self.created)
                or self.finished_pending or bool(self.removed) or any(self.parents_loaded.values())
                or any(self.archived.values()))


def pipeline_name(portal_id: str) -> str:
    """The dlt pipeline of a portal: `invoicing` for `default`, `invoicing__<portal>` otherwise."""
    return PIPELINE_NAME if portal_id == DEFAULT_PORTAL else f"{PIPELINE_NAME}{PORTAL_SEPARATOR}{portal_id}"


def portal_of(pipeline: dlt.Pipeline) -> str:
    """The portal a pipeline made by `make_pipeline` loads (the inverse of `pipeline_name`)."""
    prefix = PIPELINE_NAME + PORTAL_SEPARATOR
    name = pipeline.pipeline_name
    return name[len(prefix):] if name.startswith(prefix) else DEFAULT_PORTAL


def make_pipeline(warehouse: str | Path | WarehouseTarget, portal_id: str = DEFAULT_PORTAL) -> dlt.Pipeline:
    """The portal's pipeline (`pipeline_name`) loading dataset `invoicing_raw` of the warehouse: a DuckDB file
    (a path or a target) or a DuckLake target (invoicing_warehouse/engine/target.py).

    dlt's working directory sits beside the warehouse (`.<name>.dlt/`), so two warehouses never share
    state, and a resumed run finds the load package a killed run left behind. On a DuckLake each portal's
    pipeline gets its own staging dataset, so portals loading at once never share one.

    The working directory is the owner's only (0700: it holds load packages of customer rows), dlt's trace is
    redacted before dlt saves it (trace_redaction.py), and dlt's telemetry is off unless configured.
    """
    target = warehouse if isinstance(warehouse, WarehouseTarget) else WarehouseTarget.duckdb_file(warehouse)
    work_dir = target.work_dir()
    private_umask()
    if not work_dir.parent.exists():
        private_dir(work_dir.parent)
    private_dir(work_dir)
    install_trace_redaction()
    _telemetry_off()
    name = pipeline_name(portal_id)
    return dlt.pipeline(
        pipeline_name=name,
        destination=lake_destination(target, name) if target.is_lake
        else dlt.destinations.duckdb(str(Path(str(target.path)).resolve())),
        dataset_name=DATASET_NAME,
        pipelines_dir=str(work_dir),
    )


def _selection(resources: list[str] | None) -> list[str]:
    names = list(resources or RESOURCE_NAMES)
    unknown = sorted(set(names) - set(RESOURCE_NAMES))
    if unknown:
        raise InvoicingApiError("configuration", "resources", detail=f"unknown resources {unknown}; "
                                f"known: {', '.join(RESOURCE_NAMES)}")
    if EVENTS.name in names and "supplier_documents" not in names:
        names.append("supplier_documents")  # events are read with the documents, committed with them
    return names


def _telemetry_off() -> None:
    """dlt sends anonymous usage events to telemetry.scalevector.ai by default; this product does not, unless
    `runtime.dlthub_telemetry` is configured (.dlt/config.toml sets it false as well)."""
    key = "runtime.dlthub_telemetry"
    if dlt.config.get(key) is None:
        dlt.config[key] = False


def _limit_normalize_buffer() -> None:
    """Sets `normalize.data_writer.buffer_max_items` to NORMALIZE_BUFFER_ROWS unless configured."""
    key = "normalize.data_writer.buffer_max_items"
    if dlt.config.get(key) is None:
        dlt.config[key] = NORMALIZE_BUFFER_ROWS


def finish_pending(pipeline: dlt.Pipeline) -> bool:
    """Loads what a killed run extracted but did not load, so that state and data agree again.

    Returns whether there was such a load (its rows are data this run changed, too)."""
    pipeline.sync_destination()
    if not pipeline.has_pending_data:
        return False
    _drop_extracted_copies_of_normalized(pipeline)
    if pipeline.list_extracted_load_packages():
        pipeline.normalize()
    pipeline.load()
    remove_replayed_rows(pipeline)
    return True


def _drop_extracted_copies_of_normalized(pipeline: dlt.Pipeline) -> None:
    """Deletes the extracted copy of every package that is already normalized.

    dlt commits a normalized package in two steps: it renames it into `load/normalized/` (atomic, the package
    whole), then deletes the extracted package. A run killed between the two leaves both, and normalizing the
    extracted copy again fails on the rename, in every later run. The normalized package is the complete one.
    """
    normalized = set(pipeline.list_normalized_load_packages())
    stale = [load_id for load_id in pipeline.list_extracted_load_packages() if load_id in normalized]
    if stale:
        extracted = pipeline._get_normalize_storage().extracted_packages  # dlt has no public call for this
        for load_id in stale:
            extracted.delete_package(load_id)


def committed_state(pipeline: dlt.Pipeline) -> dict:
    """The source's dlt state of the portal's earlier runs (windows, page sizes, server capabilities)."""
    return dict(pipeline.state.get("sources", {}).get("invoicing", {}))


def _add_trace(report: SyncReport, pipeline: dlt.Pipeline) -> None:
    trace = pipeline.last_trace
    if trace is None:
        return
    for step in trace.steps:
        seconds = (step.finished_at - step.started_at).total_seconds() if step.finished_at else 0.0
        if step.step in ("extract", "normalize", "load"):
            setattr(report, f"{step.step}_s", getattr(report, f"{step.step}_s") + seconds)
    normalize_info = trace.last_normalize_info
    if normalize_info:
        for table, count in normalize_info.row_counts.items():
            if not table.startswith("_dlt"):
                report.rows[table] = report.rows.get(table, 0) + count


def run_sync(
    pipeline: dlt.Pipeline,
    *,
    resources: list[str] | None = None,
    full_refresh: bool = False,
    reconcile: bool = False,
    progress: Callable[[dict[str, dict]], None] | None = None,
    base_url: str | None = None,
    client_id: str | None = None,
    client_secret: str | None = None,
    rate_limit_per_s: float = 10.0,
    chunk_pages: int = CHUNK_PAGES,
    chunk_seconds: float = CHUNK_SECONDS,
    known_capabilities: ServerCapabilities | None = None,
    settle_lag: bool = True,
) -> SyncReport:
    """Syncs the pipeline's portal (`portal_of`) into its dataset; raises InvoicingApiError on an expected failure.

    A full refresh re-reads everything of this portal and, once the run succeeded, deletes this portal's
    rows that no load of the run wrote (other portals' rows stay: no dlt refresh, which drops whole tables).

    Credentials default to dlt's config resolution (credentials.py). `progress` is called about every two seconds with
    `Feed.progress()` (per resource: pages, records, rows, requests, requests_per_s, done).
    `known_capabilities` (the doctor's findings) fills in what the sync's state does not know yet.
    `settle_lag`: a first sync or a full refresh reads its lag zone once the lag has passed (load/settle.py);
    False in that second pass itself.
    """
    started = time.monotonic()
    _limit_normalize_buffer()
    names = _selection(resources)
    parents_limit = _parents_limit()  # a bad setting stops the run before the warehouse is touched
    archive_limit = _archive_limit()
    portal_id = portal_of(pipeline)
    settings = resolve_settings(base_url, client_id, client_secret)
    client = InvoicingClient(ClientSettings.of(settings, rate_limit_per_s=rate_limit_per_s, keep_token=True))
    feed = Feed(client, from_scratch=full_refresh, reconcile=reconcile, with_events=EVENTS.name in names,
                known_capabilities=known_capabilities, portal_id=portal_id)
    report = SyncReport(tables=list(names))
    ticker_stop = threading.Event()
    settle = False
    try:
        plan = _prove_credentials(feed)
        retry = retry_on_conflict if shares_writers(pipeline) else _once
        report.finished_pending = retry(lambda: finish_pending(pipeline))
        retry(lambda: upgrade_to_portals(pipeline))
        # a first sync has no next run to read what its lag deferred: it reads it itself (load/settle.py)
        first = settle_lag and (full_refresh or not committed_state(pipeline).get("resources"))
        feed.indexes = load_indexes(pipeline, names, reconcile=reconcile and not full_refresh, portal_id=portal_id)
        if not full_refresh:  # a full refresh loads every record again anyway
            feed.digests = load_digests(pipeline, names, reconcile=reconcile, portal_id=portal_id)
        if full_refresh:  # every record loads again ("" is no version), ids and deletion times still known
            feed.indexes = {name: {key: ("", value[1]) for key, value in index.items()}
                            for name, index in feed.indexes.items()}
        # every read starts now, from the committed state, so the network stays busy while dlt loads
        feed.start({} if full_refresh else committed_state(pipeline), names)
        if progress is not None:
            threading.Thread(target=_tick, args=(feed, progress, ticker_stop), daemon=True).start()
        load_ids: list[str] = []
        while True:
            feed.begin_chunk(chunk_pages, chunk_seconds)
            source = invoicing(feed=feed, portal=portal_id).with_resources(*names)
            try:
                info = pipeline.run(source, loader_file_format="parquet")
            except PipelineStepFailed as failure:
                if (failure.step != "load" or feed.error is not None or retry is _once
                        or not is_commit_conflict(failure)):
                    cause = feed.error or _api_error_in(failure)
                    if cause is None:
                        raise
                    # the API's error is the one the caller acts on; dlt's step failure stays its cause
                    raise cause from failure
                # another writer of the lake committed first: the chunk waits in its load package
                report.conflicts += 1
                info = retry_on_conflict(pipeline.load, failed_once=True,
                                         on_retry=lambda *_: _count_conflict(report))
            load_ids += info.loads_ids
            report.chunks += 1
            _add_trace(report, pipeline)
            if feed.error is not None:
                raise feed.error
            if feed.finished:
                break
        report.failed = _failed_tables(feed, names)
        feed.skew_note()
        tombstones = feed.tombstones()
        if tombstones:
            retry(lambda: apply_tombstones(pipeline, tombstones, plan.run_time, portal_id))
        report.tombstoned = {name: len(ids) for name, ids in tombstones.items()}
        if full_refresh:
            # a table whose read failed was not reloaded whole: none of its rows is known gone
            reloaded = [name for name in names if name not in report.failed]
            report.removed = retry(lambda: remove_unreloaded_rows(pipeline, reloaded, portal_id, load_ids))
        report.created = retry(lambda: create_empty_tables(pipeline, names))
        read = [name for name in names if name not in report.failed]  # a failed list is asked nothing more
        settle = first and lag_zone_holds_records(feed, read)
        if not settle:  # else the second pass closes them, after it read the lag zone
            closed = retry(lambda: close_references(pipeline, client, portal_id, tables=read,
                                                    observed=plan.run_time, limit=parents_limit))
            report.parents_loaded = {name: count for name, count in closed.loaded.items()}
            for name, ids in closed.gone.items():
                report.parents_loaded[name] = report.parents_loaded.get(name, 0) + len(ids)
            for note in closed.notes():
                feed.note(note)
            if archive_limit:  # after the references: the records to keep are loaded whole by now
                archived = retry(lambda: archive_pdfs(pipeline, client, portal_id, limit=archive_limit))
                report.archived = dict(archived.stored)
                for note in archived.notes():
                    feed.note(note)
        if settle:
            wait_out_lag(feed)
    finally:
        ticker_stop.set()
        feed.close()
        client.close()
        _fill_traffic(report, feed)
        report.wall_s = time.monotonic() - started
        if progress is not None:
            progress(feed.progress())
    if settle:
        report.add(run_sync(pipeline, resources=resources, progress=progress, base_url=base_url,
                            client_id=client_id, client_secret=client_secret, rate_limit_per_s=rate_limit_per_s,
                            chunk_pages=chunk_pages, chunk_seconds=chunk_seconds,
                            known_capabilities=known_capabilities, settle_lag=False))
        report.settled = True
        report.notes.append(f"run: records changed within the last {WINDOW_LAG_S} s before this first read were "
                            "read once that lag had passed (one more short window)")
        report.wall_s = time.monotonic() - started
    return report


def _parents_limit() -> int:
    """INVOICING_PARENT_FETCH_MAX (load/parents.py), or an InvoicingApiError naming the setting."""
    try:
        return parent_fetch_max()
    except ValueError as error:
        raise InvoicingApiError("configuration", PARENT_FETCH_MAX.name, detail=str(error),
                                hint="set it to a whole number of ids, or unset it (500)") from None


def _archive_limit() -> int:
    """INVOICING_PDF_ARCHIVE_MAX (load/pdf_archive.py), or an InvoicingApiError naming the setting."""
    try:
        return pdf_archive_max()
    except ValueError as error:
        raise InvoicingApiError("configuration", PDF_ARCHIVE_MAX_ENV, detail=str(error),
                                hint="set it to a whole number of PDFs per run, or unset it (0: no archive)") from None


def _failed_tables(feed: Feed, names: list[str]) -> dict[str, str]:
    """The tables whose read failed alone, with the error's line (a supplier document's events are read with
    it, so they fail with it). Raises the first error when every list failed: nothing was read, the run failed."""
    failures = feed.failed_reads()
    lists = [name for name in feed.reads if name != "user"]  # GET /me is the run's own first request
    if lists and all(name in failures for name in lists):
        raise failures[lists[0]]
    failed = {name: str(error) for name, error in failures.items()}
    if "supplier_documents" in failed and EVENTS.name in names:
        failed[EVENTS.name] = failed["supplier_documents"]
    for name, line in failed.items():
        feed.note(f"{name}: read failed, loaded no further than its committed chunks; the next run reads it "
                  f"again ({line})")
    return failed


def _prove_credentials(feed: Feed) -> RunPlan:
    """GET /me (`feed.prepare`): credentials, scope and server time, proven before the warehouse is touched.
    While that waits on the network, this thread imports pandas, which DuckDB's parameter binding imports
    at the warehouse's first query anyway: 0.3 s of a 2.6 s no-change run that no longer follows the wait."""
    with ThreadPoolExecutor(1, thread_name_prefix="prepare") as pool:
        planned = pool.submit(feed.prepare)
        import pandas  # noqa: F401
        return planned.result()


def _once(step: Callable[[], T]) -> T:
    """`step` run once: on a DuckDB file, where there is no other writer to lose a race to."""
    return step()


def _count_conflict(report: SyncReport) -> None:
    report.conflicts += 1


def _api_error_in(failure: BaseException) -> InvoicingApiError | None:
    cause: BaseException | None = failure
    while cause is not None:
        if isinstance(cause, InvoicingApiError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def _fill_traffic(report: SyncReport, feed: Feed) -> None:
    counts = feed.client.stats.snapshot()
    report.requests = counts["requests"]
    report.throttled = sum(counts["throttled"].values())
    report.retried = sum(counts["retried"].values())
    report.pages = {name: read.pages for name, read in feed.reads.items()}
    report.records_read = {name: read.records_read for name, read in feed.reads.items()}
    report.refused = sum(counts["refused"].values())
    report.notes = list(feed.notes) + feed.client.auth.notes
    report.degraded_notes = list(feed.degraded_notes)
    report.standing_notes = list(feed.standing_notes)
    report.capabilities = feed.learnt()
    limiter = feed.client.limiter
    report.limiter = {"window_locks": limiter.locks, "lost_locks": limiter.lost_locks,
                      "late_wakeups": limiter.late_wakeups, "stray_answers": limiter.stray_answers}


def _tick(feed: Feed, progress: Callable[[dict[str, dict]], None], stop: threading.Event) -> None:
    while not stop.wait(PROGRESS_EVERY_S):
        progress(feed.progress())
