"""E-mails about documents (message rules 1-4) and document PDFs."""

from __future__ import annotations

from invoicing_sandbox.clock import parse_iso
from invoicing_sandbox.errors import bad_request

from .money import number_text
from .pdf import make_pdf, pdf_b64
from .render import render_document
from .state import PortalState
from .validation import Field, check_body

TEMPLATES = ("STANDARD", "PRELAUNCH", "RELAUNCH1", "RELAUNCH2")
SUBJECTS = {
    "STANDARD": "{kind} {reference} de {company}",
    "PRELAUNCH": "Échéance proche : {kind} {reference} de {company}",
    "RELAUNCH1": "Relance : {kind} {reference} de {company} en retard de paiement",
    "RELAUNCH2": "Deuxième relance : {kind} {reference} de {company} en retard de paiement",
}
MESSAGE_SCHEMA = {
    "from": Field("str"),
    "to": Field("str"),
    "model": Field("enum", values=TEMPLATES),
    "subject": Field("str"),
    "message": Field("str", max_length=100000),
    "cc": Field("str"),
}
SOON_DUE_DAYS = 7  # PRELAUNCH: due within 0-7 days (docs/resources.md)


class MessageMixin(PortalState):
    """POST /documents/{id}/messages and GET /documents/{id}/pdf."""

    def default_template(self, document: dict) -> str:
        """Rule 4: STANDARD, PRELAUNCH (due within 7 days), RELAUNCH1 (late), RELAUNCH2 (late, reminded)."""
        if document.get("dueDate") is None or not self.is_open_invoice(document):
            return "STANDARD"
        today = self.clock.today()
        days_left = (parse_iso(document["dueDate"]) - today).days
        if days_left < 0:
            reminded = any(m["model"] in ("RELAUNCH1", "RELAUNCH2") for m in document.get("messages") or ())
            return "RELAUNCH2" if reminded else "RELAUNCH1"
        return "PRELAUNCH" if days_left <= SOON_DUE_DAYS else "STANDARD"

    def _send_message(self, document: dict, body: dict | None) -> dict:
        fields = check_body(body, MESSAGE_SCHEMA)
        if document["status"] in ("DRAFT", "CANCELED"):
            raise bad_request(f"document is {document['status']}; only a validated document can be sent")
        senders = [address for address in (self.portal.get("email"), self.user.get("email")) if address]
        sender = fields.get("from") or senders[0]  # rule 1
        if sender not in senders:
            raise bad_request("invalid body: body.from: must be the portal or the user e-mail address")
        customer = self.stores["customers"].records[document["customerId"]]
        recipient = fields.get("to") or customer.get("email")  # rule 2
        if not recipient:
            raise bad_request("the customer has no e-mail address: set `to` to send this document")
        model = fields.get("model") or self.default_template(document)  # rules 3-4
        kind = "Devis" if document["type"] == "QUOTATION" else "Facture"
        company = self.portal["enterprise"].get("tradeName") or self.portal["enterprise"]["name"]
        subject = fields.get("subject") or SUBJECTS[model].format(
            kind=kind, reference=document["reference"], company=company
        )
        message = {
            "date": self.now_iso(),
            "model": model,
            "from": sender,
            "to": recipient,
            "subject": subject,
        }
        document["messages"].append(message)
        self.save("documents", document)
        self.emit("document.updated", lambda: render_document(document))
        return dict(message)

    def _document_pdf(self, document: dict) -> dict:
        lines = [
            self.portal["enterprise"]["name"],
            f"{document['type']} {document['reference']}",
            f"Client : {(document.get('to') or {}).get('name')}",
            f"Date : {document['emitDate'][:10]}",
        ]
        for line in document.get("lines") or ():
            lines.append(
                f"{line['name']}  x{number_text(line['quantity'])}  {number_text(line['price'])} EUR"
            )
        lines.append(f"Total TTC : {number_text(document['amountVatNet'])} EUR")
        return pdf_b64(make_pdf(lines))
