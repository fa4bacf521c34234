"""The endpoint catalogue: every resource's path, key, read mode and column types (docs/resources.md).

Column types are declared for every field of the data contract so that every column exists, with its
exact type, even when all its values are null, and so that no first value decides a type: amounts arrive
as `1676` or `1676.5` (JavaScript serialisation) and become `decimal(18,2)` whatever the first one was.
Names are dlt's snake_case; nested objects are flattened (`to.address.city` -> `to__address__city`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dlt.common.schema.typing import TColumnSchema

# column name -> dlt column hints (the `columns=` of dlt.resource)
Columns = dict[str, TColumnSchema]

TEXT: TColumnSchema = {"data_type": "text", "nullable": True}
BOOL: TColumnSchema = {"data_type": "bool", "nullable": True}
BIGINT: TColumnSchema = {"data_type": "bigint", "nullable": True}
TIMESTAMP: TColumnSchema = {"data_type": "timestamp", "timezone": True, "nullable": True}
AMOUNT: TColumnSchema = {"data_type": "decimal", "precision": 18, "scale": 2, "nullable": True}
RATE: TColumnSchema = {"data_type": "decimal", "precision": 9, "scale": 4, "nullable": True}
# Quantities and discount values (a percent or an amount) need more than cents.
QUANTITY: TColumnSchema = {"data_type": "decimal", "precision": 18, "scale": 4, "nullable": True}

# Overlap and lag of the frozen windows, in seconds (see windows.py for why these values).
WINDOW_OVERLAP_S = 30
WINDOW_LAG_S = 5


def _address(prefix: str) -> Columns:
    return {f"{prefix}__{part}": TEXT for part in ("street", "postal_code", "city", "country")}


def _columns(**columns: TColumnSchema) -> Columns:
    # `portal_id`: the user's name of the portal (portals.py), on every root row; child tables reach it
    # through their root row (`_dlt_root_id` = the root row's `_dlt_id`). `_digest`: of the record as served
    # (rows.to_row), so a whole scan sees a change that did not move `lastUpdate` (reader.py)
    return {"portal_id": TEXT, "_deleted_at": TIMESTAMP, "_digest": TEXT, **columns}


# The API's own `portalId` (an opaque id of the account) is kept as `api_portal_id` (rows.with_portal):
# `portal_id` is the name the user gives the portal, the same in every table and in the marts.
COMMON: Columns = {"id": TEXT, "api_portal_id": TEXT, "metadata": TEXT, "last_update": TIMESTAMP}
VALUE_LIST: Columns = {"value": TEXT, "_deleted_at": TIMESTAMP}


@dataclass(frozen=True)
class PdfArchive:
    """The legal copy of a resource's records: GET `path` (`{id}` filled) answers `{"pdfB64": ...}`, 404 while
    the PDF is not yet available; `kept` (SQL over the raw table's columns) chooses the records whose PDF is
    kept (load/pdf_archive.py, docs/archive.md)."""

    path: str
    kept: str


@dataclass(frozen=True)
class Endpoint:
    """One resource: `mode` is `single` (one object), `window` (lastUpdate windows) or `full` (whole list)."""

    name: str
    path: str
    mode: str
    columns: Columns
    nested: dict[str, Columns] = field(default_factory=dict)  # child table (list field) -> columns
    json_fields: tuple[str, ...] = ()  # list fields stored as JSON text instead of a child table
    sort_column: str | None = "last_update"  # newest wins when one load holds an id twice
    scope: str = "read"  # the scope the spec requires for the list
    # JSON keys a mart depends on that a server may not serve (docs/contract.md): the ones a record lacks
    # are recorded in its row's `_absent_fields` (rows.py), so checks tell "not served" from "null"
    assumed: tuple[str, ...] = ()
    # a windowed list whose deletions the server may hide: each run also lists every id and checks the
    # warehouse's ids that are no longer listed one by one (customers are few; reader.py `_id_scan`)
    id_scan: bool = False
    pdf: PdfArchive | None = None  # the records' PDFs, archived once per record (a version is its own record)
    paging_named: bool = True  # a list whose `limit`/`skip` the spec names (the ledger's `<list>.limit/skip`)
    # webhook events that ring for a record of this list: event name -> where `event.data` holds the record's id
    # (a dotted path; webhooks/hint_events.py). The spec's list, plus `customer.deleted` (api-facts)
    events: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.assumed:  # declared, so the column exists even before any key is found missing
            self.columns.setdefault("_absent_fields", TEXT)

    @property
    def containers(self) -> frozenset[str]:
        """Paths (`to`, `to__address`) of fields holding an object or a list: flattened or child tables."""
        paths = set(self.nested) | set(self.json_fields)
        for name in self.columns:
            parts = name.split("__")
            paths.update("__".join(parts[:i]) for i in range(1, len(parts)))
        return frozenset(paths)


def snake_case(name: str) -> str:
    """dlt's column name for a JSON field: `amountVatNet` -> `amount_vat_net`."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


ENDPOINTS: dict[str, Endpoint] = {
    e.name: e
    for e in [
        Endpoint("user", "/me", "single", _columns(
            id=TEXT, name=TEXT, email=TEXT, mobile=TEXT, phone=TEXT, **_address("address"),
            creation_date=TIMESTAMP, last_connection_date=TIMESTAMP, metadata=TEXT), sort_column=None),
        Endpoint("portal", "/portal", "single", _columns(
            id=TEXT, email=TEXT, enterprise__name=TEXT, enterprise__trade_name=TEXT, enterprise__siren=TEXT,
            enterprise__siret=TEXT, enterprise__vat=TEXT, **_address("enterprise__address"),
            reference_assignment_method=TEXT, metadata=TEXT, last_update=TIMESTAMP)),
        Endpoint("customers", "/customers", "window", _columns(
            **COMMON, name=TEXT, reference=TEXT, type=TEXT, email=TEXT, phone=TEXT, mobile=TEXT, fax=TEXT,
            siret=TEXT, vat=TEXT, **_address("address"), **_address("delivery"), contacts=TEXT,
            due_amount=AMOUNT, documents_count=BIGINT, deleted=BOOL, deleted_at=TIMESTAMP),
            json_fields=("contacts",), assumed=("deletedAt",), id_scan=True,
            events={"customer.created": "id", "customer.updated": "id", "customer.deleted": "customerId"}),
        Endpoint("items", "/items", "window", _columns(
            **COMMON, name=TEXT, description=TEXT, reference=TEXT, type=TEXT, unit=TEXT, price=AMOUNT,
            vat=RATE, buying_price=AMOUNT), events={"product.created": "id", "product.updated": "id"}),
        Endpoint("documents", "/documents", "window", _columns(
            **COMMON, customer_id=TEXT, type=TEXT, subtype=TEXT, status=TEXT, reference=TEXT,
            reference_internal=TEXT, title=TEXT, message_top=TEXT, message_bottom=TEXT, emit_date=TIMESTAMP,
            due_date=TIMESTAMP, to__name=TEXT, to__email=TEXT, **_address("to__address"), from__name=TEXT,
            from__trade_name=TEXT, from__email=TEXT, discount__type=TEXT, discount__amount=QUANTITY,
            amount=AMOUNT, vat=AMOUNT, amount_vat=AMOUNT, amount_net=AMOUNT, amount_vat_net=AMOUNT,
            amount_notice=TEXT, vat_exemption_type=TEXT, payment_method=TEXT, total_payments=AMOUNT,
            remaining=AMOUNT, invoice_id=TEXT, version=TEXT, prev_doc=TEXT, next_doc=TEXT, currency=TEXT),
            nested={
                "lines": {"line_type": TEXT, "item_id": TEXT, "name": TEXT, "description": TEXT,
                          "reference": TEXT, "price": AMOUNT, "quantity": QUANTITY, "unit": TEXT, "vat": RATE,
                          "discount": RATE, "buying_price": AMOUNT, "_deleted_at": TIMESTAMP},
                "messages": {"date": TIMESTAMP, "model": TEXT, "from": TEXT, "to": TEXT, "subject": TEXT,
                             "_deleted_at": TIMESTAMP},
            },
            assumed=("dueDate", "emitDate", "amountVatNet", "messages"),
            events=dict.fromkeys(("document.created", "document.updated", "document.deleted", "invoice.validated",
                                  "invoice.paid", "quotation.validated", "quotation.accepted", "quotation.refused"),
                                 "id"),
            # issued invoices and credit notes (a proforma is no invoice); a replaced version was issued too
            pdf=PdfArchive("/documents/{id}/pdf", "type = 'INVOICE' and coalesce(subtype, '') <> 'PROFORMA' and "
                           "(status in ('VALIDATED', 'PAID') or (status = 'CANCELED' and next_doc is not null))")),
        Endpoint("transactions", "/transactions", "window", _columns(
            **COMMON, customer_id=TEXT, customer_name=TEXT, document_id=TEXT, amount=AMOUNT,
            used_amount=AMOUNT, refunded_amount=AMOUNT, date=TIMESTAMP, method=TEXT, currency=TEXT),
            assumed=("date", "customerId", "refundedAmount")),
        Endpoint("transaction_usages", "/transaction-usages", "window", _columns(
            **COMMON, type=TEXT, customer_id=TEXT, invoice_id=TEXT, transaction_id=TEXT, transaction__id=TEXT,
            transaction__amount=AMOUNT, transaction__date=TIMESTAMP, transaction__method=TEXT,
            credit_note_id=TEXT, amount=AMOUNT, date=TIMESTAMP),
            assumed=("date",)),
        Endpoint("suppliers", "/suppliers", "window", _columns(
            **COMMON, name=TEXT, legal_identifier=TEXT, email=TEXT, phone=TEXT, **_address("address")),
            nested={"tags": VALUE_LIST}, paging_named=False,
            events={"supplier.created": "id", "supplier.updated": "id", "supplier.deleted": "supplierId"}),
        Endpoint("supplier_documents", "/supplier-documents", "window", _columns(
            **COMMON, supplier_id=TEXT, file_key=TEXT, status=TEXT, reference=TEXT, type=TEXT,
            issue_date=TIMESTAMP, due_date=TIMESTAMP, amount=AMOUNT, vat=AMOUNT, amount_vat=AMOUNT,
            currency=TEXT, origin=TEXT, payment_date=TIMESTAMP),
            nested={"tags": VALUE_LIST}, assumed=("amountVat", "amount", "dueDate", "issueDate", "paymentDate"),
            pdf=PdfArchive("/supplier-documents/{id}/pdf", "true"), paging_named=False,
            events={"supplier-document.created": "id", "supplier-document.updated": "id",
                    # every bill received, whatever its status
                    "supplier-document.status-change": "supplierDocument.id"}),
        Endpoint("webhooks", "/webhooks", "full", _columns(
            **COMMON, url=TEXT, enabled=BOOL, failures=BIGINT), nested={"events": VALUE_LIST},
            scope="read write", paging_named=False),
    ]
}

# Read per changed supplier document, inside the same load as the document (see __init__.py); merged per
# document (`supplier_document_id`): a reloaded history replaces the old one. `_position`: 1 = oldest.
EVENTS = Endpoint("supplier_document_events", "/supplier-documents/{id}/events", "child", _columns(
    id=TEXT, supplier_document_id=TEXT, date=TIMESTAMP, action=TEXT, previous_status=TEXT, status=TEXT,
    origin=TEXT, _position=BIGINT), sort_column=None, assumed=("date", "previousStatus", "supplierDocumentId"))

RESOURCE_NAMES: tuple[str, ...] = (*ENDPOINTS, EVENTS.name)
# the lists a client pages through (every record, by windows or whole), by resource name
LISTS: dict[str, Endpoint] = {name: endpoint for name, endpoint in ENDPOINTS.items() if endpoint.mode != "single"}

# The archive of the PDFs of the resources with a `pdf` (load/pdf_archive.py): one row per file kept, in the raw
# dataset beside the records; `sha256` names the file's bytes as downloaded (the gate's pdf_archive_intact).
PDF_ARCHIVE_TABLE = "pdf_archive"
PDF_ARCHIVE_COLUMNS: Columns = {
    "portal_id": TEXT, "resource": TEXT, "record_id": TEXT, "reference": TEXT, "record_last_update": TIMESTAMP,
    "sha256": TEXT, "size_bytes": BIGINT, "file_path": TEXT, "archived_at": TIMESTAMP}


@dataclass(frozen=True)
class Reference:
    """A column of a child table naming a record of a parent list: `child.column` -> `parent.id`."""

    child: str
    column: str
    parent: str


# The references the marts follow. A run closes them before the gate judges (load/parents.py: a parent not
# loaded is read by id), and a reference still dangling after that is a flag, never a hold
# (invoicing_warehouse/runs/checks.py).
REFERENCES: tuple[Reference, ...] = (
    Reference("documents", "customer_id", "customers"),
    Reference("transaction_usages", "invoice_id", "documents"),
)
