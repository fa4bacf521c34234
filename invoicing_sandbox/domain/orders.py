"""The `orderBy` values of every list and the sort key each one uses (ties are broken by id)."""

from __future__ import annotations

from .store import sort_key


def _field(name: str):
    def key(record: dict) -> tuple:
        return sort_key(record.get(name))

    return key


def _customer_phone(record: dict) -> tuple:
    # spec: ordering by phone uses the mobile number first, then the landline
    return sort_key(record.get("mobile") or record.get("phone"))


def _to_name(record: dict) -> tuple:
    return sort_key((record.get("to") or {}).get("name"))


KEY_FUNCTIONS = {
    "items": {
        "lastUpdate": _field("lastUpdate"),
        "name": _field("name"),
        "type": _field("type"),
        "reference": _field("reference"),
        "price": _field("price"),
    },
    "customers": {
        "lastUpdate": _field("lastUpdate"),
        "name": _field("name"),
        "reference": _field("reference"),
        "phone": _customer_phone,
        "dueAmount": _field("_due"),
        "documentsCount": _field("_count"),
    },
    "documents": {
        "lastUpdate": _field("lastUpdate"),
        "emitDate": _field("emitDate"),
        "to.name": _to_name,
        "reference": _field("reference"),
        "amount": _field("amount"),
        "refInt": _field("referenceInternal"),
    },
    "transactions": {
        "lastUpdate": _field("lastUpdate"),
        "date": _field("date"),
        "customerName": _field("customerName"),
        "amount": _field("amount"),
        "method": _field("method"),
    },
    "transaction_usages": {
        "lastUpdate": _field("lastUpdate"),
        "date": _field("date"),
        "amount": _field("amount"),
    },
    "suppliers": {
        "lastUpdate": _field("lastUpdate"),
        "name": _field("name"),
        "legalIdentifier": _field("legalIdentifier"),
    },
    "supplier_documents": {
        "lastUpdate": _field("lastUpdate"),
        "issueDate": _field("issueDate"),
        "dueDate": _field("dueDate"),
        "amount": _field("amount"),
        "amountVat": _field("amountVat"),
        "reference": _field("reference"),
        "status": _field("status"),
    },
    "webhooks": {"lastUpdate": _field("lastUpdate"), "url": _field("url")},
}

# default orderBy of each list (the spec's defaults; suppliers and supplier documents: ours)
DEFAULT_ORDER = {
    "items": "name",
    "customers": "name",
    "documents": "emitDate",
    "transactions": "date",
    "transaction_usages": "date",
    "suppliers": "name",
    "supplier_documents": "issueDate",
    "webhooks": "lastUpdate",
}

# GET /customers/{id}/transactions does not offer customerName (spec)
CUSTOMER_TRANSACTION_ORDERS = ("lastUpdate", "date", "amount", "method")
