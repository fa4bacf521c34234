"""Event -> hint: every event of the contract's list (spec, Events, plus api-facts' customer.deleted) maps to a
resource and an id read from the payload shape the spec gives; anything else is refused."""

from __future__ import annotations

import pytest

from pipelines.invoicing.webhooks.hint_events import EVENTS, UnknownEvent, hint_for_event

# The spec's Events table and api-facts, typed by hand: the mapping must cover exactly these.
SPEC_EVENTS = {
    "document.created", "document.updated", "document.deleted", "customer.created", "customer.updated",
    "customer.deleted", "product.created", "product.updated", "invoice.validated", "invoice.paid",
    "quotation.validated", "quotation.accepted", "quotation.refused", "supplier-document.created",
    "supplier-document.updated", "supplier-document.status-change", "supplier.created", "supplier.updated",
    "supplier.deleted",
}


def test_every_contract_event_is_known_and_nothing_else():
    assert set(EVENTS) == SPEC_EVENTS


@pytest.mark.parametrize(
    ("event", "data", "resource", "record_id"),
    [
        ("invoice.paid", {"id": "D1", "status": "PAID"}, "documents", "D1"),
        ("customer.deleted", {"customerId": "C9"}, "customers", "C9"),
        ("supplier.deleted", {"supplierId": "S2"}, "suppliers", "S2"),
        ("supplier-document.status-change", {"supplierDocument": {"id": "SD4"}, "previousStatus": "approved"},
         "supplier_documents", "SD4"),
        ("product.updated", {"id": 17}, "items", "17"),
    ],
)
def test_hint_reads_the_id_where_the_contract_puts_it(event, data, resource, record_id):
    hint = hint_for_event("acme", event, data)
    assert (hint.portal_id, hint.resource, hint.record_id, hint.event) == ("acme", resource, record_id, event)


@pytest.mark.parametrize(
    ("event", "data"),
    [
        ("document.archived", {"id": "D1"}),
        ("customer.deleted", {"id": "C9"}),  # the id is under customerId
        ("document.updated", {"id": ""}),
        ("document.updated", ["D1"]),
        ("supplier-document.status-change", {"supplierDocument": "SD4"}),
    ],
)
def test_unknown_events_and_payloads_without_an_id_are_refused(event, data):
    with pytest.raises(UnknownEvent):
        hint_for_event("default", event, data)
