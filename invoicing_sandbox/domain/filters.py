"""The filters of every list, by query parameter name: each turns the raw string into a predicate."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from invoicing_sandbox.clock import iso, parse_iso
from invoicing_sandbox.errors import bad_request

from .money import number_text, to_decimal
from .state import PortalState

Predicate = Callable[[dict], bool]
# a filter builder: (raw value, portal state) -> (predicate, candidate ids or None)
Builder = Callable[[str, PortalState], tuple]


def parse_number(name: str, text: str) -> Decimal:
    """A numeric query parameter, or 400 naming it."""
    try:
        return to_decimal(text.strip())
    except ValueError:
        raise bad_request(f"query parameter {name} must be a number, got {text!r}") from None


def parse_time(name: str, text: str) -> str:
    """An ISO 8601 query parameter, normalised to the stored form (second precision, Z), or 400."""
    try:
        return iso(parse_iso(text.strip()))
    except (ValueError, TypeError):
        raise bad_request(f"query parameter {name} must be an ISO 8601 date-time, got {text!r}") from None


def parse_enum(name: str, text: str, values: tuple) -> str:
    """An enumerated query parameter, or 400 listing the allowed values."""
    if text not in values:
        raise bad_request(f"query parameter {name} must be one of {', '.join(values)}, got {text!r}")
    return text


def _get(record: dict, field: str):
    if "." in field:
        outer, inner = field.split(".", 1)
        return (record.get(outer) or {}).get(inner)
    return record.get(field)


def equals(field: str, values: tuple | None = None) -> Builder:
    """Exact match on `field` (checked against `values` when given)."""

    def build(text: str, state) -> tuple:
        if values is not None:
            parse_enum(field, text, values)
        return (lambda record: _get(record, field) == text), None

    return build


def equals_id(field: str, index_name: str | None = None) -> Builder:
    """Exact id match; `index_name` names a state index id -> set of record ids to narrow the scan."""

    def build(text: str, state) -> tuple:
        candidates = getattr(state, index_name).get(text, ()) if index_name else None
        return (lambda record: record.get(field) == text), candidates

    return build


def contains(field: str) -> Builder:
    """Case-insensitive substring on `field`."""

    def build(text: str, state) -> tuple:
        needle = text.lower()
        return (lambda record: needle in (_get(record, field) or "").lower()), None

    return build


def equals_casefold(field: str) -> Builder:
    """Case-insensitive exact match (e-mail addresses)."""

    def build(text: str, state) -> tuple:
        needle = text.lower()
        return (lambda record: (_get(record, field) or "").lower() == needle), None

    return build


def at_least(field: str, parse=parse_number) -> Builder:
    """Inclusive lower bound (numbers, or dates when `parse` is parse_time)."""

    def build(text: str, state) -> tuple:
        bound = parse(field, text)
        return (lambda record: (value := _get(record, field)) is not None and value >= bound), None

    return build


def at_most(field: str, parse=parse_number) -> Builder:
    """Inclusive upper bound."""

    def build(text: str, state) -> tuple:
        bound = parse(field, text)
        return (lambda record: (value := _get(record, field)) is not None and value <= bound), None

    return build


def all_tags(field: str = "tags") -> Builder:
    """Comma-separated tags: the record must carry every one of them (case-insensitive)."""

    def build(text: str, state) -> tuple:
        wanted = {tag.strip().lower() for tag in text.split(",") if tag.strip()}
        return (lambda record: wanted <= {tag.lower() for tag in record.get(field) or ()}), None

    return build


def search(fields: Callable[[dict, object], list]) -> Builder:
    """Words separated by spaces; every word must be a case-insensitive substring of one of the fields."""

    def build(text: str, state) -> tuple:
        words = [word.lower() for word in text.split() if word]

        def predicate(record: dict) -> bool:
            haystack = [(value or "").lower() for value in fields(record, state)]
            return all(any(word in value for value in haystack) for word in words)

        return predicate, None

    return build


def _flatten(value) -> list:
    if value is None:
        return []
    if isinstance(value, dict):
        return [text for inner in value.values() for text in _flatten(inner)]
    if isinstance(value, list):
        return [text for inner in value for text in _flatten(inner)]
    return [str(value)]


def _customer_text(record: dict, state) -> list:
    texts = [
        record.get(name) for name in ("name", "reference", "email", "phone", "mobile", "fax", "siret", "vat")
    ]
    for name in ("address", "contacts", "delivery"):
        texts.extend(_flatten(record.get(name)))
    return texts


def _document_text(record: dict, state) -> list:
    return [
        record.get("title"),
        record.get("reference"),
        record.get("referenceInternal"),
        record.get("messageTop"),
        record.get("messageBottom"),
        (record.get("to") or {}).get("name"),
        number_text(record.get("amountVatNet")),
        number_text(record.get("amountNet")),
    ]


def _supplier_document_text(record: dict, state) -> list:
    supplier = state.stores["suppliers"].records.get(record.get("supplierId")) or {}
    return [record.get("reference"), supplier.get("name"), *(record.get("tags") or ())]


def document_status(text: str, state) -> tuple:
    """Customers with a late invoice (LATE), or with a VALIDATED document and none late (ACTIVE)."""
    wanted = parse_enum("documentStatus", text, ("ACTIVE", "LATE"))
    today = state.today_iso()
    documents = state.stores["documents"].records

    def predicate(customer: dict) -> bool:
        if customer.get("deleted"):
            return False
        own = [documents[i] for i in state.docs_by_customer.get(customer["id"], ())]
        late = any(state.is_late(document, today) for document in own)
        if wanted == "LATE":
            return late
        return not late and any(document["status"] == "VALIDATED" for document in own)

    return predicate, None


DOCUMENT_STATUSES = ("DRAFT", "VALIDATED", "CANCELED", "CONVERTED", "ACCEPTED", "REFUSED", "PAID")
SUPPLIER_DOCUMENT_STATUSES = ("toApprove", "approved", "refused", "disputed", "paid")

FILTERS: dict[str, dict[str, Builder]] = {
    "items": {
        "type": equals("type", ("product", "service")),
        "name": contains("name"),
        "reference": equals("reference"),
        "minimumPrice": at_least("price"),
        "maximumPrice": at_most("price"),
        "search": search(lambda r, s: [r.get("name"), r.get("description"), r.get("reference")]),
    },
    "customers": {
        "name": contains("name"),
        "reference": equals("reference"),
        "email": equals_casefold("email"),
        "minimumDueAmount": at_least("_due"),
        "maximumDueAmount": at_most("_due"),
        "documentStatus": document_status,
        "search": search(_customer_text),
    },
    "documents": {
        "status": equals("status", DOCUMENT_STATUSES),
        "type": equals("type", ("INVOICE", "QUOTATION", "OTHER")),
        "subtype": equals("subtype", ("CREDIT_NOTE", "PROFORMA", "DEPOSIT")),
        "reference": equals("reference"),
        "customerId": equals_id("customerId", "docs_by_customer"),
        "startEmitDate": at_least("emitDate", parse_time),
        "endEmitDate": at_most("emitDate", parse_time),
        "minimumAmount": at_least("amountNet"),
        "maximumAmount": at_most("amountNet"),
        "minimumAmountWithVat": at_least("amountVatNet"),
        "maximumAmountWithVat": at_most("amountVatNet"),
        "search": search(_document_text),
    },
    "transactions": {
        "startDate": at_least("date", parse_time),
        "endDate": at_most("date", parse_time),
        "customerId": equals_id("customerId", "transactions_by_customer"),
        "minimumAmount": at_least("amount"),
        "maximumAmount": at_most("amount"),
    },
    "transaction_usages": {
        "startDate": at_least("date", parse_time),
        "endDate": at_most("date", parse_time),
        "customerId": equals_id("customerId"),
        "minimumAmount": at_least("amount"),
        "maximumAmount": at_most("amount"),
        "documentId": lambda text, state: (
            (lambda r: text in (r.get("invoiceId"), r.get("creditNoteId"))),
            state.usages_by_document.get(text, ()),
        ),
    },
    "suppliers": {
        "name": contains("name"),
        "legalIdentifier": equals("legalIdentifier"),
        "tags": all_tags(),
        "search": search(
            lambda r, s: [r.get("name"), r.get("legalIdentifier"), r.get("email"), *(r.get("tags") or ())]
        ),
    },
    "supplier_documents": {
        "reference": equals("reference"),
        "supplierId": equals_id("supplierId", "supplier_docs_by_supplier"),
        "type": equals("type", ("invoice", "creditNote")),
        "status": equals("status", SUPPLIER_DOCUMENT_STATUSES),
        "startIssueDate": at_least("issueDate", parse_time),
        "endIssueDate": at_most("issueDate", parse_time),
        "startDueDate": at_least("dueDate", parse_time),
        "endDueDate": at_most("dueDate", parse_time),
        "minimumAmount": at_least("amountVat"),
        "maximumAmount": at_most("amountVat"),
        "tags": all_tags(),
        "search": search(_supplier_document_text),
    },
    "webhooks": {},
}
