"""What a `ContractProfile` serves: rendered records as the HTTP layer sends them, and list parameters as
the HTTP layer receives them.

The domain renders every record with all the sandbox's fields (`Portal.snapshot`, the ground truth); the
routes and the webhook deliveries pass those records through `served_record` / `served_payload`, which leave
them untouched under the default profile and otherwise drop invented fields, rename spellings the contract
does not give, shift date-only fields and flip credit-note signs (customer and supplier). Nothing here writes to the
portal.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from invoicing_sandbox.contract import MIXED, ContractProfile
from invoicing_sandbox.errors import bad_request

# Fields no spec or api-facts sentence names, by family (see invoicing_sandbox/README.md, "Contract profiles"); the
# keys are contract.INVENTED_FIELD_FAMILIES.
# Input fields the contract names (dueDate, discount, paymentMethod) may come back and are not listed.
INVENTED_FIELDS: dict[str, tuple[str, ...]] = {
    "documents": ("remaining", "invoiceId"),  # facts name totalPayments, version, prevDoc, nextDoc
    "document_messages": ("messages",),  # spec: the message record is "not shown"
    "transactions": ("documentId",),  # facts: customerId, amount, usedAmount, refundedAmount, date, method
    "transaction_usages": ("transactionId", "date"),  # facts: the embedded `transaction` only
    "suppliers": ("email", "phone", "address"),  # spec: id, legal name, legalIdentifier, tags
    "supplier_documents": ("paymentDate",),  # spec: the payment action's field names are not shown
    "supplier_document_events": ("supplierDocumentId", "date", "action", "previousStatus", "origin"),
    "webhooks": ("enabled", "failures"),  # spec: id, target address, subscribed events
}
# nested document fields beyond `to.name` (spec), `from.name`/`from.tradeName` (spec) and the facts' lines
INVENTED_DOCUMENT_PARTS = {"to": ("email", "address"), "from": ("email",), "lines": ("unit",)}
# fields holding a date without a time (the sandbox stores them at 00:00:00Z)
DATE_ONLY_FIELDS = {
    "documents": ("emitDate", "dueDate"),
    "transactions": ("date",),
    "transaction_usages": ("date",),
    "supplier_documents": ("issueDate", "dueDate", "paymentDate"),
}
SUPPLIER_CREDIT_NOTE_AMOUNTS = ("amount", "vat", "amountVat")
CREDIT_NOTE_TOTALS = ("amount", "vat", "amountVat", "amountNet", "amountVatNet", "totalPayments", "remaining")
WINDOW_PARAMETERS = ("updatedSince", "updatedUntil", "orderBy", "order")
PAGING_PARAMETERS = ("limit", "skip")
# webhook events whose payload is a record under `data`, by the record's resource
EVENT_RESOURCES = {
    "document": "documents",
    "invoice": "documents",
    "quotation": "documents",
    "customer": "customers",
    "product": "items",
    "supplier": "suppliers",
    "supplier-document": "supplier_documents",
}


def _spellings(profile: ContractProfile) -> dict[tuple[str, str], dict[str, str]]:
    """(resource, field) -> {sandbox spelling: served spelling}, only where they differ."""
    pairs = {
        ("documents", "subtype"): ("DEPOSIT", profile.deposit_subtype_name),
        ("supplier_documents", "type"): ("creditNote", profile.supplier_credit_note_type),
        ("supplier_documents", "status"): ("paid", profile.supplier_paid_status),
    }
    return {key: {own: served} for key, (own, served) in pairs.items() if own != served}


def _zone_midnight(value: object, zone: str) -> object:
    """`YYYY-MM-DDT00:00:00Z` -> the same date's midnight in `zone`, in UTC (the previous UTC day)."""
    if not isinstance(value, str) or not value.endswith("T00:00:00Z"):
        return value
    day = datetime.strptime(value[:10], "%Y-%m-%d")
    local = day.replace(tzinfo=ZoneInfo(zone))
    return local.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _currency(served: str, record: dict) -> str:
    """The currency `served` names; "mixed": EUR or USD by the last digit of the record's id."""
    if served != MIXED:
        return served
    return "USD" if int(str(record.get("id") or "0")[-1], 16) % 2 else "EUR"


def _negated(value: object) -> object:
    return -value if isinstance(value, (int, float)) and not isinstance(value, bool) and value else value


def _document(record: dict, profile: ContractProfile) -> None:
    if "documents" in profile.invented_fields_omitted:
        for part, names in INVENTED_DOCUMENT_PARTS.items():
            nested = record.get(part)
            for inner in nested if isinstance(nested, list) else [nested]:
                if isinstance(inner, dict):
                    for name in names:
                        inner.pop(name, None)
    if profile.credit_note_sign == "negative" and record.get("subtype") == "CREDIT_NOTE":
        for name in CREDIT_NOTE_TOTALS:
            if name in record:
                record[name] = _negated(record[name])
        for line in record.get("lines") or ():
            line["price"] = _negated(line.get("price"))


def served_record(resource: str, record: dict, profile: ContractProfile) -> dict:
    """`record` (as the domain renders it) as `profile` serves it; the default profile returns it as is."""
    if profile.is_default or not isinstance(record, dict):
        return record
    out = dict(record)
    families = [resource] + (["document_messages"] if resource == "documents" else [])
    for family in families:
        if family in profile.invented_fields_omitted:
            for name in INVENTED_FIELDS[family]:
                out.pop(name, None)
    if resource == "documents":
        for part in ("to", "from"):
            if isinstance(out.get(part), dict):
                out[part] = dict(out[part])
        out["lines"] = [dict(line) for line in out.get("lines") or ()]
        if profile.due_date_omitted:
            out.pop("dueDate", None)
        _document(out, profile)
    # before the spelling renames below: the domain's own type names a credit note
    if (resource == "supplier_documents" and profile.supplier_credit_note_sign == "negative"
            and out.get("type") == "creditNote"):
        for name in SUPPLIER_CREDIT_NOTE_AMOUNTS:
            if name in out:
                out[name] = _negated(out[name])
    if resource in ("documents", "transactions") and profile.document_currency:
        out["currency"] = _currency(profile.document_currency, out)
    if resource == "supplier_documents" and profile.supplier_document_currency != "EUR":
        out["currency"] = _currency(profile.supplier_document_currency, out)
    if resource == "transactions" and profile.refunds == "unlinked" and "refundedAmount" in out:
        out["refundedAmount"] = 0  # the refund exists only as its negative transaction
    if resource == "customers" and profile.deleted_customers != "listed":
        out.pop("deletedAt", None)
    for family, name, value in profile.extra_fields:
        if family == resource:
            out[name] = value
    if resource == "transaction_usages" and isinstance(out.get("transaction"), dict):
        out["transaction"] = dict(out["transaction"])
        if profile.date_only_zone != "UTC":
            embedded = out["transaction"]
            embedded["date"] = _zone_midnight(embedded.get("date"), profile.date_only_zone)
    if profile.date_only_zone != "UTC":
        for name in DATE_ONLY_FIELDS.get(resource, ()):
            if name in out:
                out[name] = _zone_midnight(out[name], profile.date_only_zone)
    for (family, name), renames in _spellings(profile).items():
        if family == resource and out.get(name) in renames:
            out[name] = renames[out[name]]
    return out


def served_records(resource: str, records: list[dict], profile: ContractProfile) -> list[dict]:
    """Every record of a list as `profile` serves it."""
    if profile.is_default:
        return records
    return [served_record(resource, record, profile) for record in records]


def served_event_item(item: dict, profile: ContractProfile) -> dict:
    """One element of GET /supplier-documents/{id}/events as `profile` serves it."""
    if profile.is_default:
        return item
    out = dict(item)
    if "supplier_document_events" in profile.invented_fields_omitted:
        for name in INVENTED_FIELDS["supplier_document_events"]:
            out.pop(name, None)
    renames = _spellings(profile).get(("supplier_documents", "status"), {})
    for name in ("status", "previousStatus"):
        if out.get(name) in renames:
            out[name] = renames[out[name]]
    return out


def served_payload(event: str, payload: dict, profile: ContractProfile) -> dict:
    """A webhook event's `data` as `profile` serves it (the same shapes as the GET answers)."""
    if profile.is_default:
        return payload
    if event == "supplier-document.status-change":
        renames = _spellings(profile).get(("supplier_documents", "status"), {})
        previous = payload.get("previousStatus")
        return {
            "supplierDocument": served_record("supplier_documents", payload["supplierDocument"], profile),
            "previousStatus": renames.get(previous, previous) if isinstance(previous, str) else previous,
        }
    resource = EVENT_RESOURCES.get(event.rsplit(".", 1)[0])
    if resource is None or "id" not in payload:  # {customerId} / {supplierId} of a deletion
        return payload
    return served_record(resource, payload, profile)


def served_params(resource: str, params: Mapping[str, str], profile: ContractProfile) -> dict[str, str]:
    """The list parameters as the domain reads them: window or paging parameters refused where the profile
    says (the sandbox's usual 400 for an unknown parameter), paging parameters dropped where it ignores them,
    served spellings turned back into the sandbox's."""
    refused = (WINDOW_PARAMETERS if resource in profile.window_params_refused_on else ()) + (
        PAGING_PARAMETERS if resource in profile.paging_params_refused_on else ())
    for name in params:
        if name in refused:
            raise bad_request(f"unknown query parameter {name}")
    out = dict(params)
    if resource in profile.paging_params_ignored_on:
        for name in PAGING_PARAMETERS:  # the default page from the first record, whatever was asked
            out.pop(name, None)
    for (family, name), renames in _spellings(profile).items():
        if family == resource and name in out:
            back = {served: own for own, served in renames.items()}
            out[name] = back.get(out[name], out[name])
    return out
