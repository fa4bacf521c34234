"""Suppliers, uploaded assets, supplier documents, their status actions and event history."""

from __future__ import annotations

from datetime import timedelta

from invoicing_sandbox.clock import iso
from invoicing_sandbox.errors import bad_request, conflict, not_found

from .money import ZERO
from .pdf import make_pdf, pdf_b64
from .render import render_supplier, render_supplier_document
from .state import PortalState
from .validation import ADDRESS_FIELD, Field, check_body, midnight, require

SUPPLIER_SCHEMA = {
    "name": Field("str"),
    "legalIdentifier": Field("str"),
    "email": Field("str"),
    "phone": Field("str"),
    "address": ADDRESS_FIELD,
    "tags": Field("list", item=Field("str", nullable=False)),
    "metadata": Field("str"),
}
SUPPLIER_DOCUMENT_SCHEMA = {
    "fileKey": Field("str"),
    "supplierId": Field("str"),
    "reference": Field("str"),
    "type": Field("enum", values=("invoice", "creditNote")),
    "issueDate": Field("datetime"),
    "dueDate": Field("datetime"),
    "amount": Field("number"),
    "vat": Field("number"),
    "amountVat": Field("number"),
    "tags": Field("list", item=Field("str", nullable=False)),
    "metadata": Field("str"),
}
STATUS_SCHEMA = {
    "action": Field("enum", nullable=False, values=("approve", "refuse", "dispute", "declarePayment")),
    "paymentDate": Field("datetime"),
}
# docs/resources.md: the moves the application allows, by current status
TRANSITIONS = {
    "toApprove": {"approve": "approved", "refuse": "refused", "dispute": "disputed"},
    "approved": {"refuse": "refused", "dispute": "disputed", "declarePayment": "paid"},
    "disputed": {"approve": "approved", "refuse": "refused"},
    "refused": {"approve": "approved"},
    "paid": {},
}
EMAIL_PDF_DELAY = timedelta(minutes=5)  # a document received by e-mail is processed (PDF ready) after this


class SupplierMixin(PortalState):
    """Writes and reads of suppliers and supplier documents."""

    def _create_supplier(self, body: dict) -> dict:
        fields = check_body(body, SUPPLIER_SCHEMA)
        require(fields, "name", "legalIdentifier")
        if fields["legalIdentifier"] in self.supplier_by_legal_identifier:
            raise conflict(f"a supplier with legalIdentifier {fields['legalIdentifier']} already exists")
        fields["tags"] = list(fields.get("tags") or [])
        supplier = self.save("suppliers", self.new_record(fields))
        self.supplier_by_legal_identifier[supplier["legalIdentifier"]] = supplier["id"]
        self.emit("supplier.created", lambda: render_supplier(supplier))
        return supplier

    def _update_supplier(self, supplier: dict, body: dict) -> dict:
        fields = check_body(body, SUPPLIER_SCHEMA)
        if "legalIdentifier" in fields and fields["legalIdentifier"] != supplier["legalIdentifier"]:
            raise bad_request("legalIdentifier cannot be changed after creation")
        if "name" in fields:
            require(fields, "name")
        if "tags" in fields:
            fields["tags"] = list(fields["tags"] or [])
        changed = any(supplier.get(name) != value for name, value in fields.items())
        supplier.update(fields)
        self.save("suppliers", supplier)
        if changed:  # events rule 2: no supplier.updated when nothing visible changed
            self.emit("supplier.updated", lambda: render_supplier(supplier))
        return supplier

    def _delete_supplier(self, supplier: dict) -> None:
        if self.supplier_docs_by_supplier.get(supplier["id"]):
            raise conflict("supplier documents are still attached to this supplier; it cannot be deleted")
        self.stores["suppliers"].remove(supplier["id"])
        self.supplier_by_legal_identifier.pop(supplier["legalIdentifier"], None)
        self.emit("supplier.deleted", lambda: {"supplierId": supplier["id"]})

    def _upload_asset(self, filename: str, content_type: str, content: bytes) -> dict:
        if not isinstance(content, (bytes, bytearray)) or not bytes(content[:5]) == b"%PDF-":
            raise bad_request("only PDF files are accepted (the file does not start with %PDF-)")
        key = self.ids.new(self.clock.now())
        self.assets[key] = {"fileName": filename, "contentType": content_type, "content": bytes(content)}
        return {"assetKey": key, "fileName": filename, "size": len(content)}

    def _create_supplier_document(
        self, body: dict, origin: str = "manualImport", status: str = "approved", by: str = "api"
    ) -> dict:
        fields = check_body(body, SUPPLIER_DOCUMENT_SCHEMA)
        if origin == "manualImport":
            require(fields, "fileKey", "supplierId")
            asset = self.assets.get(fields["fileKey"])
            if asset is None or asset.get("used"):
                raise bad_request(
                    f"invalid body: body.fileKey: {fields['fileKey']} is not an unused asset key"
                )
            asset["used"] = True
        if fields.get("supplierId") not in self.stores["suppliers"].records:
            raise bad_request(f"invalid body: body.supplierId: {fields.get('supplierId')} is not a supplier")
        amount, vat, amount_vat = fields.get("amount"), fields.get("vat"), fields.get("amountVat")
        if amount_vat is None and amount is not None:
            amount_vat = amount + (vat or ZERO)
        if vat is None and amount is not None and amount_vat is not None:
            vat = amount_vat - amount
        now = self.clock.now()
        issue = midnight(fields.get("issueDate") or now)
        record = self.new_record(
            {
                "supplierId": fields["supplierId"],
                "fileKey": fields.get("fileKey") or self.ids.new(now),
                "status": status,
                "reference": fields.get("reference"),
                "type": fields.get("type") or "invoice",
                "issueDate": iso(issue),
                "dueDate": iso(midnight(fields["dueDate"])) if fields.get("dueDate") else None,
                "amount": amount,
                "vat": vat,
                "amountVat": amount_vat,
                "currency": "EUR",
                "origin": origin,
                "tags": list(fields.get("tags") or []),
                "paymentDate": None,
                "metadata": fields.get("metadata"),
                "_pdfAt": iso(now if origin == "manualImport" else now + EMAIL_PDF_DELAY),
            }
        )
        document = self.save("supplier_documents", record)
        self.supplier_docs_by_supplier[document["supplierId"]].add(document["id"])
        self._record_event(document, "create", None, by)
        self.emit("supplier-document.created", lambda: render_supplier_document(document))
        return document

    def _change_status(self, document: dict, body: dict, by: str = "api") -> dict:
        fields = check_body(body, STATUS_SCHEMA)
        require(fields, "action")
        previous = document["status"]
        action = fields["action"]
        target = TRANSITIONS[previous].get(action)
        if target is None:
            allowed = ", ".join(TRANSITIONS[previous]) or "none"
            raise bad_request(
                f"supplier document is {previous}; action {action} is not allowed (allowed: {allowed})"
            )
        if fields.get("paymentDate") is not None and action != "declarePayment":
            raise bad_request("paymentDate goes with the declarePayment action only")
        document["status"] = target
        if action == "declarePayment":
            document["paymentDate"] = iso(midnight(fields.get("paymentDate") or self.clock.now()))
        if by == "api":
            self.save("supplier_documents", document)
        else:  # the application's own move (a payment matched, an approval flow): a derived change
            self.save_derived("supplier_documents", document)
        self._record_event(document, action, previous, by)
        self.emit(
            "supplier-document.status-change",
            lambda: {"supplierDocument": render_supplier_document(document), "previousStatus": previous},
        )
        return document

    def _tag_supplier_document(self, document: dict, tags: list) -> dict:
        tags = check_body({"tags": tags}, {"tags": SUPPLIER_DOCUMENT_SCHEMA["tags"]})["tags"] or []
        changed = tags != document.get("tags")
        document["tags"] = list(tags)
        self.save("supplier_documents", document)
        if changed:  # events rule 2: supplier-document.updated fires when tags change
            self.emit("supplier-document.updated", lambda: render_supplier_document(document))
        return document

    def _record_event(self, document: dict, action: str, previous: str | None, by: str) -> None:
        now = self.clock.now()
        self.events_by_supplier_document[document["id"]].append(
            {
                "id": self.ids.new(now),
                "supplierDocumentId": document["id"],
                "date": iso(now),
                "action": action,
                "previousStatus": previous,
                "status": document["status"],
                "origin": by,
            }
        )

    def _supplier_document_pdf(self, document: dict) -> dict:
        if document["_pdfAt"] > self.now_iso():
            raise not_found("")
        asset = self.assets.get(document["fileKey"])
        if asset is not None:
            return pdf_b64(asset["content"])
        return pdf_b64(
            make_pdf(
                [
                    f"Facture fournisseur {document.get('reference') or document['id']}",
                    f"Montant TTC : {document.get('amountVat')} EUR",
                ]
            )
        )
