"""The endpoint catalogue: every resource's path, key, read mode and column types (docs/resources.md).

Column types are declared for every field of the data contract so that every column exists, with its
exact type, even when all its values are null, and so that no first value decides a type: amounts arrive
as `1676` or `1676.5` (JavaScript serialisation) and become `decimal(18,2)` whatever the first one was.
Names are dlt's snake_case; nested objects are flattened (`to.address.city` -> `to__address__city`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TEXT = {"data_type": "text", "nullable": True}
BOOL = {"data_type": "bool", "nullable": True}
BIGINT = {"data_type": "bigint", "nullable": True}
TIMESTAMP = {"data_type": "timestamp", "timezone": True, "nullable": True}
AMOUNT = {"data_type": "decimal", "precision": 18, "scale": 2, "nullable": True}
RATE = {"data_type": "decimal", "precision": 9, "scale": 4, "nullable": True}
# Quantities and discount values (a percent or an amount) need more than cents.
QUANTITY = {"data_type": "decimal", "precision": 18, "scale": 4, "nullable": True}

# Overlap and lag of the frozen windows, in seconds (see windows.py for why these values).
WINDOW_OVERLAP_S = 30
WINDOW_LAG_S = 5


def _address(prefix: str) -> dict[str, dict]:
    return {f"{prefix}__{part}": TEXT for part in ("street", "postal_code", "city", "country")}


def _columns(**columns: dict) -> dict[str, dict]:
    # _absent_fields: the comma-joined JSON keys the contract does not promise that a record did not carry
    return {"_deleted_at": TIMESTAMP, "_absent_fields": TEXT, **columns}


COMMON = {"id": TEXT, "portal_id": TEXT, "metadata": TEXT, "last_update": TIMESTAMP}
VALUE_LIST = {"value": TEXT, "_deleted_at": TIMESTAMP}


@dataclass(frozen=True)
class Endpoint:
    """One resource: `mode` is `single` (one object), `window` (lastUpdate windows) or `full` (whole list)."""

    name: str
    path: str
    mode: str
    columns: dict[str, dict]
    nested: dict[str, dict[str, dict]] = field(default_factory=dict)  # child table (list field) -> columns
    json_fields: tuple[str, ...] = ()  # list fields stored as JSON text instead of a child table
    sort_column: str | None = "last_update"  # newest wins when one load holds an id twice
    scope: str = "read"  # the scope the spec requires for the list

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
            json_fields=("contacts",)),
        Endpoint("items", "/items", "window", _columns(
            **COMMON, name=TEXT, description=TEXT, reference=TEXT, type=TEXT, unit=TEXT, price=AMOUNT,
            vat=RATE, buying_price=AMOUNT)),
        Endpoint("documents", "/documents", "window", _columns(
            **COMMON, customer_id=TEXT, type=TEXT, subtype=TEXT, status=TEXT, reference=TEXT,
            reference_internal=TEXT, title=TEXT, message_top=TEXT, message_bottom=TEXT, emit_date=TIMESTAMP,
            due_date=TIMESTAMP, to__name=TEXT, to__email=TEXT, **_address("to__address"), from__name=TEXT,
            from__trade_name=TEXT, from__email=TEXT, discount__type=TEXT, discount__amount=QUANTITY,
            amount=AMOUNT, vat=AMOUNT, amount_vat=AMOUNT, amount_net=AMOUNT, amount_vat_net=AMOUNT,
            amount_notice=TEXT, vat_exemption_type=TEXT, payment_method=TEXT, total_payments=AMOUNT,
            remaining=AMOUNT, invoice_id=TEXT, version=TEXT, prev_doc=TEXT, next_doc=TEXT),
            nested={
                "lines": {"line_type": TEXT, "item_id": TEXT, "name": TEXT, "description": TEXT,
                          "reference": TEXT, "price": AMOUNT, "quantity": QUANTITY, "unit": TEXT, "vat": RATE,
                          "discount": RATE, "buying_price": AMOUNT, "_deleted_at": TIMESTAMP},
                "messages": {"date": TIMESTAMP, "model": TEXT, "from": TEXT, "to": TEXT, "subject": TEXT,
                             "_deleted_at": TIMESTAMP},
            }),
        Endpoint("transactions", "/transactions", "window", _columns(
            **COMMON, customer_id=TEXT, customer_name=TEXT, document_id=TEXT, amount=AMOUNT,
            used_amount=AMOUNT, refunded_amount=AMOUNT, date=TIMESTAMP, method=TEXT)),
        Endpoint("transaction_usages", "/transaction-usages", "window", _columns(
            **COMMON, type=TEXT, customer_id=TEXT, invoice_id=TEXT, transaction_id=TEXT, transaction__id=TEXT,
            transaction__amount=AMOUNT, transaction__date=TIMESTAMP, transaction__method=TEXT,
            credit_note_id=TEXT, amount=AMOUNT, date=TIMESTAMP)),
        Endpoint("suppliers", "/suppliers", "window", _columns(
            **COMMON, name=TEXT, legal_identifier=TEXT, email=TEXT, phone=TEXT, **_address("address")),
            nested={"tags": VALUE_LIST}),
        Endpoint("supplier_documents", "/supplier-documents", "window", _columns(
            **COMMON, supplier_id=TEXT, file_key=TEXT, status=TEXT, reference=TEXT, type=TEXT,
            issue_date=TIMESTAMP, due_date=TIMESTAMP, amount=AMOUNT, vat=AMOUNT, amount_vat=AMOUNT,
            currency=TEXT, origin=TEXT, payment_date=TIMESTAMP),
            nested={"tags": VALUE_LIST}),
        Endpoint("webhooks", "/webhooks", "full", _columns(
            **COMMON, url=TEXT, enabled=BOOL, failures=BIGINT), nested={"events": VALUE_LIST},
            scope="read write"),
    ]
}

# Read per changed supplier document, inside the same load as the document (see __init__.py).
EVENTS = Endpoint("supplier_document_events", "/supplier-documents/{id}/events", "child", _columns(
    id=TEXT, supplier_document_id=TEXT, date=TIMESTAMP, action=TEXT, previous_status=TEXT, status=TEXT,
    origin=TEXT, _position=BIGINT), sort_column=None)  # _position: 1 = the oldest event of the document

RESOURCE_NAMES: tuple[str, ...] = (*ENDPOINTS, EVENTS.name)
