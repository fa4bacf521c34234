"""The invoice archive (issue 43, point 9): over real HTTP against the sandbox, on both contract profiles.

The truth is the sandbox's own records and bytes: which records are issued (its documents' type, subtype, status
and version links; its supplier documents and when their PDF becomes available) and the PDF it serves for each
(`Portal.document_pdf`, `Portal.supplier_document_pdf`, decoded and hashed here), never the product's table.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from invoicing_sandbox.contract import ContractProfile
from invoicing_warehouse.runs.archive_checks import pdf_archive_intact
from tests.pipelines.sandbox_syncs import sync

ENV = "INVOICING_PDF_ARCHIVE_MAX"


def _issued_documents(sb) -> set[str]:
    """The sandbox's issued invoices and credit notes: not quotations, not proformas, not drafts; a replaced
    version (CANCELED with a next version) was issued too."""
    return {i for i, d in sb.portal.stores["documents"].records.items()
            if d["type"] == "INVOICE" and d.get("subtype") != "PROFORMA"
            and (d["status"] in ("VALIDATED", "PAID") or (d["status"] == "CANCELED" and d.get("nextDoc")))}


def _supplier_documents(sb) -> tuple[set[str], set[str]]:
    """(available, not yet available) supplier documents, by when the sandbox makes their PDF."""
    now = sb.portal.now_iso()
    records = sb.portal.stores["supplier_documents"].records
    return ({i for i, d in records.items() if d["_pdfAt"] <= now}, {i for i, d in records.items() if d["_pdfAt"] > now})


def _sandbox_sha256(sb, resource: str, record_id: str) -> str:
    answer = (sb.portal.document_pdf(record_id) if resource == "documents"
              else sb.portal.supplier_document_pdf(record_id))
    return hashlib.sha256(base64.b64decode(answer["pdfB64"])).hexdigest()


def _archive(warehouse: str) -> list[tuple]:
    with duckdb.connect(warehouse, read_only=True) as connection:
        return connection.execute("select resource, record_id, sha256, file_path from invoicing_raw.pdf_archive "
                                  "order by 1, 2").fetchall()


def _pdf_requests(report) -> int:
    return sum(count for tag, count in report.requests.items() if tag.endswith("_pdf"))


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_every_issued_document_and_available_bill_is_archived_with_the_sandboxs_own_hash(contract, start_sandbox,
                                                                                          warehouse, monkeypatch):
    sb = start_sandbox(seed=11, scale=12, contract=ContractProfile.named(contract))
    supplier = next(iter(sb.portal.stores["suppliers"].records))
    late = sb.portal.receive_supplier_document(supplier, {"reference": "FA-LATE", "amount": 10})["id"]
    monkeypatch.setenv(ENV, "10000")
    report = sync(sb, warehouse)
    issued = _issued_documents(sb)
    available, not_yet = _supplier_documents(sb)
    assert issued and available and late in not_yet  # the seed has what the test needs
    rows = _archive(warehouse)
    assert {(r, i) for r, i, _, _ in rows} == ({("documents", i) for i in issued}
                                              | {("supplier_documents", i) for i in available})
    for resource, record_id, sha256, file_path in rows:
        assert sha256 == _sandbox_sha256(sb, resource, record_id)
        assert hashlib.sha256(Path(file_path).read_bytes()).hexdigest() == sha256
        assert Path(file_path).parent.name == record_id and Path(file_path).parent.parent.name == resource
    assert _pdf_requests(report) == len(rows) + len(not_yet)  # a 404 is asked, not an error
    assert any("not yet available" in note for note in report.notes), report.notes
    assert report.archived == {"documents": len(issued), "supplier_documents": len(available)}

    # the late bill's PDF becomes available: the next run stores it and asks nothing already stored again
    sb.clock.advance(timedelta(minutes=6))
    again = sync(sb, warehouse)
    assert _pdf_requests(again) == len(not_yet)
    assert {i for r, i, _, _ in _archive(warehouse) if r == "supplier_documents"} == available | not_yet
    assert pdf_archive_intact().run(duckdb.connect(warehouse, read_only=True)).passed


def test_the_archive_is_bounded_per_run_and_resumes_without_downloading_twice(start_sandbox, warehouse,
                                                                              monkeypatch):
    sb = start_sandbox(seed=11, scale=12)
    total = len(_issued_documents(sb)) + len(_supplier_documents(sb)[0])
    assert total >= 9, total  # three runs of 3 and a few left (the seed has what the test needs)
    monkeypatch.setenv(ENV, "3")
    first = sync(sb, warehouse)
    assert _pdf_requests(first) == 3 and len(_archive(warehouse)) == 3
    assert any(f"{total - 3} beyond INVOICING_PDF_ARCHIVE_MAX" in note for note in first.notes), first.notes
    second = sync(sb, warehouse)
    assert _pdf_requests(second) == 3 and len(_archive(warehouse)) == 6
    # a run killed after writing its files and before loading their rows: rows gone, files kept
    with duckdb.connect(warehouse) as connection:
        lost = connection.execute("delete from invoicing_raw.pdf_archive where record_id in (select record_id "
                                  "from invoicing_raw.pdf_archive order by record_id limit 2) returning record_id"
                                  ).fetchall()
    assert len(lost) == 2
    third = sync(sb, warehouse)
    assert any("2 left by an interrupted run recorded" in note for note in third.notes), third.notes
    assert _pdf_requests(third) == 3 and len(_archive(warehouse)) == 9  # the 2 adopted, 3 new ones fetched
    for resource, record_id, sha256, _ in _archive(warehouse):
        assert sha256 == _sandbox_sha256(sb, resource, record_id)


def test_off_by_default_and_a_bad_bound_stops_the_sync_before_the_warehouse_is_touched(start_sandbox, warehouse,
                                                                                     monkeypatch):
    from pipelines.invoicing.errors import InvoicingApiError

    sb = start_sandbox(seed=11, scale=6)
    monkeypatch.delenv(ENV, raising=False)
    report = sync(sb, warehouse)
    assert _pdf_requests(report) == 0 and report.archived == {}
    monkeypatch.setenv(ENV, "lots")
    with pytest.raises(InvoicingApiError) as raised:
        sync(sb, Path(warehouse).with_name("other.duckdb").as_posix())
    assert ENV in str(raised.value) and "'lots'" in str(raised.value)
    assert not Path(warehouse).with_name("other.duckdb").exists()


def test_the_gate_flags_a_missing_or_altered_file_naming_it_and_holds_nothing(start_sandbox, warehouse,
                                                                            monkeypatch):
    sb = start_sandbox(seed=11, scale=6)
    monkeypatch.setenv(ENV, "100")
    sync(sb, warehouse)
    rows = _archive(warehouse)
    assert len(rows) >= 2
    with duckdb.connect(warehouse, read_only=True) as connection:
        assert pdf_archive_intact().run(connection).passed
    altered, missing = Path(rows[0][3]), Path(rows[1][3])
    altered.write_bytes(altered.read_bytes() + b"%")
    missing.unlink()
    with duckdb.connect(warehouse, read_only=True) as connection:
        result = pdf_archive_intact().run(connection)
    assert not result.passed and not result.blocks and result.severity == "WARN"
    assert result.metadata["missing"] == 1 and result.metadata["altered"] == 1
    assert rows[0][1] in result.description and rows[1][1] in result.description
