"""Suppliers and supplier documents of the hand-built portal (model_fixture.py); the documents and their
expected payables are described in test_payables_marts.py."""

from __future__ import annotations


def _midnight(day: str) -> str:
    return f"{day}T00:00:00Z"


def suppliers() -> list[dict]:
    """Two suppliers."""
    return [
        {"id": "s1", "name": "Fournil SA", "legal_identifier": "11111111100011"},
        {"id": "s2", "name": "Gros SARL", "legal_identifier": "22222222200022"},
    ]


def _sdoc(
    doc_id,
    supplier,
    reference,
    amount_vat,
    issue,
    due,
    status="approved",
    doc_type="invoice",
    payment=None,
    **extra,
) -> dict:
    row = {
        "id": doc_id,
        "supplier_id": supplier,
        "reference": reference,
        "type": doc_type,
        "status": status,
        "issue_date": _midnight(issue),
        "due_date": _midnight(due) if due else None,
        "amount_vat": amount_vat,
        "currency": "EUR",
        "origin": "manualImport",
        "payment_date": _midnight(payment) if payment else None,
        # every record carries lastUpdate (facts): its last change is the payment, else the issue
        "last_update": f"{payment or issue}T10:00:00Z",
    }
    row.update(extra)
    return row


def supplier_documents() -> list[dict]:
    """SD1..SD10 (SD9 deleted upstream), described in test_payables_marts.py."""
    return [
        _sdoc("sd1", "s1", "FA-1", "1200.00", "2026-01-05", "2026-02-04", amount="1000.00", vat="200.00"),
        _sdoc("sd2", "s1", "FA-2", "600.00", "2025-11-20", "2025-12-20"),
        _sdoc("sd3", "s1", "AV-3", "120.00", "2026-01-10", "2026-01-31", doc_type="creditNote"),
        _sdoc("sd4", "s2", "G-4", "360.00", "2026-01-02", "2026-01-25", status="paid", payment="2026-01-20"),
        _sdoc("sd5", "s2", "G-5", "480.00", "2026-01-25", "2026-02-24", status="toApprove"),
        _sdoc("sd6", "s2", "G-6", "90.00", "2026-01-03", "2026-01-09", status="disputed",
              last_update="2026-01-15T10:00:00Z"),
        _sdoc("sd7", "s2", "G-7", "240.00", "2026-01-20", None),
        _sdoc("sd8", "s2", "G-8", "150.00", "2025-12-15", "2026-01-14", status="paid", payment="2026-01-15"),
        _sdoc("sd9", "s2", "G-9", "999.00", "2025-12-15", "2026-01-14", _deleted_at="2026-01-29T10:00:00Z"),
        _sdoc("sd10", "s2", "G-10", "1500.50", "2026-01-28", "2026-03-02"),
    ]


def supplier_document_events() -> list[dict]:
    """The status history of SD4 (paid on 2026-01-20) and SD6 (disputed on 2026-01-15)."""
    return [
        {
            "id": "e1",
            "supplier_document_id": "sd4",
            "date": "2026-01-02T10:00:00Z",
            "action": "create",
            "previous_status": None,
            "status": "approved",
            "origin": "manualImport",
        },
        {
            "id": "e2",
            "supplier_document_id": "sd4",
            "date": "2026-01-20T10:00:00Z",
            "action": "declarePayment",
            "previous_status": "approved",
            "status": "paid",
            "origin": "manualImport",
        },
        {
            "id": "e3",
            "supplier_document_id": "sd6",
            "date": "2026-01-03T10:00:00Z",
            "action": "create",
            "previous_status": None,
            "status": "approved",
            "origin": "manualImport",
        },
        {
            "id": "e4",
            "supplier_document_id": "sd6",
            "date": "2026-01-15T10:00:00Z",
            "action": "dispute",
            "previous_status": "approved",
            "status": "disputed",
            "origin": "manualImport",
        },
    ]
