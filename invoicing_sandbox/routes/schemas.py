"""JSON Schemas of the bodies the sandbox sends and accepts (OpenAPI 3.1 components).

Output shapes follow docs/resources.md: every key listed there is always present (null when unset), so
each is `required`; nullable fields allow `null`. Inputs are described loosely (the Portal validates them
and answers 400 with the reason).
"""

from __future__ import annotations

STR = {"type": "string"}
NSTR = {"type": ["string", "null"]}
NUM = {"type": "number"}
NNUM = {"type": ["number", "null"]}
INT = {"type": "integer"}
BOOL = {"type": "boolean"}
OID = {"type": "string", "pattern": "^[0-9a-f]{24}$"}
NOID = {"type": ["string", "null"], "pattern": "^[0-9a-f]{24}$"}
DT = {"type": "string", "format": "date-time"}
NDT = {"type": ["string", "null"], "format": "date-time"}
STRINGS = {"type": "array", "items": STR}


def record(properties: dict, required: tuple[str, ...] | None = None) -> dict:
    """An object schema; every property is required unless `required` says otherwise."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else list(required),
    }


def nullable(schema: dict) -> dict:
    """`schema` or null."""
    return {"anyOf": [schema, {"type": "null"}]}


ADDRESS = record({"street": NSTR, "postalCode": NSTR, "city": NSTR, "country": NSTR}, required=())
COMMON = {"id": OID, "portalId": OID, "metadata": NSTR, "lastUpdate": DT}


def input_record(properties: dict, required: tuple[str, ...] = ()) -> dict:
    """A request body: only these properties (api-facts: unknown properties are refused with 400)."""
    return {**record(properties, required), "additionalProperties": False}


ADDRESS_INPUT = input_record({"street": NSTR, "postalCode": NSTR, "city": NSTR, "country": NSTR})
PAYMENT_METHOD = {"enum": ["CREDIT_CARD", "CHECK", "TRANSFER", "CASH", "OTHER"]}
EVENTS = [
    "document.created", "document.updated", "document.deleted", "customer.created", "customer.updated",
    "customer.deleted", "product.created", "product.updated", "invoice.validated", "invoice.paid",
    "quotation.validated", "quotation.accepted", "quotation.refused", "supplier-document.created",
    "supplier-document.updated", "supplier-document.status-change", "supplier.created", "supplier.updated",
    "supplier.deleted",
]  # fmt: skip
LINE_INPUT = input_record({
    "lineType": {"enum": ["ITEM"]}, "itemId": OID, "name": NSTR, "description": NSTR, "reference": NSTR,
    "price": NNUM, "quantity": NNUM, "unit": NSTR, "vat": NNUM, "discount": NNUM, "buyingPrice": NNUM,
})  # fmt: skip
INPUTS: dict[str, dict] = {
    "PortalInput": input_record({
        "email": NSTR,
        "enterprise": input_record({**{k: NSTR for k in ("name", "tradeName", "siren", "siret", "vat")},
                                    "address": nullable(ADDRESS_INPUT)}),
        "referenceAssignmentMethod": {"enum": ["CHRONOLOGICAL", "YEARLY"]}, "metadata": NSTR,
    }),
    "ItemInput": input_record({
        "name": STR, "description": NSTR, "reference": NSTR, "type": {"enum": ["product", "service"]},
        "unit": NSTR, "price": NNUM, "vat": NNUM, "buyingPrice": NNUM, "metadata": NSTR,
    }),
    "CustomerInput": input_record({
        "name": STR, **{k: NSTR for k in ("reference", "email", "phone", "mobile", "fax", "siret", "vat")},
        "metadata": NSTR,
        "type": {"enum": ["business", "consumer"]}, "address": nullable(ADDRESS_INPUT),
        "delivery": nullable(ADDRESS_INPUT),
        "contacts": {"type": "array", "items": input_record({"name": NSTR, "email": NSTR, "phone": NSTR})},
    }),
    "SupplierInput": input_record({
        "name": STR, "legalIdentifier": STR, "email": NSTR, "phone": NSTR,
        "address": nullable(ADDRESS_INPUT), "tags": STRINGS, "metadata": NSTR,
    }),
    "DocumentInput": input_record({
        "customerId": OID, "type": {"enum": ["INVOICE", "QUOTATION"]},
        "subtype": {"enum": ["CREDIT_NOTE", "PROFORMA", "DEPOSIT"]},
        "status": {"enum": ["DRAFT", "VALIDATED"]},
        **{k: NSTR for k in ("referenceInternal", "title", "messageTop", "messageBottom", "description",
                             "amountNotice", "metadata")},
        "emitDate": DT, "dueDate": DT, "lines": {"type": "array", "items": LINE_INPUT},
        "discount": input_record({"type": {"enum": ["PERCENT", "AMOUNT"]}, "amount": NUM},
                                 ("type", "amount")),
        "paymentMethod": PAYMENT_METHOD, "price": NUM, "amount": NUM, "vat": NUM, "amountVat": NUM,
        "vatExemptionType": {"enum": ["FRANCHISE_EN_BASE", "AUTOLIQUIDATION", "INTRACOMMUNITY_DELIVERY",
                                      "EXPORT", "CUSTOM_EXEMPTION", "CUSTOM_APPLICATION"]},
        "invoiceId": OID, "from": input_record({"tradeName": NSTR}),
    }),
    "MessageInput": input_record({
        "from": STR, "to": STR, "model": {"enum": ["STANDARD", "PRELAUNCH", "RELAUNCH1", "RELAUNCH2"]},
        "subject": STR, "message": STR, "cc": {"type": "string", "description": "addresses separated by ;"},
    }),
    "PaymentInput": input_record({"amount": NUM, "date": DT, "method": PAYMENT_METHOD, "transactionId": OID}),
    "SupplierDocumentInput": input_record({
        "fileKey": STR, "supplierId": OID, "reference": NSTR, "type": {"enum": ["invoice", "creditNote"]},
        "issueDate": DT, "dueDate": DT, "amount": NUM, "vat": NUM, "amountVat": NUM, "tags": STRINGS,
        "metadata": NSTR,
    }, required=("fileKey", "supplierId")),
    "SupplierDocumentStatusInput": input_record(
        {"action": {"enum": ["approve", "refuse", "dispute", "declarePayment"]}, "paymentDate": DT},
        required=("action",),
    ),
    "WebhookInput": input_record(
        {"url": {"type": "string", "description": "http(s)://127.0.0.1 or localhost only (sandbox)"},
         "events": {"type": "array", "items": {"enum": EVENTS}, "minItems": 1}, "enabled": BOOL,
         "metadata": NSTR},
        required=("url", "events"),
    ),
}  # fmt: skip

COMPONENTS: dict[str, dict] = {
    "Error": record(
        {"error": STR, "code": INT, "details": {"type": "array", "items": {"type": ["string", "object"]}}},
        required=("error", "code"),
    ),
    "OAuthError": record({"error": STR, "error_description": STR}, required=("error",)),
    "Token": record(
        {
            "access_token": {"type": "string", "pattern": "^[0-9a-f]{40}$"},
            "token_type": {"type": "string", "enum": ["Bearer"]},
            "expires_in": INT,
            "scope": STR,
        }
    ),
    "EmptyObject": {"type": "object", "maxProperties": 0},
    "User": record(
        {
            "id": OID,
            "name": STR,
            "email": STR,
            "mobile": NSTR,
            "phone": NSTR,
            "address": nullable(ADDRESS),
            "creationDate": DT,
            "lastConnectionDate": DT,
            "metadata": NSTR,
        },
        required=("id", "name", "email", "creationDate", "lastConnectionDate"),
    ),
    "Portal": record(
        {
            "id": OID,
            "email": NSTR,
            "enterprise": {"type": "object", "required": ["name"]},
            "referenceAssignmentMethod": {"enum": [None, "CHRONOLOGICAL", "YEARLY"]},
            "metadata": NSTR,
            "lastUpdate": DT,
        }
    ),
    "Customer": record(
        {
            **COMMON,
            "name": STR,
            "reference": STR,
            "type": {"enum": ["business", "consumer"]},
            "email": NSTR,
            "phone": NSTR,
            "mobile": NSTR,
            "fax": NSTR,
            "siret": NSTR,
            "vat": NSTR,
            "address": nullable(ADDRESS),
            "delivery": nullable(ADDRESS),
            "contacts": {"type": ["array", "null"]},
            "dueAmount": NUM,
            "documentsCount": INT,
            "deleted": BOOL,
            "deletedAt": NDT,
        }
    ),
    "Item": record(
        {
            **COMMON,
            "name": STR,
            "description": NSTR,
            "reference": STR,
            "type": {"enum": ["product", "service"]},
            "unit": NSTR,
            "price": NNUM,
            "vat": NNUM,
            "buyingPrice": NNUM,
        }
    ),
    "Document": record(
        {
            **COMMON,
            "customerId": NOID,
            "type": {"enum": ["INVOICE", "QUOTATION", "OTHER"]},
            "subtype": {"enum": [None, "CREDIT_NOTE", "PROFORMA", "DEPOSIT"]},
            "status": {
                "enum": ["DRAFT", "VALIDATED", "CANCELED", "CONVERTED", "ACCEPTED", "REFUSED", "PAID"]
            },
            "reference": NSTR,
            "referenceInternal": NSTR,
            "title": NSTR,
            "messageTop": NSTR,
            "messageBottom": NSTR,
            "emitDate": NDT,
            "dueDate": NDT,
            "to": {"type": ["object", "null"]},
            "from": {"type": ["object", "null"]},
            "lines": {"type": "array", "items": {"type": "object"}},
            "discount": {"type": ["object", "null"]},
            "amount": NUM,
            "vat": NUM,
            "amountVat": NUM,
            "amountNet": NUM,
            "amountVatNet": NUM,
            "amountNotice": NSTR,
            "vatExemptionType": NSTR,
            "paymentMethod": NSTR,
            "totalPayments": NUM,
            "remaining": NUM,
            "invoiceId": NOID,
            "version": NSTR,
            "prevDoc": NOID,
            "nextDoc": NOID,
            "messages": {"type": "array", "items": {"type": "object"}},
        }
    ),
    "Pdf": record({"pdfB64": {"type": "string", "contentEncoding": "base64"}}),
    "Message": {"type": "object", "description": "the e-mail added to the document's history"},
    "Transaction": record(
        {
            **COMMON,
            "customerId": NOID,
            "customerName": NSTR,
            "documentId": NOID,
            "amount": NUM,
            "usedAmount": NUM,
            "refundedAmount": NUM,
            "date": DT,
            "method": {"enum": ["CREDIT_CARD", "CHECK", "TRANSFER", "CASH", "OTHER"]},
        }
    ),
    "TransactionUsage": record(
        {
            **COMMON,
            "type": {"enum": ["TRANSACTION", "CREDIT_NOTE"]},
            "customerId": NOID,
            "invoiceId": NOID,
            "transactionId": NOID,
            "transaction": {"type": ["object", "null"]},
            "creditNoteId": NOID,
            "amount": NUM,
            "date": NDT,
        }
    ),
    "Supplier": record(
        {
            **COMMON,
            "name": STR,
            "legalIdentifier": STR,
            "email": NSTR,
            "phone": NSTR,
            "address": nullable(ADDRESS),
            "tags": STRINGS,
        }
    ),
    "SupplierDocument": record(
        {
            **COMMON,
            "supplierId": OID,
            "fileKey": NSTR,
            "status": {"enum": ["toApprove", "approved", "refused", "disputed", "paid"]},
            "reference": NSTR,
            "type": {"enum": ["invoice", "creditNote"]},
            "issueDate": NDT,
            "dueDate": NDT,
            "amount": NNUM,
            "vat": NNUM,
            "amountVat": NNUM,
            "currency": STR,
            "origin": {"enum": ["manualImport", "email", "eInvoicing"]},
            "tags": STRINGS,
            "paymentDate": NDT,
        }
    ),
    "SupplierDocumentEvent": record(
        {
            "id": OID,
            "supplierDocumentId": OID,
            "date": DT,
            "action": STR,
            "previousStatus": NSTR,
            "status": STR,
            "origin": NSTR,
        }
    ),
    "Asset": record({"assetKey": STR}),
    "Webhook": record({**COMMON, "url": STR, "events": STRINGS, "enabled": BOOL, "failures": INT}),
}
# PATCH bodies carry only the fields to change; creation needs these (400 "is required" otherwise)
for _name in ("ItemInput", "CustomerInput", "SupplierInput"):
    INPUTS[_name.replace("Input", "Patch")] = INPUTS[_name]
CREATE_REQUIRED = {
    "ItemInput": ["name"], "CustomerInput": ["name"], "SupplierInput": ["name", "legalIdentifier"],
    "DocumentInput": ["customerId"],
}  # fmt: skip
for _name, _required in CREATE_REQUIRED.items():
    INPUTS[_name] = {**INPUTS[_name], "required": _required}
COMPONENTS.update(INPUTS)
