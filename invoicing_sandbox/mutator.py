"""The background "application user": realistic writes at a steady rate, through the Portal's own methods."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import Counter

from faker import Faker

from invoicing_sandbox.domain.french_catalog import customer_body, item_body, supplier_body
from invoicing_sandbox.domain.suppliers import TRANSITIONS
from invoicing_sandbox.errors import ApiError

logger = logging.getLogger(__name__)

# relative frequency of each kind of change (people mostly create, validate, pay and remind)
WEIGHTS = {
    "create_customer": 4,
    "edit_customer": 4,
    "delete_customer": 1,
    "create_item": 1,
    "edit_item": 2,
    "delete_item": 0.5,
    "create_invoice": 8,
    "create_quotation": 4,
    "delete_draft": 2,
    "validate": 8,
    "pay": 10,
    "credit_note": 1,
    "new_version": 1.5,
    "accept_quotation": 2,
    "refuse_quotation": 1,
    "convert_quotation": 2,
    "send_reminder": 3,
    "receive_supplier_document": 4,
    "change_supplier_document_status": 5,
    "tag_supplier_document": 1,
    "create_supplier": 1.5,
    "edit_supplier": 1,
    "delete_supplier": 1,
}
SAMPLE_TRIES = 80
MIN_ITEMS = 5


class Mutator:
    """Changes the portal like people using the web application: `step()` makes one change."""

    def __init__(self, portal, rate_per_s: float, seed: int) -> None:
        self.portal = portal
        self.rate_per_s = rate_per_s
        self.rng = random.Random(f"mutator-{seed}")
        self.fake = Faker("fr_FR")
        self.fake.seed_instance(seed)
        self.counts: dict[str, int] = Counter()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # thread ---------------------------------------------------------------------------------------
    def start(self) -> None:
        """Runs steps at `rate_per_s` in a daemon thread (no-op when the rate is 0)."""
        if self.rate_per_s <= 0 or (self._thread and self._thread.is_alive()):
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="sandbox-mutator", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stops the thread (returns within `timeout` seconds)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        interval = 1.0 / self.rate_per_s
        deadline = time.monotonic()
        while not self._stop.is_set():
            deadline = max(deadline + interval, time.monotonic() - interval)
            if self._stop.wait(max(0.0, deadline - time.monotonic())):
                return
            try:
                self.step()
            except Exception:  # the application user must survive anything and keep going
                logger.exception("mutator step failed")

    # one change -----------------------------------------------------------------------------------
    def step(self) -> str:
        """Makes one random change; returns its kind ("none" when nothing applied after 10 draws)."""
        kinds, weights = list(WEIGHTS), list(WEIGHTS.values())
        with self.portal.lock:
            for _ in range(10):
                kind = self.rng.choices(kinds, weights)[0]
                try:
                    done = getattr(self, "_" + kind)()
                except ApiError as error:  # e.g. no reference assignment method chosen yet
                    logger.debug("mutator %s refused: %s", kind, error.message)
                    done = False
                if done:
                    self.counts[kind] += 1
                    return kind
        return "none"

    def _pick(self, resource: str, predicate) -> dict | None:
        records = self.portal.stores[resource].records
        if not records:
            return None
        ids = list(records)
        for _ in range(SAMPLE_TRIES):
            record = records[self.rng.choice(ids)]
            if predicate(record):
                return record
        return None

    def _live_customer(self) -> dict | None:
        return self._pick("customers", lambda c: not c.get("deleted"))

    # customers, items, suppliers ------------------------------------------------------------------
    def _create_customer(self) -> bool:
        self.portal.create("customers", customer_body(self.fake, self.rng, self.rng.random() < 0.7))
        return True

    def _edit_customer(self) -> bool:
        customer = self._live_customer()
        if customer is None:
            return False
        field = self.rng.choice(("phone", "email", "mobile"))
        value = self.fake.email() if field == "email" else self.fake.phone_number()
        self.portal.update("customers", customer["id"], {field: value})
        return True

    def _delete_customer(self) -> bool:
        documents, owned = self.portal.stores["documents"].records, self.portal.docs_by_customer

        def deletable(customer: dict) -> bool:  # only drafts (or nothing) on record
            return not customer.get("deleted") and all(
                documents[d]["status"] == "DRAFT" for d in owned.get(customer["id"], ())
            )

        customer = self._pick("customers", deletable)
        if customer is None:
            return False
        self.portal.delete("customers", customer["id"])
        return True

    # switches a test turns on at a chosen moment (invoicing_sandbox/README.md) ----------------------------------
    def edit_customers_with_invoices(self, count: int) -> list[str]:
        """Edits up to `count` live customers that hold validated invoices, now: run just before a first sync,
        their new `lastUpdate` falls in its settle lag while their older invoices are read. Returns their ids."""
        edited = [customer["id"] for customer in self._customers_with_invoices(count)]
        for customer_id in edited:
            self.portal.update("customers", customer_id, {"email": self.fake.email()})
        return edited

    def delete_customers_with_invoices(self, count: int) -> list[str]:
        """Soft-deletes up to `count` customers that are still owed on validated invoices (the profile's
        `deleted_customer_documents="kept"`: their documents stay listed and owed). Returns their ids."""
        deleted = [customer["id"] for customer in self._customers_with_invoices(count, owing=True)]
        for customer_id in deleted:
            self.portal.delete("customers", customer_id)
        return deleted

    def _customers_with_invoices(self, count: int, owing: bool = False) -> list[dict]:
        """Live customers (lowest ids first: deterministic) with a VALIDATED invoice (one owed, with `owing`)."""
        documents, owned = self.portal.stores["documents"].records, self.portal.docs_by_customer
        chosen = []
        with self.portal.lock:
            for customer_id in sorted(self.portal.stores["customers"].records):
                customer = self.portal.stores["customers"].records[customer_id]
                invoices = [documents[d] for d in owned.get(customer_id, ())
                            if documents[d]["type"] == "INVOICE" and documents[d]["status"] == "VALIDATED"]
                if not customer.get("deleted") and invoices and (not owing or customer.get("_due", 0) > 0):
                    chosen.append(customer)
                if len(chosen) >= count:
                    break
        return chosen

    def _create_item(self) -> bool:
        self.portal.create("items", item_body(self.rng, self.rng.random() < 0.45, self.rng.randint(1, 99)))
        return True

    def _edit_item(self) -> bool:
        item = self._pick("items", lambda i: True)
        if item is None:
            return False
        self.portal.update(
            "items", item["id"], {"price": round(float(item["price"]) * self.rng.uniform(0.95, 1.1), 2)}
        )
        return True

    def _delete_item(self) -> bool:
        if len(self.portal.stores["items"].records) <= MIN_ITEMS:
            return False
        item = self._pick("items", lambda i: True)  # never None: there are items and any one will do
        if item is None:
            return False
        self.portal.delete("items", item["id"])
        return True

    def _create_supplier(self) -> bool:
        self.portal.create("suppliers", supplier_body(self.fake, self.rng))
        return True

    def _edit_supplier(self) -> bool:
        supplier = self._pick("suppliers", lambda s: True)
        if supplier is None:
            return False
        tags = sorted(
            set(supplier.get("tags") or []) ^ {self.rng.choice(("urgent", "récurrent", "logiciel"))}
        )
        self.portal.update("suppliers", supplier["id"], {"tags": tags})
        return True

    def _delete_supplier(self) -> bool:
        supplier = self._pick("suppliers", lambda s: not self.portal.supplier_docs_by_supplier.get(s["id"]))
        if supplier is None:
            return False
        self.portal.delete("suppliers", supplier["id"])
        return True

    # documents ----------------------------------------------------------------------------------
    def _new_document(self, doc_type: str) -> bool:
        customer, items = self._live_customer(), list(self.portal.stores["items"].records)
        if customer is None or not items:
            return False
        lines = [
            {"itemId": self.rng.choice(items), "quantity": self.rng.choice((1, 2, 3, 0.5, 10))}
            for _ in range(self.rng.randint(1, 4))
        ]
        self.portal.create("documents", {"customerId": customer["id"], "type": doc_type, "lines": lines})
        return True

    def _create_invoice(self) -> bool:
        return self._new_document("INVOICE")

    def _create_quotation(self) -> bool:
        return self._new_document("QUOTATION")

    def _on_document(self, predicate, action) -> bool:
        document = self._pick("documents", predicate)
        if document is None:
            return False
        action(document["id"])
        return True

    def _delete_draft(self) -> bool:
        return self._on_document(
            lambda d: d["status"] == "DRAFT", lambda i: self.portal.delete("documents", i)
        )

    def _validate(self) -> bool:
        return self._on_document(lambda d: d["status"] == "DRAFT", self.portal.validate_document)

    def _quotation(self, status: str, action) -> bool:
        return self._on_document(lambda d: d["type"] == "QUOTATION" and d["status"] == status, action)

    def _accept_quotation(self) -> bool:
        return self._quotation("VALIDATED", self.portal.accept_quotation)

    def _refuse_quotation(self) -> bool:
        return self._quotation("VALIDATED", self.portal.refuse_quotation)

    def _convert_quotation(self) -> bool:
        return self._quotation("ACCEPTED", self.portal.convert_to_invoice)

    def _pay(self) -> bool:
        invoice = self._pick("documents", self.portal.is_open_invoice)
        if invoice is None:
            return False
        remaining = float(self.portal.remaining(invoice))
        mode = self.rng.random()
        method = self.rng.choice(("TRANSFER", "CHECK", "CREDIT_CARD", "CASH", "OTHER"))
        body: dict | None  # None: rule 2, a card payment of what remains
        body = {"method": method}  # assigned apart from the declaration so that mypy narrows it to a dict
        if mode < 0.3:
            body = None
        elif mode < 0.55:
            body["amount"] = max(0.01, round(remaining * self.rng.uniform(0.2, 0.8), 2))
        elif mode < 0.7:
            body["amount"] = round(remaining + self.rng.choice((5, 20, 100)), 2)
        elif mode < 0.85:
            records = self.portal.stores["transactions"].records
            unused = [
                t
                for t in sorted(self.portal.transactions_by_customer.get(invoice["customerId"], ()))
                if self.portal.unused(records[t]) > 0
            ]
            if unused:
                body = {"transactionId": unused[0]}
        self.portal.pay_document(invoice["id"], body)
        return True

    def _credit_note(self) -> bool:
        invoice = self._pick("documents", self.portal.is_open_invoice)
        if invoice is None:
            return False
        price = max(1.0, round(float(invoice["amountNet"]) * self.rng.uniform(0.1, 0.3), 2))
        self.portal.create(
            "documents",
            {
                "customerId": invoice["customerId"],
                "subtype": "CREDIT_NOTE",
                "invoiceId": invoice["id"],
                "status": "VALIDATED",
                "lines": [{"name": "Avoir commercial", "price": price, "vat": 20}],
            },
        )
        return True

    def _new_version(self) -> bool:
        return self._on_document(
            lambda d: d["status"] == "VALIDATED" and not self.portal.usages_by_document.get(d["id"]),
            lambda i: self.portal.new_version(
                i, {"title": self.rng.choice(("Version corrigée", "Mise à jour"))}
            ),
        )

    def _send_reminder(self) -> bool:
        customers = self.portal.stores["customers"].records
        return self._on_document(
            lambda d: self.portal.is_open_invoice(d) and bool(customers[d["customerId"]].get("email")),
            lambda i: self.portal.send_message(i, None),
        )

    # supplier documents ---------------------------------------------------------------------------
    def _receive_supplier_document(self) -> bool:
        supplier = self._pick("suppliers", lambda s: True)
        if supplier is None:
            return False
        amount = round(self.rng.uniform(40, 5000), 2)
        self.portal.receive_supplier_document(
            supplier["id"],
            {
                "reference": f"FA-{self.rng.randint(1, 999999):06d}",
                "amount": amount,
                "vat": round(amount * 0.2, 2),
                "tags": self.rng.sample(("urgent", "à vérifier"), self.rng.randint(0, 1)),
            },
        )
        return True

    def _tag_supplier_document(self) -> bool:
        document = self._pick("supplier_documents", lambda d: True)
        if document is None:
            return False
        tags = sorted(set(document.get("tags") or []) ^ {self.rng.choice(("urgent", "à vérifier", "litige"))})
        self.portal.tag_supplier_document(document["id"], tags)
        return True

    def _change_supplier_document_status(self) -> bool:
        document = self._pick("supplier_documents", lambda d: d["status"] != "paid")
        if document is None:
            return False
        action = self.rng.choice(sorted(TRANSITIONS[document["status"]]))
        self.portal.change_supplier_document_status(document["id"], {"action": action}, by="application")
        return True
