"""The invoice archive's check: every archived PDF (pipelines/invoicing/load/pdf_archive.py) is still where its row
says, with the bytes its sha256 names.

A WARN, never a hold: a missing or altered file makes no figure wrong (no mart reads the archive), and holding
correct receivables back would not bring the file back. It names each file, its record and reference, so that the
copy can be restored from a backup (or the row deleted, and the PDF is downloaded again by the next archiving run).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import duckdb

from invoicing_warehouse.engine.names import PORTAL_COLUMN, RAW_DATASET
from invoicing_warehouse.runs.checks import SAMPLE_SIZE, WARN, WarehouseCheck
from pipelines.invoicing.settings import PDF_ARCHIVE_TABLE

CHUNK_BYTES = 1 << 20  # hashed by chunks: a PDF with scans in it can be tens of megabytes


def file_sha256(path: Path) -> str | None:
    """The sha256 of the file at `path` (hex), or None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(CHUNK_BYTES), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def pdf_archive_intact() -> WarehouseCheck:
    """Every row of the archive names a file that exists and hashes to its sha256."""
    relation = f"{RAW_DATASET}.{PDF_ARCHIVE_TABLE}"

    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        rows = connection.execute(
            f"select {PORTAL_COLUMN}, resource, record_id, reference, sha256, file_path from {relation} "
            f"order by {PORTAL_COLUMN}, resource, record_id").fetchall()
        missing: list[str] = []
        altered: list[str] = []
        for portal, resource, record_id, reference, sha256, file_path in rows:
            found = file_sha256(Path(file_path))
            if found != sha256:
                named = f"{portal} {resource} {record_id} ({reference or 'no reference'}): {file_path}"
                (missing if found is None else altered).append(named)
        bad = missing + altered
        description = (f"{len(missing)} archived PDF(s) missing, {len(altered)} altered since archived, of "
                       f"{len(rows)} ({'; '.join(bad[:SAMPLE_SIZE])}): restore them from a backup") if bad else None
        return (not bad, description,
                {"files": len(rows), "missing": len(missing), "altered": len(altered), "sample": bad[:SAMPLE_SIZE]})

    return WarehouseCheck("pdf_archive_intact", relation,
                          "Every archived invoice PDF is still there with the bytes its sha256 names (a flag naming "
                          "the files; no figure depends on it).", evaluate, severity=WARN)


ARCHIVE_CHECKS = (pdf_archive_intact(),)
