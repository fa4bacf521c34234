"""Documents: creation, validation and references, quotation actions, conversion, deletion, versions."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from invoicing_sandbox.clock import iso, parse_iso
from invoicing_sandbox.errors import bad_request

from .document_input import DOCUMENT_SCHEMA, EDITABLE, build_lines, legal_notice, totals_from
from .money import ZERO
from .render import render_document
from .state import PortalState
from .validation import check_body, midnight, require

PAYMENT_TERM_DAYS = 30  # default due date (invoices) and validity (quotations) after the emit date
PREFIXES = {
    ("QUOTATION", None): "D",
    ("INVOICE", None): "F",
    ("INVOICE", "CREDIT_NOTE"): "A",
    ("INVOICE", "PROFORMA"): "PF",
    ("INVOICE", "DEPOSIT"): "AC",
}


class DocumentMixin(PortalState):
    """Writes of documents (the state table of the spec)."""

    if TYPE_CHECKING:  # given by PaymentMixin, a sibling base of `Portal`

        def _apply_credit_note(self, credit_note: dict) -> None: ...

    # creation -------------------------------------------------------------------------------------
    def _create_document(self, body: dict) -> dict:
        fields = check_body(body, DOCUMENT_SCHEMA)
        require(fields, "customerId")
        customer = self.stores["customers"].records.get(fields["customerId"])
        if customer is None:
            raise bad_request(f"invalid body: body.customerId: unknown customer {fields['customerId']}")
        if customer.get("deleted"):
            raise bad_request("invalid body: body.customerId: the customer is deleted")
        doc_type = fields.get("type") or "INVOICE"
        if doc_type == "OTHER":
            raise bad_request("documents of type OTHER cannot be created through the API")
        subtype = fields.get("subtype")
        if subtype is not None and doc_type != "INVOICE":
            raise bad_request(f"subtype {subtype} applies to invoices only")
        status = fields.get("status") or "DRAFT"
        if status not in ("DRAFT", "VALIDATED"):
            raise bad_request(f"a document is created DRAFT or VALIDATED, not {status}")
        if status == "VALIDATED":
            self._require_reference_method()
        invoice_id = fields.get("invoiceId")
        if invoice_id is not None:
            self._check_credited_invoice(subtype, invoice_id, customer["id"])
        exemption, notice = legal_notice(fields)
        lines = build_lines(fields.get("lines") or [], self.stores["items"].records)
        totals = totals_from(fields, lines)
        emit_date = midnight(fields.get("emitDate") or self.clock.today())
        due_date = fields.get("dueDate")
        if due_date is None and subtype not in ("CREDIT_NOTE",):
            due_date = emit_date + timedelta(days=PAYMENT_TERM_DAYS)
        enterprise = self.portal["enterprise"]
        issuer = {
            "name": enterprise.get("name"),
            "email": self.portal.get("email"),
            "tradeName": (fields.get("from") or {}).get("tradeName") or enterprise.get("tradeName"),
        }
        record = {
            "customerId": customer["id"],
            "type": doc_type,
            "subtype": subtype,
            "status": status,
            "reference": None,
            "referenceInternal": fields.get("referenceInternal"),
            "title": fields.get("title"),
            "messageTop": fields.get("messageTop"),
            "messageBottom": fields.get("messageBottom"),
            "emitDate": iso(emit_date),
            "dueDate": iso(midnight(due_date)) if due_date else None,
            "to": {
                "name": customer["name"],
                "email": customer.get("email"),
                "address": customer.get("address"),
            },
            "from": issuer,
            "lines": lines,
            "discount": fields.get("discount"),
            "amountNotice": notice,
            "vatExemptionType": exemption,
            "paymentMethod": fields.get("paymentMethod"),
            "invoiceId": invoice_id,
            "version": "1.0",
            "prevDoc": None,
            "nextDoc": None,
            "messages": [],
            "_paid": ZERO,
            "metadata": fields.get("metadata"),
        }
        record.update(totals)
        # a document created VALIDATED gets its final reference at once (no temporary one)
        record["reference"] = (
            self._final_reference(record) if status == "VALIDATED" else self._temporary_reference()
        )
        document = self._insert_document(record)
        if status == "VALIDATED":
            self._after_validation(document)
        return document

    def _insert_document(self, fields: dict) -> dict:
        return self._file_document(self.new_record(fields))

    def _file_document(self, document: dict) -> dict:
        self.save("documents", document)
        self.docs_by_customer[document["customerId"]].add(document["id"])
        self.emit("document.created", lambda: render_document(document))
        self.refresh_customer(document["customerId"])
        return document

    def _check_credited_invoice(self, subtype: str | None, invoice_id: str, customer_id: str) -> None:
        if subtype != "CREDIT_NOTE":
            raise bad_request("invoiceId is accepted on credit notes only")
        invoice = self.stores["documents"].records.get(invoice_id)
        if (
            invoice is None
            or invoice["type"] != "INVOICE"
            or invoice.get("subtype") not in (None, "DEPOSIT")
            or invoice["customerId"] != customer_id
            or invoice["status"] not in ("VALIDATED", "PAID")
        ):
            raise bad_request(
                f"invalid body: body.invoiceId: {invoice_id} is not a validated invoice of this customer"
            )

    # references -----------------------------------------------------------------------------------
    def _temporary_reference(self) -> str:
        self.counters["draft"] += 1
        return f"RT{self.counters['draft']:06d}"

    def _require_reference_method(self) -> str:
        method = self.portal.get("referenceAssignmentMethod")
        if method is None:
            raise bad_request(
                "the portal must choose a reference assignment method (PATCH /portal "
                "referenceAssignmentMethod) before validating documents"
            )
        return method

    def _final_reference(self, document: dict) -> str:
        prefix = PREFIXES[(document["type"], document.get("subtype"))]
        if self._require_reference_method() == "YEARLY":
            year = parse_iso(document["emitDate"]).year
            key: tuple[str, int | None] = (prefix, year)
            template = f"{prefix}{year}-%05d"
        else:
            key, template = (prefix, None), f"{prefix}-%06d"
        self.reference_counters[key] = self.reference_counters.get(key, 0) + 1
        return template % self.reference_counters[key]

    # state table ----------------------------------------------------------------------------------
    def _validate(self, document: dict) -> dict:
        if document["status"] != "DRAFT":
            raise bad_request(f"document is {document['status']}; only a DRAFT document can be validated")
        document["reference"] = self._final_reference(document)
        document["status"] = "VALIDATED"
        self.save("documents", document)
        self.emit("document.updated", lambda: render_document(document))
        return self._after_validation(document)

    def _after_validation(self, document: dict) -> dict:
        kind = "quotation" if document["type"] == "QUOTATION" else "invoice"
        self.emit(f"{kind}.validated", lambda: render_document(document))
        if document.get("subtype") == "CREDIT_NOTE" and document.get("invoiceId"):
            self._apply_credit_note(document)
        self.refresh_customer(document["customerId"])
        return document

    def _quotation_answer(self, document: dict, accepted: bool) -> dict:
        verb = "accepted" if accepted else "refused"
        if document["type"] != "QUOTATION":
            raise bad_request(f"document is an {document['type']}; only a quotation can be {verb}")
        if document["status"] != "VALIDATED":
            raise bad_request(f"quotation is {document['status']}; only a VALIDATED quotation can be {verb}")
        document["status"] = "ACCEPTED" if accepted else "REFUSED"
        self.save("documents", document)
        self.emit("document.updated", lambda: render_document(document))
        self.emit(f"quotation.{verb}", lambda: render_document(document))
        return document

    def _convert(self, quotation: dict) -> dict:
        if quotation["type"] != "QUOTATION" or quotation["status"] != "ACCEPTED":
            raise bad_request(
                f"document is a {quotation['type']} in status {quotation['status']}; only an "
                "ACCEPTED quotation can be converted to an invoice"
            )
        fields = {
            name: quotation.get(name)
            for name in (
                "customerId",
                "referenceInternal",
                "title",
                "messageTop",
                "messageBottom",
                "to",
                "from",
                "lines",
                "discount",
                "amount",
                "vat",
                "amountVat",
                "amountNet",
                "amountVatNet",
                "amountNotice",
                "vatExemptionType",
                "paymentMethod",
                "metadata",
            )
        }
        today = self.clock.today()
        fields.update(
            type="INVOICE",
            subtype=None,
            status="DRAFT",
            reference=self._temporary_reference(),
            emitDate=iso(today),
            dueDate=iso(today + timedelta(days=PAYMENT_TERM_DAYS)),
            invoiceId=None,
            version="1.0",
            prevDoc=None,
            nextDoc=None,
            messages=[],
            _paid=ZERO,
        )
        invoice = self._insert_document(fields)
        quotation["status"] = "CONVERTED"
        self.save("documents", quotation)
        self.emit("document.updated", lambda: render_document(quotation))
        self.refresh_customer(quotation["customerId"])
        return invoice

    def _delete_document(self, document: dict) -> None:
        if document["status"] != "DRAFT":
            raise bad_request(f"document is {document['status']}; only a DRAFT document can be deleted")
        # rendered before removal, and only when someone listens (emit never calls the payload otherwise)
        gone = render_document(document) if self.listeners else {}
        self.stores["documents"].remove(document["id"])
        self.docs_by_customer[document["customerId"]].discard(document["id"])
        self.emit("document.deleted", lambda: gone)
        self.refresh_customer(document["customerId"])

    # versions (the web application, not API v2) ---------------------------------------------------
    def _new_version(self, document: dict, changes: dict) -> dict:
        fields = check_body(changes, EDITABLE, "changes")
        if document["status"] != "VALIDATED":
            raise bad_request(
                f"document is {document['status']}; only a VALIDATED document gets a new version"
            )
        settled = self.usages_by_document.get(document["id"])
        if settled and self.config.contract.paid_invoice_versions == "refused":
            raise bad_request("document has payments or credits applied; it cannot get a new version")
        record = {name: value for name, value in document.items() if name not in ("id", "lastUpdate")}
        if "lines" in fields:
            record["lines"] = build_lines(fields.pop("lines") or [], self.stores["items"].records)
        for name in ("emitDate", "dueDate"):
            if name in fields:
                value = fields.pop(name)
                record[name] = iso(midnight(value)) if value is not None else None
        record.update(fields)
        record.update(totals_from(record, record["lines"]))
        major, minor = document["version"].split(".")
        record.update(
            version=f"{major}.{int(minor) + 1}",
            prevDoc=document["id"],
            nextDoc=None,
            # usages left on the replaced version still settle the document: the new one owes what they leave
            _paid=document["_paid"] if settled else ZERO,
            messages=list(document["messages"]),
        )
        if settled and self.remaining(record) <= ZERO:
            record["status"] = "PAID"
        new = self.new_record(record)
        document["status"] = "CANCELED"
        document["nextDoc"] = new["id"]
        self.save_derived("documents", document)
        self.emit("document.updated", lambda: render_document(document))
        return self._file_document(new)
