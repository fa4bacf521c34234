"""The invoice archive: the PDF of every issued invoice, credit note and supplier bill, kept once per version.

French businesses keep their invoices ten years (Code de commerce L123-22). The resources the catalogue gives a
`pdf` (settings.py: documents, supplier documents) name the records to keep (`PdfArchive.kept`); each record's
PDF (`GET /<resource>/{id}/pdf`, `{"pdfB64": ...}`) is written once into a folder of the portal beside the warehouse,
`<warehouse>.pdfs/<portal>/<resource>/<id>/<sha256>.pdf`, and its sha256 into `invoicing_raw.pdf_archive`.

Once per version: editing an issued document makes a new document, with its own id and `version` (api-facts:
`prevDoc`/`nextDoc`, the replaced one CANCELED), so a version is a record id. A changed `lastUpdate` is no new
version: it moves on a payment, a status the application sets, or no visible change at all (api-facts), and the
legal document of a version does not change with it. A supplier bill's PDF is the file its supplier sent.

Paced by the run's one client (its limiter, its token), at most INVOICING_PDF_ARCHIVE_MAX files per run (0, the
default: no archive). Resumable: a file is written whole (a temporary name, then a rename) and named by its hash
before its row is loaded; a run killed in between leaves files that the next run adopts by their name (their
bytes checked against it) instead of downloading them again. A 404 means not yet available: asked again next run.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import dlt

from invoicing_warehouse.engine.environment.api_settings import PDF_ARCHIVE_MAX
from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.names import PORTAL_COLUMN
from invoicing_warehouse.engine.private_files import private_dir, write_private_file
from pipelines.invoicing import MERGE
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.load.raw_upkeep import select_rows
from pipelines.invoicing.read.by_id import FETCHERS, NOT_THE_RECORDS
from pipelines.invoicing.record_ids import child_path, record_id_problem
from pipelines.invoicing.settings import ENDPOINTS, PDF_ARCHIVE_COLUMNS, PDF_ARCHIVE_TABLE, Columns, Endpoint

PDF_ARCHIVE_MAX_ENV = PDF_ARCHIVE_MAX.name
# opt-in: files of legal value go where the user decided to keep and back them up
DEFAULT_PDF_ARCHIVE_MAX = PDF_ARCHIVE_MAX.default
ARCHIVE_KEY = (PORTAL_COLUMN, "resource", "record_id", "sha256")


@dataclass
class ArchiveRun:
    """What one run of the archive did, per resource: files stored or adopted, PDFs not yet available."""

    stored: dict[str, int] = field(default_factory=dict)
    adopted: int = 0  # files a killed run had written but not recorded
    pending: dict[str, int] = field(default_factory=dict)  # answered 404: asked again next run
    refused: dict[tuple[str, str], str] = field(default_factory=dict)  # that record's alone (a 4xx, a bad answer)
    left: int = 0  # records to archive beyond the run's bound
    stopped: str | None = None  # why the archive stopped early (the service failing): resumed next run

    def notes(self) -> list[str]:
        """The run's `archive: ...` notes."""
        if not (self.stored or self.adopted or self.pending or self.refused or self.left or self.stopped):
            return []
        stored = ", ".join(f"{count} {name}" for name, count in sorted(self.stored.items())) or "none"
        line = f"archive: PDFs stored: {stored}"
        if self.adopted:
            line += f"; {self.adopted} left by an interrupted run recorded"
        if self.pending:
            line += f"; {sum(self.pending.values())} not yet available (asked again next run)"
        if self.left:
            line += f"; {self.left} beyond {PDF_ARCHIVE_MAX_ENV} left for the next runs"
        notes = [line]
        notes += [f"archive: {name} {record_id}: {why}" for (name, record_id), why in sorted(self.refused.items())]
        if self.stopped:
            notes.append(f"archive: stopped early, resumed next run ({self.stopped})")
        return notes


def pdf_archive_max() -> int:
    """INVOICING_PDF_ARCHIVE_MAX (PDFs downloaded per run, 0: no archive); raises ValueError naming it."""
    return current_environment().value(PDF_ARCHIVE_MAX)


def archive_root(pipeline: dlt.Pipeline) -> Path:
    """`<warehouse>.pdfs` beside the warehouse: the pipeline works in `.<warehouse>.dlt` (WarehouseTarget.work_dir),
    which sits beside the DuckDB file, the lake's local data folder, or a lake's local state folder."""
    work_dir = Path(pipeline.pipelines_dir).resolve()
    return work_dir.parent / f"{work_dir.name.removeprefix('.').removesuffix('.dlt')}.pdfs"


def archive_pdfs(pipeline: dlt.Pipeline, client: InvoicingClient, portal_id: str, *, limit: int) -> ArchiveRun:
    """Stores the PDFs of the portal's records to keep that are not archived yet, at most `limit`, and loads
    their rows; records files an interrupted run left first. Never raises for the service: it stops and notes."""
    outcome = ArchiveRun()
    folder = archive_root(pipeline) / portal_id
    archived = _archived(pipeline, portal_id)
    jobs = [job for job in _to_archive(pipeline, portal_id) if (job[0], job[1]) not in archived]
    rows = list(_files_on_disk(folder, portal_id, {(job[0], job[1]): job for job in jobs}))
    outcome.adopted = len(rows)
    wanted = [job for job in jobs if (job[0], job[1]) not in {_key(row) for row in rows}]
    outcome.left = max(0, len(wanted) - limit)
    try:
        rows += _download(client, wanted[:limit], folder, portal_id, outcome)
    except InvoicingApiError as error:  # credentials, rate limit, server errors: the figures are loaded already
        outcome.stopped = str(error)
    if rows:
        pipeline.run(_archive_source(rows), loader_file_format="parquet")
    return outcome


def _key(row: dict) -> tuple[str, str]:
    return row["resource"], row["record_id"]


def _archived(pipeline: dlt.Pipeline, portal_id: str) -> set[tuple[str, str]]:
    """(resource, record id) of the portal's archived PDFs (none before the table exists)."""
    with pipeline.sql_client() as sql:
        table = sql.make_qualified_table_name(PDF_ARCHIVE_TABLE)
        try:
            rows = select_rows(sql, f"select resource, record_id from {table} where {PORTAL_COLUMN} = ?", portal_id)
        except Exception:  # the table does not exist yet  # noqa: BLE001
            return set()
    return {(str(resource), str(record_id)) for resource, record_id in rows}


def _to_archive(pipeline: dlt.Pipeline, portal_id: str) -> list[tuple[str, str, str | None, object]]:
    """(resource, id, reference, lastUpdate) of the portal's live records the catalogue keeps, oldest change first."""
    jobs = []
    with pipeline.sql_client() as sql:
        for endpoint in ENDPOINTS.values():
            if endpoint.pdf is None:
                continue
            table = sql.make_qualified_table_name(endpoint.name)
            try:
                select_rows(sql, f"select 1 from {table} limit 0")
            except Exception:  # the resource is not loaded yet  # noqa: BLE001, S112
                continue
            # outside the `try`: a `kept` the table cannot answer is a bug to see, never "nothing to keep"
            rows = select_rows(sql, f"select id, reference, last_update from {table} where {PORTAL_COLUMN} = ? "
                                    f"and _deleted_at is null and ({endpoint.pdf.kept})", portal_id)
            jobs += [(endpoint.name, str(row[0]), row[1], row[2]) for row in rows
                     if record_id_problem(str(row[0])) is None]  # an id only ever becomes one folder name
    return sorted(jobs, key=lambda job: (str(job[3]), job[0], job[1]))


def _download(client: InvoicingClient, jobs: list, folder: Path, portal_id: str, outcome: ArchiveRun) -> list[dict]:
    """GETs each job's PDF (threads; the client's limiter paces them) and stores it; the rows of the files stored."""

    def one(job: tuple[str, str, str | None, object]) -> dict | str | None:
        name, record_id, _, _ = job
        endpoint = ENDPOINTS[name]
        assert endpoint.pdf is not None
        try:
            answer = client.get(child_path(endpoint.pdf.path, record_id), tag=f"{name}_pdf")
        except InvoicingApiError as error:
            if error.status == 404:
                return None
            if error.status is not None and 400 <= error.status < 500 and error.status not in NOT_THE_RECORDS:
                return f"GET {endpoint.pdf.path}: HTTP {error.status}"
            raise
        content = _pdf_bytes(answer)
        if isinstance(content, str):
            return f"GET {endpoint.pdf.path}: {content}"
        return _store(folder, endpoint, job, content, portal_id)

    rows = []
    with ThreadPoolExecutor(FETCHERS, thread_name_prefix="pdf") as pool:
        for job, result in zip(jobs, pool.map(one, jobs), strict=True):
            if result is None:
                outcome.pending[job[0]] = outcome.pending.get(job[0], 0) + 1
            elif isinstance(result, str):
                outcome.refused[(job[0], job[1])] = result
            else:
                rows.append(result)
                outcome.stored[job[0]] = outcome.stored.get(job[0], 0) + 1
    return rows


def _pdf_bytes(answer: object) -> bytes | str:
    """The PDF of a `{"pdfB64": ...}` answer, or why the answer holds none."""
    encoded = answer.get("pdfB64") if isinstance(answer, dict) else None
    if not isinstance(encoded, str) or not encoded:
        return "the answer has no pdfB64 string"
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return "pdfB64 is not base64"


def _store(folder: Path, endpoint: Endpoint, job: tuple, content: bytes, portal_id: str) -> dict:
    """Writes the file whole under its hash, then returns its row."""
    name, record_id, reference, last_update = job
    digest = hashlib.sha256(content).hexdigest()
    path = private_dir(folder / endpoint.name / record_id) / f"{digest}.pdf"
    write_private_file(path, content)
    return _row(portal_id, name, record_id, reference, last_update, digest, len(content), path)


def _row(portal_id: str, name: str, record_id: str, reference: object, last_update: object, digest: str,
         size: int, path: Path) -> dict:
    return {PORTAL_COLUMN: portal_id, "resource": name, "record_id": record_id, "reference": reference,
            "record_last_update": last_update, "sha256": digest, "size_bytes": size, "file_path": str(path),
            "archived_at": datetime.now(UTC)}


def _files_on_disk(folder: Path, portal_id: str, unarchived: dict[tuple[str, str], tuple]) -> Iterator[dict]:
    """Rows for the files of the `unarchived` records found in the portal's folder whose bytes match their name
    (what a killed run stored and did not record); the folders of archived records are not read again."""
    for (name, record_id), job in unarchived.items():
        base = folder / name / record_id
        if not base.is_dir():
            continue
        for path in sorted(base.glob("*.pdf")):
            content = path.read_bytes()
            digest = hashlib.sha256(content).hexdigest()
            if path.stem == digest:  # else not ours, or not whole: downloaded again
                yield _row(portal_id, name, record_id, job[2], job[3], digest, len(content), path)
                break


@dlt.source(name="invoicing", section="invoicing")
def _archive_source(rows: list[dict]) -> list:
    """The archive's rows as table `pdf_archive`, merged on (portal, resource, record id, hash)."""
    columns: Columns = {name: {"name": name, **hint} for name, hint in PDF_ARCHIVE_COLUMNS.items()}
    return [dlt.resource(rows, name=PDF_ARCHIVE_TABLE, primary_key=ARCHIVE_KEY, columns=columns,
                         write_disposition=MERGE)]
