"""`Portal`: the public face of the domain, every method under the lock, answers as fresh API dicts."""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Mapping
from typing import Concatenate, ParamSpec, TypeVar

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.errors import not_found

from .catalog import CatalogMixin
from .documents import DocumentMixin
from .listing import list_ids
from .messages import MessageMixin
from .payments import PaymentMixin
from .render import (
    RENDERERS,
    render_document,
    render_event,
    render_portal,
    render_supplier_document,
    render_transaction,
    render_user,
)
from .state import PortalState
from .suppliers import SupplierMixin

P = ParamSpec("P")
R = TypeVar("R")


def locked(method: Callable[Concatenate[Portal, P], R]) -> Callable[Concatenate[Portal, P], R]:
    """Runs the method under the portal's lock (typed so that callers see the method's own signature)."""

    @functools.wraps(method)
    def wrapper(self: Portal, *args: P.args, **kwargs: P.kwargs) -> R:
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper


class Portal(CatalogMixin, DocumentMixin, PaymentMixin, MessageMixin, SupplierMixin, PortalState):
    """One portal of the Invoicing API v2: state and every business rule (see docs/resources.md)."""

    def __init__(self, clock: Clock, config: SandboxConfig) -> None:
        PortalState.__init__(self, clock, config)

    # reads ----------------------------------------------------------------------------------------
    @locked
    def me(self) -> dict:
        """GET /me."""
        return render_user(self.user)

    @locked
    def get_portal(self) -> dict:
        """GET /portal."""
        return render_portal(self.portal)

    @locked
    def update_portal(self, body: dict) -> dict:
        """PATCH /portal (partial: email, enterprise, referenceAssignmentMethod, metadata)."""
        return self._update_portal(body)

    @locked
    def list(
        self,
        resource: str,
        params: Mapping[str, str],
        parent: tuple[str, str] | None = None,
        contract: ContractProfile | None = None,
    ) -> list[dict]:
        """One page of a list (filters, search, orderBy/order, limit/skip, updatedSince/updatedUntil);
        `contract` lists as that profile serves (the routes pass the config's; None: the ground truth)."""
        records = self.stores[resource].records if resource in self.stores else {}
        # the fallback is never called: an unknown resource has no records
        render = RENDERERS.get(resource, dict)
        return [render(records[rid]) for rid in list_ids(self, resource, params, parent, contract)]

    @locked
    def get(self, resource: str, id: str) -> dict:
        """GET /{resource}/{id}; 404 for unknown or malformed ids."""
        if resource not in RENDERERS:
            raise not_found("")
        return RENDERERS[resource](self.record(resource, id))

    @locked
    def snapshot(self, resource: str) -> builtins.list[dict]:  # `list` is the method above here
        """Every record as GET returns it (soft-deleted customers included), sorted by id."""
        if resource == "user":
            return [render_user(self.user)]
        if resource == "portal":
            return [render_portal(self.portal)]
        if resource == "supplier_document_events":
            events = [event for history in self.events_by_supplier_document.values() for event in history]
            return [render_event(event) for event in sorted(events, key=lambda e: e["id"])]
        records = self.stores[resource].records
        render = RENDERERS[resource]
        return [render(records[rid]) for rid in sorted(records)]

    # writes ---------------------------------------------------------------------------------------
    @locked
    def create(self, resource: str, body: dict) -> dict:
        """POST items, customers, documents, suppliers, webhooks."""
        creators = {
            "items": self._create_item,
            "customers": self._create_customer,
            "documents": self._create_document,
            "suppliers": self._create_supplier,
            "webhooks": self._create_webhook,
        }
        if resource not in creators:
            raise not_found("")
        return RENDERERS[resource](creators[resource](body))

    @locked
    def update(self, resource: str, id: str, body: dict) -> dict:
        """PATCH items, customers, suppliers (partial)."""
        updaters = {
            "items": self._update_item,
            "customers": self._update_customer,
            "suppliers": self._update_supplier,
        }
        if resource not in updaters:
            raise not_found("")
        return RENDERERS[resource](updaters[resource](self.record(resource, id), body))

    @locked
    def delete(self, resource: str, id: str) -> dict | None:
        """DELETE items (hard), customers (soft), documents (DRAFT only), suppliers, webhooks."""
        if resource not in self.stores:
            raise not_found("")
        record = self.record(resource, id)
        if resource == "items":
            self.stores["items"].remove(id)
        elif resource == "customers":
            self._delete_customer(record)
        elif resource == "documents":
            self._delete_document(record)
            return None
        elif resource == "suppliers":
            self._delete_supplier(record)
        elif resource == "webhooks":
            self.stores["webhooks"].remove(id)
        else:
            raise not_found("")
        return {}

    @locked
    def validate_document(self, id: str) -> dict:
        """POST /documents/{id}/validate: DRAFT -> VALIDATED with its final reference."""
        return render_document(self._validate(self.record("documents", id)))

    @locked
    def accept_quotation(self, id: str) -> dict:
        """POST /documents/{id}/accept-quotation: VALIDATED quotation -> ACCEPTED."""
        return render_document(self._quotation_answer(self.record("documents", id), True))

    @locked
    def refuse_quotation(self, id: str) -> dict:
        """POST /documents/{id}/refuse-quotation: VALIDATED quotation -> REFUSED."""
        return render_document(self._quotation_answer(self.record("documents", id), False))

    @locked
    def convert_to_invoice(self, id: str) -> dict:
        """POST /documents/{id}/convert/invoice: returns the new DRAFT invoice; the quotation is CONVERTED."""
        return render_document(self._convert(self.record("documents", id)))

    @locked
    def pay_document(self, id: str, body: dict | None) -> dict:
        """POST /documents/{id}/payment: returns the transaction."""
        return render_transaction(self._pay(self.record("documents", id), body))

    @locked
    def refund(self, source_id: str, amount, date: str | None = None) -> dict:
        """Refunds `amount` of a payment (transaction id) or of a credit note (document id) to its customer:
        the new transaction, amount < 0 (no route: the contract names no refund endpoint)."""
        source = self.stores["transactions"].records.get(source_id) or self.record("documents", source_id)
        return render_transaction(self._refund(source, amount, date))

    @locked
    def send_message(self, id: str, body: dict | None) -> dict:
        """POST /documents/{id}/messages: returns the message record."""
        return self._send_message(self.record("documents", id), body)

    @locked
    def document_pdf(self, id: str) -> dict:
        """GET /documents/{id}/pdf."""
        return self._document_pdf(self.record("documents", id))

    @locked
    def upload_asset(self, filename: str, content_type: str, content: bytes) -> dict:
        """POST /supplier-documents/upload-asset: PDFs only; returns `assetKey`."""
        return self._upload_asset(filename, content_type, content)

    @locked
    def create_supplier_document(self, body: dict) -> dict:
        """POST /supplier-documents: status approved, origin manualImport, EUR."""
        return render_supplier_document(self._create_supplier_document(body))

    @locked
    def change_supplier_document_status(self, id: str, body: dict, by: str = "api") -> dict:
        """PATCH /supplier-documents/{id}/status `{action, paymentDate?}`."""
        return render_supplier_document(self._change_status(self.record("supplier_documents", id), body, by))

    @locked
    def supplier_document_pdf(self, id: str) -> dict:
        """GET /supplier-documents/{id}/pdf; 404 until the PDF is available."""
        return self._supplier_document_pdf(self.record("supplier_documents", id))

    @locked
    def supplier_document_events(self, id: str) -> builtins.list[dict]:
        """GET /supplier-documents/{id}/events, most recent first."""
        self.record("supplier_documents", id)
        return [render_event(event) for event in reversed(self.events_by_supplier_document.get(id, []))]

    # the web application (not API v2) -------------------------------------------------------------
    @locked
    def new_version(self, document_id: str, changes: dict) -> dict:
        """Edits a VALIDATED document: returns the new version; the old one is CANCELED. A document with usages
        is refused unless the contract profile's `paid_invoice_versions` is `usages_stay`."""
        return render_document(self._new_version(self.record("documents", document_id), changes))

    @locked
    def write_off(self, document_id: str) -> dict:
        """Marks a VALIDATED invoice PAID without a payment for what is left (a write-off, bank fees, rounding):
        its usages stay short of its total."""
        return render_document(self._write_off(self.record("documents", document_id)))

    @locked
    def receive_supplier_document(self, supplier_id: str, fields: dict) -> dict:
        """A supplier document arriving by e-mail: origin email, status toApprove."""
        body = dict(fields, supplierId=supplier_id)
        return render_supplier_document(self._create_supplier_document(body, "email", "toApprove", "email"))

    @locked
    def tag_supplier_document(self, document_id: str, tags: builtins.list[str]) -> dict:
        """Sets a supplier document's tags in the application (fires supplier-document.updated)."""
        document = self.record("supplier_documents", document_id)
        return render_supplier_document(self._tag_supplier_document(document, tags))

    @locked
    def soft_delete_customer(self, customer_id: str) -> dict:
        """Same as delete("customers", id), returning the customer."""
        customer = self.record("customers", customer_id)
        self._delete_customer(customer)
        return RENDERERS["customers"](customer)
