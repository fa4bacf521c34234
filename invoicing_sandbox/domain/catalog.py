"""Items, customers, the portal and webhook subscriptions: creation, partial update, deletion."""

from __future__ import annotations

from typing import TYPE_CHECKING

from invoicing_sandbox.errors import bad_request, conflict

from .money import ZERO, shared
from .render import render_customer, render_item, render_portal, render_webhook
from .state import PortalState
from .validation import ADDRESS_FIELD, Field, check_body, require

ITEM_SCHEMA = {
    "name": Field("str"),
    "description": Field("str", max_length=10000),
    "reference": Field("str"),
    "type": Field("enum", nullable=False, values=("product", "service")),
    "unit": Field("str"),
    "price": Field("number"),
    "vat": Field("number"),
    "buyingPrice": Field("number"),
    "metadata": Field("str"),
}
CONTACT = Field("object", schema={"name": Field("str"), "email": Field("str"), "phone": Field("str")})
CUSTOMER_SCHEMA = {
    "name": Field("str"),
    "reference": Field("str"),
    "type": Field("enum", values=("business", "consumer")),
    "email": Field("str"),
    "phone": Field("str"),
    "mobile": Field("str"),
    "fax": Field("str"),
    "siret": Field("str"),
    "vat": Field("str"),
    "address": ADDRESS_FIELD,
    "delivery": ADDRESS_FIELD,
    "contacts": Field("list", item=CONTACT),
    "metadata": Field("str"),
}
ENTERPRISE = {name: Field("str") for name in ("name", "tradeName", "siren", "siret", "vat")}
ENTERPRISE["address"] = ADDRESS_FIELD
PORTAL_SCHEMA = {
    "email": Field("str"),
    "enterprise": Field("object", schema=ENTERPRISE),
    "referenceAssignmentMethod": Field("enum", nullable=False, values=("CHRONOLOGICAL", "YEARLY")),
    "metadata": Field("str"),
}
EVENT_NAMES = (
    "document.created",
    "document.updated",
    "document.deleted",
    "customer.created",
    "customer.updated",
    "customer.deleted",
    "product.created",
    "product.updated",
    "invoice.validated",
    "invoice.paid",
    "quotation.validated",
    "quotation.accepted",
    "quotation.refused",
    "supplier-document.created",
    "supplier-document.updated",
    "supplier-document.status-change",
    "supplier.created",
    "supplier.updated",
    "supplier.deleted",
)
WEBHOOK_SCHEMA = {
    "url": Field("str", nullable=False),
    "events": Field("list", nullable=False, item=Field("enum", values=EVENT_NAMES)),
    "enabled": Field("bool", nullable=False),
    "metadata": Field("str"),
}
WEBHOOK_FAILURE_LIMIT = 100  # api-facts: a subscription is disabled after 100 failures


def infer_customer_type(siret: str | None) -> str:
    """Spec: a customer with a `siret` is `business`, otherwise `consumer`."""
    return "business" if siret else "consumer"


class CatalogMixin(PortalState):
    """Writes of items, customers, the portal and webhooks."""

    if TYPE_CHECKING:  # given by DocumentMixin, a sibling base of `Portal`

        def _delete_document(self, document: dict) -> None: ...

    def _create_item(self, body: dict) -> dict:
        fields = check_body(body, ITEM_SCHEMA)
        require(fields, "name")
        self.counters["item"] += 1
        fields.setdefault("reference", None)
        if not fields["reference"]:
            fields["reference"] = f"P-{self.counters['item']:06d}"
        fields.setdefault("type", "product")
        fields["price"] = fields.get("price") or ZERO
        fields["vat"] = fields.get("vat") if fields.get("vat") is not None else shared(ZERO + 20)
        item = self.save("items", self.new_record(fields))
        self.emit("product.created", lambda: render_item(item))
        return item

    def _update_item(self, item: dict, body: dict) -> dict:
        fields = check_body(body, ITEM_SCHEMA)
        if "name" in fields:
            require(fields, "name")
        for name in ("price", "vat"):
            if name in fields and fields[name] is None:
                raise bad_request(f"invalid body: body.{name}: must not be null")
        item.update(fields)
        self.save("items", item)
        self.emit("product.updated", lambda: render_item(item))
        return item

    def _create_customer(self, body: dict) -> dict:
        fields = check_body(body, CUSTOMER_SCHEMA)
        require(fields, "name")
        self.counters["customer"] += 1
        if not fields.get("reference"):
            fields["reference"] = f"C-{self.counters['customer']:06d}"
        fields["_inferred"] = fields.get("type") is None
        if fields["_inferred"]:
            fields["type"] = infer_customer_type(fields.get("siret"))
        fields.update(deleted=False, deletedAt=None, _due=ZERO, _count=0)
        customer = self.save("customers", self.new_record(fields))
        self.emit("customer.created", lambda: render_customer(customer))
        return customer

    def _update_customer(self, customer: dict, body: dict) -> dict:
        fields = check_body(body, CUSTOMER_SCHEMA)
        if customer.get("deleted"):
            raise bad_request("customer is deleted and cannot be changed")
        if "name" in fields:
            require(fields, "name")
        if "type" in fields:
            fields["_inferred"] = fields["type"] is None
        customer.update(fields)
        if customer["_inferred"]:
            customer["type"] = infer_customer_type(customer.get("siret"))
        self.save("customers", customer)
        self.emit("customer.updated", lambda: render_customer(customer))
        return customer

    def _delete_customer(self, customer: dict) -> None:
        if customer.get("deleted"):
            return
        documents = self.stores["documents"].records
        kept = self.config.contract.deleted_customer_documents == "kept"
        for document_id in self.docs_by_customer.get(customer["id"], ()):
            status = documents[document_id]["status"]
            if status != "DRAFT" and not kept:
                raise conflict(
                    f"customer has documents that are not drafts (a document is {status}); "
                    "it cannot be deleted"
                )
        # its drafts go with it: a deleted customer must never get a validated document later; with
        # `deleted_customer_documents="kept"` its other documents stay, listed and owed
        for document_id in sorted(self.docs_by_customer.get(customer["id"], ())):
            if documents[document_id]["status"] == "DRAFT":
                self._delete_document(documents[document_id])
        customer["deleted"] = True
        customer["deletedAt"] = self.now_iso()
        self.save("customers", customer)
        self.emit("customer.updated", lambda: render_customer(customer))
        self.emit("customer.deleted", lambda: {"customerId": customer["id"]})

    def _update_portal(self, body: dict) -> dict:
        fields = check_body(body, PORTAL_SCHEMA)
        enterprise = fields.pop("enterprise", None)
        if enterprise is not None:
            merged = dict(self.portal["enterprise"])
            merged.update(enterprise)
            if not merged.get("name"):
                raise bad_request("invalid body: body.enterprise.name: is required")
            self.portal["enterprise"] = merged
        self.portal.update(fields)
        self.portal["lastUpdate"] = self.now_iso()
        return render_portal(self.portal)

    def _create_webhook(self, body: dict) -> dict:
        fields = check_body(body, WEBHOOK_SCHEMA)
        require(fields, "url", "events")
        if not fields["url"].startswith(("http://", "https://")):
            raise bad_request("invalid body: body.url: must be an http or https URL")
        if not fields["events"]:
            raise bad_request("invalid body: body.events: must name at least one event")
        fields.setdefault("enabled", True)
        fields["failures"] = 0
        return self.save("webhooks", self.new_record(fields))

    def churn_subscriptions(self, every: int) -> None:
        """After an answer of GET /webhooks (contract switch `subscriptions_churn_every`): every `every`-th one,
        the oldest subscription is removed and a new one is added, as someone editing them while a client
        reads the list. The new one is disabled (it receives no delivery) and points at a closed local port."""
        with self.lock:
            self.counters["webhook_lists"] = self.counters.get("webhook_lists", 0) + 1
            if every <= 0 or self.counters["webhook_lists"] % every:
                return
            records = self.stores["webhooks"].records
            if records:
                oldest = min(records.values(), key=lambda record: (record["lastUpdate"], record["id"]))
                self.stores["webhooks"].remove(oldest["id"])
            self._create_webhook({"url": f"http://127.0.0.1:9/churn/{self.counters['webhook_lists']}",
                                  "events": ["customer.created"], "enabled": False})

    def webhook_delivery_result(self, webhook_id: str, delivered: bool) -> dict:
        """Records one delivery attempt (for the HTTP layer): failures count, disabled after 100."""
        with self.lock:
            webhook = self.record("webhooks", webhook_id)
            if delivered:
                return render_webhook(webhook)
            webhook["failures"] += 1
            if webhook["failures"] >= WEBHOOK_FAILURE_LIMIT:
                webhook["enabled"] = False
            self.save("webhooks", webhook)
            return render_webhook(webhook)
