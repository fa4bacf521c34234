"""Payments (transactions), their usages on invoices, and credit notes applied to invoices."""

from __future__ import annotations

from decimal import Decimal

from invoicing_sandbox.clock import iso, parse_iso
from invoicing_sandbox.errors import bad_request

from .document_input import PAYMENT_METHODS
from .money import ZERO, round2
from .render import render_document
from .state import PortalState
from .validation import Field, check_body, midnight

PAYMENT_SCHEMA = {
    "amount": Field("number"),
    "date": Field("datetime"),
    "method": Field("enum", values=PAYMENT_METHODS),
    "transactionId": Field("str"),
    "metadata": Field("str"),
}


class PaymentMixin(PortalState):
    """POST /documents/{id}/payment (payment rules 1-4) and every transaction usage."""

    def _pay(self, invoice: dict, body: dict | None) -> dict:
        fields = check_body(body, PAYMENT_SCHEMA)
        if invoice["type"] != "INVOICE" or invoice.get("subtype") not in (None, "DEPOSIT"):
            kind = invoice.get("subtype") or invoice["type"]
            raise bad_request(f"document is a {kind}; only invoices and deposit invoices can be paid")
        if invoice["status"] != "VALIDATED":
            raise bad_request(f"invoice is {invoice['status']}; only a VALIDATED invoice can be paid")
        remaining = self.remaining(invoice)
        if remaining <= ZERO:
            raise bad_request("invoice has nothing left to pay")
        amount = fields.get("amount")
        if amount is not None:
            amount = round2(amount)
            if amount <= ZERO:
                raise bad_request("invalid body: body.amount: must be greater than 0")
        if fields.get("transactionId") is not None:
            return self._use_transaction(invoice, fields["transactionId"], amount, remaining)
        amount = amount if amount is not None else remaining  # rule 1: default is what remains
        customer = self.stores["customers"].records[invoice["customerId"]]
        transaction = self.new_record(
            {
                "customerId": invoice["customerId"],
                "customerName": customer["name"],
                "documentId": invoice["id"],
                "amount": amount,
                "refundedAmount": ZERO,
                "date": iso(midnight(fields.get("date") or self.clock.today())),  # rule 3
                "method": fields.get("method") or "CREDIT_CARD",  # rule 2
                "metadata": fields.get("metadata"),
                "_used": ZERO,
            }
        )
        self.save("transactions", transaction)
        self.transactions_by_customer[transaction["customerId"]].add(transaction["id"])
        self._add_usage(invoice, min(amount, remaining), transaction["date"], transaction=transaction)
        return transaction

    def _use_transaction(self, invoice: dict, transaction_id: str, amount, remaining) -> dict:
        transaction = self.stores["transactions"].records.get(transaction_id)
        if transaction is None or transaction["customerId"] != invoice["customerId"]:
            raise bad_request(
                f"invalid body: body.transactionId: {transaction_id} is not a payment of this "
                "invoice's customer"
            )
        unused = self.unused(transaction)
        if unused <= ZERO:
            raise bad_request(f"transaction {transaction_id} has no unused amount left")
        use = min(unused if amount is None else min(amount, unused), remaining)
        self._add_usage(invoice, use, transaction["date"], transaction=transaction)
        return transaction

    def _write_off(self, invoice: dict) -> dict:
        """The application's "mark as paid": status PAID, no usage for the residual (it stays `remaining`)."""
        if invoice["type"] != "INVOICE" or invoice.get("subtype") not in (None, "DEPOSIT"):
            raise bad_request("only invoices and deposit invoices can be marked paid")
        if invoice["status"] != "VALIDATED":
            raise bad_request(f"invoice is {invoice['status']}; only a VALIDATED invoice can be marked paid")
        invoice["status"] = "PAID"
        self.save("documents", invoice)
        self.emit("document.updated", lambda: render_document(invoice))
        self.emit("invoice.paid", lambda: render_document(invoice))
        self.refresh_customer(invoice["customerId"])
        return invoice
    def _refund(self, source: dict, amount, date: str | None = None, method: str | None = None) -> dict:
        """A refund: money paid back to the customer, recorded as a transaction whose `amount` is negative
        (api-facts). `source` is a payment (a transaction with amount > 0: its `refundedAmount` grows, up to
        what is still unused) or a VALIDATED credit note (what is left of it once applied to invoices: its
        `totalPayments` grows, `remaining` falls, and the refund's `documentId` names it). Returns the refund."""
        amount = round2(Decimal(str(amount)))
        if amount <= ZERO:
            raise bad_request("invalid body: body.amount: must be greater than 0")
        if source.get("subtype") == "CREDIT_NOTE":
            if source["status"] != "VALIDATED":
                raise bad_request(f"credit note is {source['status']}; only a VALIDATED one can be refunded")
            left, document_id = self.remaining(source), source["id"]
        elif "refundedAmount" in source and source["amount"] > ZERO:
            left, document_id = self.unused(source), None
        else:
            raise bad_request("only a payment or a credit note can be refunded")
        if amount > left:
            raise bad_request(f"refund of {amount} is more than the {left} left to refund")
        customer = self.stores["customers"].records[source["customerId"]]
        refund = self.new_record(
            {
                "customerId": source["customerId"],
                "customerName": customer["name"],
                "documentId": document_id,
                "amount": -amount,
                "refundedAmount": ZERO,
                "date": iso(midnight(parse_iso(date) if date else self.clock.today())),
                "method": method or "TRANSFER",
                "metadata": None,
                "_used": ZERO,
            }
        )
        self.save("transactions", refund)
        self.transactions_by_customer[refund["customerId"]].add(refund["id"])
        if document_id is None:
            source["refundedAmount"] += amount
            self.save("transactions", source)
        else:
            source["_paid"] += amount
            self.save("documents", source)
            self.emit("document.updated", lambda: render_document(source))
        return refund

    @staticmethod
    def unused(transaction: dict):
        """Unapplied payment: amount - usedAmount - refundedAmount."""
        return transaction["amount"] - transaction["_used"] - transaction["refundedAmount"]

    def _apply_credit_note(self, credit_note: dict) -> None:
        invoice = self.stores["documents"].records.get(credit_note["invoiceId"])
        if invoice is None or invoice["status"] != "VALIDATED":
            return
        use = min(credit_note["amountVatNet"], self.remaining(invoice))
        if use > ZERO:
            self._add_usage(invoice, use, credit_note["emitDate"], credit_note=credit_note)

    def _add_usage(
        self,
        invoice: dict,
        amount,
        date: str,
        transaction: dict | None = None,
        credit_note: dict | None = None,
    ) -> dict:
        usage = self.new_record(
            {
                "type": "TRANSACTION" if transaction is not None else "CREDIT_NOTE",
                "customerId": invoice["customerId"],
                "invoiceId": invoice["id"],
                "transactionId": transaction["id"] if transaction is not None else None,
                "transaction": None
                if transaction is None
                else {
                    "id": transaction["id"],
                    "amount": transaction["amount"],
                    "date": transaction["date"],
                    "method": transaction["method"],
                },
                "creditNoteId": credit_note["id"] if credit_note is not None else None,
                "amount": amount,
                "date": date,
            }
        )
        self.save("transaction_usages", usage)
        self.usages_by_document[invoice["id"]].append(usage["id"])
        if transaction is not None:
            self.usages_by_transaction[transaction["id"]].append(usage["id"])
            transaction["_used"] += amount
            self.save("transactions", transaction)
        if credit_note is not None:
            self.usages_by_document[credit_note["id"]].append(usage["id"])
            credit_note["_paid"] += amount
            self.save("documents", credit_note)
            self.emit("document.updated", lambda: render_document(credit_note))
        invoice["_paid"] += amount
        paid = self.remaining(invoice) <= ZERO  # rule 4: PAID only when fully covered
        if paid:
            invoice["status"] = "PAID"
        self.save("documents", invoice)
        self.emit("document.updated", lambda: render_document(invoice))
        if paid:
            self.emit("invoice.paid", lambda: render_document(invoice))
        self.refresh_customer(invoice["customerId"])
        return usage
