"""The portal's in-memory state: stores, secondary indexes, derived-field caches and event emission."""

from __future__ import annotations

import itertools
import logging
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from datetime import datetime
from typing import Any

from invoicing_sandbox.clock import Clock, iso
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.errors import not_found

from .ids import IdFactory, looks_like_id
from .money import ZERO
from .orders import KEY_FUNCTIONS
from .render import render_customer
from .store import Store

logger = logging.getLogger(__name__)

RESOURCES = (
    "items",
    "customers",
    "documents",
    "transactions",
    "transaction_usages",
    "suppliers",
    "supplier_documents",
    "webhooks",
)


class PortalState:
    """Everything one portal holds. Every public method of `Portal` runs under `lock`."""

    def __init__(self, clock: Clock, config: SandboxConfig) -> None:
        self.clock = clock
        self.config = config
        self.lock = threading.RLock()
        self.listeners: list[Callable[[str, dict], None]] = []
        self.ids = IdFactory(config.seed)
        self.stores = {name: Store(name, KEY_FUNCTIONS[name]) for name in RESOURCES}
        self.docs_by_customer: dict[str, set[str]] = defaultdict(set)
        self.usages_by_document: dict[str, list[str]] = defaultdict(list)  # by invoiceId and creditNoteId
        self.usages_by_transaction: dict[str, list[str]] = defaultdict(list)
        self.transactions_by_customer: dict[str, set[str]] = defaultdict(set)
        self.supplier_docs_by_supplier: dict[str, set[str]] = defaultdict(set)
        self.events_by_supplier_document: dict[str, list[dict]] = defaultdict(list)  # oldest first
        self.supplier_by_legal_identifier: dict[str, str] = {}
        self.assets: dict[str, dict] = {}
        self.reference_counters: dict[tuple[str, int | None], int] = {}
        self.counters = {"draft": 0, "customer": 0, "item": 0}
        self._last_now: datetime | None = None
        self._last_iso = ""
        self.list_cache: OrderedDict = OrderedDict()  # deep pages of filtered lists (see listing.py)
        self.tie_draws = itertools.count()  # one shuffle per list request under a shuffled tie order
        self._reset_account(clock.now())

    def _reset_account(self, created: datetime) -> None:
        self.portal_id = self.ids.new(created)
        stamp = iso(created)
        self.user: dict[str, Any] = {
            "id": self.ids.new(created),
            "name": "Camille Martin",
            "email": "camille.martin@atelier-martin.fr",
            "mobile": "+33612345678",
            "phone": "+33140000000",
            "address": {
                "street": "12 rue des Lilas",
                "postalCode": "75011",
                "city": "Paris",
                "country": "FR",
            },
            "creationDate": stamp,
            "lastConnectionDate": stamp,
            "metadata": None,
        }
        self.portal: dict[str, Any] = {
            "id": self.portal_id,
            "email": "contact@atelier-martin.fr",
            "enterprise": {
                "name": "Atelier Martin SARL",
                "tradeName": "Atelier Martin",
                "siren": "812345678",
                "siret": "81234567800015",
                "vat": "FR32812345678",
                "address": {
                    "street": "12 rue des Lilas",
                    "postalCode": "75011",
                    "city": "Paris",
                    "country": "FR",
                },
            },
            "referenceAssignmentMethod": None,
            "metadata": None,
            "lastUpdate": stamp,
        }

    # time -----------------------------------------------------------------------------------------
    def now_iso(self) -> str:
        """The sandbox clock as the service writes it."""
        now = self.clock.now()
        if now != self._last_now:  # one write touches several records in the same second: format once
            self._last_now, self._last_iso = now, iso(now)
        return self._last_iso

    def today_iso(self) -> str:
        """Midnight UTC of the sandbox date (dates are stored at midnight)."""
        return iso(self.clock.today())

    # records --------------------------------------------------------------------------------------
    def record(self, resource: str, rid: str) -> dict:
        """The stored record (not a copy); 404 for unknown or malformed ids."""
        store = self.stores.get(resource)
        found = store.records.get(rid) if store is not None and isinstance(rid, str) else None
        if found is None or not looks_like_id(rid):
            raise not_found("")
        return found

    def save(self, resource: str, record: dict) -> dict:
        """Stamps `lastUpdate` with the clock and files the record in its sort orders."""
        record["lastUpdate"] = self.now_iso()
        self.stores[resource].put(record)
        return record

    def save_derived(self, resource: str, record: dict) -> dict:
        """Files a change that follows from another write (a replaced version turning CANCELED, a status the
        application set): stamped like any change, or with `lastUpdate` unchanged under the contract profile's
        `derived_changes_keep_last_update` (the contract never says a derived change moves it)."""
        if not self.config.contract.derived_changes_keep_last_update:
            return self.save(resource, record)
        self.stores[resource].put(record)
        return record

    def new_record(self, fields: dict) -> dict:
        """A record with a fresh id, the portal id and the common fields."""
        record = {"id": self.ids.new(self.clock.now()), "portalId": self.portal_id, "metadata": None}
        record.update(fields)
        return record

    # events ---------------------------------------------------------------------------------------
    def emit(self, event: str, payload: Callable[[], dict]) -> None:
        """Calls every listener with (event, payload); the payload is built only when someone listens."""
        if not self.listeners:
            return
        data = payload()
        for listener in list(self.listeners):
            try:
                listener(event, data)
            except Exception:  # a listener's failure must not undo a committed write
                logger.exception("listener failed on %s", event)

    # derived fields -------------------------------------------------------------------------------
    @staticmethod
    def remaining(document: dict):
        """amountVatNet - totalPayments."""
        return document["amountVatNet"] - document["_paid"]

    @classmethod
    def is_open_invoice(cls, document: dict) -> bool:
        """Invoice (plain or deposit), VALIDATED, something left to pay."""
        return (
            document["type"] == "INVOICE"
            and document.get("subtype") in (None, "DEPOSIT")
            and document["status"] == "VALIDATED"
            and cls.remaining(document) > ZERO
        )

    @classmethod
    def is_late(cls, document: dict, today: str) -> bool:
        """An open invoice whose due date is before today (due today is not late)."""
        due = document.get("dueDate")
        return due is not None and due < today and cls.is_open_invoice(document)

    def customer_figures(self, customer_id: str) -> tuple:
        """(dueAmount, documentsCount) computed from the customer's documents."""
        due = ZERO
        count = 0
        documents = self.stores["documents"].records
        for document_id in self.docs_by_customer.get(customer_id, ()):
            document = documents[document_id]
            if document["status"] not in ("DRAFT", "CANCELED"):
                count += 1
            if self.is_open_invoice(document):
                due += self.remaining(document)
        return due, count

    def refresh_customer(self, customer_id: str) -> None:
        """Re-derives a customer's figures; when they moved, its lastUpdate moves and it is re-announced."""
        customer = self.stores["customers"].records.get(customer_id)
        if customer is None:
            return
        due, count = self.customer_figures(customer_id)
        if due == customer["_due"] and count == customer["_count"]:
            return
        customer["_due"], customer["_count"] = due, count
        self.save("customers", customer)
        self.emit("customer.updated", lambda: render_customer(customer))
