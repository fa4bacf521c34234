"""Records as the API returns them: fresh dicts, every key of docs/resources.md, JSON-style numbers."""

from __future__ import annotations

from decimal import Decimal
from typing import cast

from .money import number_out

ITEM_FIELDS = (
    "id",
    "portalId",
    "name",
    "description",
    "reference",
    "type",
    "unit",
    "price",
    "vat",
    "buyingPrice",
    "metadata",
    "lastUpdate",
)
CUSTOMER_FIELDS = (
    "id",
    "portalId",
    "name",
    "reference",
    "type",
    "email",
    "phone",
    "mobile",
    "fax",
    "siret",
    "vat",
    "address",
    "delivery",
    "contacts",
)
CUSTOMER_TAIL = ("deleted", "deletedAt", "metadata", "lastUpdate")
TRANSACTION_FIELDS = ("id", "portalId", "customerId", "customerName", "documentId", "amount")
TRANSACTION_TAIL = ("refundedAmount", "date", "method", "metadata", "lastUpdate")
USAGE_FIELDS = (
    "id",
    "portalId",
    "type",
    "customerId",
    "invoiceId",
    "transactionId",
    "transaction",
    "creditNoteId",
    "amount",
    "date",
    "metadata",
    "lastUpdate",
)
SUPPLIER_FIELDS = (
    "id",
    "portalId",
    "name",
    "legalIdentifier",
    "email",
    "phone",
    "address",
    "tags",
    "metadata",
    "lastUpdate",
)
SUPPLIER_DOCUMENT_FIELDS = (
    "id",
    "portalId",
    "supplierId",
    "fileKey",
    "status",
    "reference",
    "type",
    "issueDate",
    "dueDate",
    "amount",
    "vat",
    "amountVat",
    "currency",
    "origin",
    "tags",
    "paymentDate",
    "metadata",
    "lastUpdate",
)
EVENT_FIELDS = ("id", "supplierDocumentId", "date", "action", "previousStatus", "status", "origin")
WEBHOOK_FIELDS = ("id", "portalId", "url", "events", "enabled", "failures", "metadata", "lastUpdate")
USER_FIELDS = (
    "id",
    "name",
    "email",
    "mobile",
    "phone",
    "address",
    "creationDate",
    "lastConnectionDate",
    "metadata",
)
PORTAL_FIELDS = ("id", "email", "enterprise", "referenceAssignmentMethod", "metadata", "lastUpdate")
ENTERPRISE_FIELDS = ("name", "tradeName", "siren", "siret", "vat", "address")
ADDRESS_FIELDS = ("street", "postalCode", "city", "country")


def plain(value: object) -> object:
    """A deep copy with Decimals turned into JSON numbers."""
    # exact types, tested once (a hot path); mypy does not narrow on `kind`, hence the casts
    kind = type(value)
    if kind is str or value is None or kind is int or kind is bool:
        return value
    if kind is Decimal:
        return number_out(cast(Decimal, value))
    if kind is dict:
        return {key: plain(inner) for key, inner in cast(dict, value).items()}
    if kind is list:
        return [plain(inner) for inner in cast(list, value)]
    return value


def pick(record: dict, fields: tuple) -> dict:
    """The named fields of `record` (null when unset), converted."""
    get = record.get
    return {name: plain(get(name)) for name in fields}


def address(value: dict | None) -> dict | None:
    """An address with its four keys."""
    return None if value is None else pick(value, ADDRESS_FIELDS)


def render_item(record: dict) -> dict:
    """GET /items/{id}."""
    return pick(record, ITEM_FIELDS)


def render_customer(record: dict) -> dict:
    """GET /customers/{id}, with the cached derived `dueAmount` and `documentsCount`."""
    out = pick(record, CUSTOMER_FIELDS)
    out["address"] = address(record.get("address"))
    out["delivery"] = address(record.get("delivery"))
    out["dueAmount"] = number_out(record["_due"])
    out["documentsCount"] = record["_count"]
    out.update(pick(record, CUSTOMER_TAIL))
    out["deleted"] = bool(record.get("deleted"))
    return out


def _num(value):
    # number_out inlined for the hot path (documents are rendered 100 at a time)
    if value is None:
        return None
    whole = int(value)
    return whole if whole == value else float(value)


def _address(value: dict | None) -> dict | None:
    if value is None:
        return None
    get = value.get
    return {
        "street": get("street"),
        "postalCode": get("postalCode"),
        "city": get("city"),
        "country": get("country"),
    }


def _line(line: dict) -> dict:
    get = line.get
    return {
        "lineType": get("lineType"),
        "itemId": get("itemId"),
        "name": get("name"),
        "description": get("description"),
        "reference": get("reference"),
        "price": _num(get("price")),
        "quantity": _num(get("quantity")),
        "unit": get("unit"),
        "vat": _num(get("vat")),
        "discount": _num(get("discount")),
        "buyingPrice": _num(get("buyingPrice")),
    }


def render_document(record: dict) -> dict:
    """GET /documents/{id}, with `totalPayments` and `remaining` from its usages."""
    get = record.get
    to = get("to") or {}
    issuer = get("from") or {}
    discount = get("discount")
    paid = record["_paid"]
    return {
        "id": record["id"],
        "portalId": get("portalId"),
        "customerId": get("customerId"),
        "type": get("type"),
        "subtype": get("subtype"),
        "status": get("status"),
        "reference": get("reference"),
        "referenceInternal": get("referenceInternal"),
        "title": get("title"),
        "messageTop": get("messageTop"),
        "messageBottom": get("messageBottom"),
        "emitDate": get("emitDate"),
        "dueDate": get("dueDate"),
        "to": {"name": to.get("name"), "email": to.get("email"), "address": _address(to.get("address"))},
        "from": {
            "name": issuer.get("name"),
            "tradeName": issuer.get("tradeName"),
            "email": issuer.get("email"),
        },
        "lines": [_line(line) for line in get("lines") or ()],
        "discount": None
        if discount is None
        else {"type": discount.get("type"), "amount": _num(discount.get("amount"))},
        "amount": _num(get("amount")),
        "vat": _num(get("vat")),
        "amountVat": _num(get("amountVat")),
        "amountNet": _num(get("amountNet")),
        "amountVatNet": _num(record["amountVatNet"]),
        "amountNotice": get("amountNotice"),
        "vatExemptionType": get("vatExemptionType"),
        "paymentMethod": get("paymentMethod"),
        "totalPayments": _num(paid),
        "remaining": _num(record["amountVatNet"] - paid),
        "invoiceId": get("invoiceId"),
        "version": get("version"),
        "prevDoc": get("prevDoc"),
        "nextDoc": get("nextDoc"),
        "messages": [dict(message) for message in get("messages") or ()],
        "metadata": get("metadata"),
        "lastUpdate": get("lastUpdate"),
    }


def render_transaction(record: dict) -> dict:
    """GET /transactions/{id}, with `usedAmount` from its usages."""
    out = pick(record, TRANSACTION_FIELDS)
    out["usedAmount"] = number_out(record["_used"])
    out.update(pick(record, TRANSACTION_TAIL))
    return out


def render_usage(record: dict) -> dict:
    """GET /transaction-usages/{id}."""
    return pick(record, USAGE_FIELDS)


def render_supplier(record: dict) -> dict:
    """GET /suppliers/{id}."""
    out = pick(record, SUPPLIER_FIELDS)
    out["address"] = address(record.get("address"))
    out["tags"] = list(record.get("tags") or ())
    return out


def render_supplier_document(record: dict) -> dict:
    """GET /supplier-documents/{id}."""
    out = pick(record, SUPPLIER_DOCUMENT_FIELDS)
    out["tags"] = list(record.get("tags") or ())
    return out


def render_event(record: dict) -> dict:
    """One element of GET /supplier-documents/{id}/events."""
    return pick(record, EVENT_FIELDS)


def render_webhook(record: dict) -> dict:
    """GET /webhooks/{id}."""
    return pick(record, WEBHOOK_FIELDS)


def render_user(record: dict) -> dict:
    """GET /me."""
    out = pick(record, USER_FIELDS)
    out["address"] = address(record.get("address"))
    return out


def render_portal(record: dict) -> dict:
    """GET /portal."""
    out = pick(record, PORTAL_FIELDS)
    enterprise = pick(record.get("enterprise") or {}, ENTERPRISE_FIELDS)
    enterprise["address"] = address(enterprise.get("address"))
    out["enterprise"] = enterprise
    return out


RENDERERS = {
    "items": render_item,
    "customers": render_customer,
    "documents": render_document,
    "transactions": render_transaction,
    "transaction_usages": render_usage,
    "suppliers": render_supplier,
    "supplier_documents": render_supplier_document,
    "webhooks": render_webhook,
}
