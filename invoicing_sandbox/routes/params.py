"""The query parameters of every list operation, as the spec names them, for the OpenAPI document.

The routes pass the raw query string to `Portal.list`, which validates and applies it; these declarations
only describe it (so that a schema-driven client or fuzzer knows the names, types and allowed values).
"""

from __future__ import annotations

DATE_TIME = {"type": "string", "format": "date-time"}
OBJECT_ID = {"type": "string", "pattern": "^[0-9a-f]{24}$"}
NUMBER = {"type": "number"}
STRING = {"type": "string"}


def _param(name: str, schema: dict, description: str = "") -> dict:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


def shared(order_by: tuple[str, ...], default: str) -> list[dict]:
    """orderBy, order, limit, skip, updatedSince and updatedUntil (inclusive bounds on lastUpdate)."""
    return [
        _param("orderBy", {"type": "string", "enum": list(order_by), "default": default}, "field to sort by"),
        _param("order", {"type": "integer", "enum": [1, -1], "default": 1}, "1 ascending, -1 descending"),
        _param("limit", {"type": "integer", "minimum": 1}, "page size; default 20, maximum 100 (clamped)"),
        _param("skip", {"type": "integer", "minimum": 0, "default": 0}, "records to skip"),
        _param("updatedSince", DATE_TIME, "lastUpdate >= this instant"),
        _param("updatedUntil", DATE_TIME, "lastUpdate <= this instant"),
    ]


def _named(*pairs: tuple[str, dict]) -> list[dict]:
    return [_param(name, schema) for name, schema in pairs]


SEARCH = ("search", {"type": "string", "description": "words separated by spaces"})
AMOUNT_RANGE = (("minimumAmount", NUMBER), ("maximumAmount", NUMBER))
DATE_RANGE = (("startDate", DATE_TIME), ("endDate", DATE_TIME))

ITEMS = shared(("lastUpdate", "name", "type", "reference", "price"), "name") + _named(
    ("type", {"type": "string", "enum": ["product", "service"]}),
    SEARCH,
    ("name", STRING),
    ("reference", STRING),
    ("minimumPrice", NUMBER),
    ("maximumPrice", NUMBER),
)
CUSTOMERS = shared(
    ("lastUpdate", "name", "reference", "phone", "dueAmount", "documentsCount"), "name"
) + _named(
    SEARCH,
    ("name", STRING),
    ("reference", STRING),
    ("email", STRING),
    ("minimumDueAmount", NUMBER),
    ("maximumDueAmount", NUMBER),
    ("documentStatus", {"type": "string", "enum": ["ACTIVE", "LATE"]}),
)
DOCUMENTS = shared(
    ("lastUpdate", "emitDate", "to.name", "reference", "amount", "refInt"), "emitDate"
) + _named(
    SEARCH,
    (
        "status",
        {
            "type": "string",
            "enum": ["DRAFT", "VALIDATED", "CANCELED", "CONVERTED", "ACCEPTED", "REFUSED", "PAID"],
        },
    ),
    ("type", {"type": "string", "enum": ["INVOICE", "QUOTATION", "OTHER"]}),
    ("subtype", {"type": "string", "enum": ["CREDIT_NOTE", "PROFORMA", "DEPOSIT"]}),
    ("reference", STRING),
    ("customerId", OBJECT_ID),
    ("startEmitDate", DATE_TIME),
    ("endEmitDate", DATE_TIME),
    *AMOUNT_RANGE,
    ("minimumAmountWithVat", NUMBER),
    ("maximumAmountWithVat", NUMBER),
)
TRANSACTIONS = shared(("lastUpdate", "date", "customerName", "amount", "method"), "date") + _named(
    *DATE_RANGE,
    ("customerId", OBJECT_ID),
    *AMOUNT_RANGE,
)
CUSTOMER_TRANSACTIONS = shared(("lastUpdate", "date", "amount", "method"), "date") + _named(
    *DATE_RANGE,
    *AMOUNT_RANGE,
)
# The spec does not show the usage lists' orderBy enumeration: the sandbox offers these (README).
USAGE_ORDER = ("lastUpdate", "date", "amount")
USAGES = shared(USAGE_ORDER, "date") + _named(
    *DATE_RANGE,
    ("customerId", OBJECT_ID),
    ("documentId", OBJECT_ID),
    *AMOUNT_RANGE,
)
DOCUMENT_USAGES = shared(USAGE_ORDER, "date") + _named(*DATE_RANGE, *AMOUNT_RANGE)
# Supplier lists: the spec names the filters but not the parameters; these names are the sandbox's.
SUPPLIERS = shared(("lastUpdate", "name", "legalIdentifier"), "name") + _named(
    SEARCH,
    ("name", STRING),
    ("legalIdentifier", STRING),
    ("tags", {"type": "string", "description": "comma-separated; the record must carry every tag"}),
)
SUPPLIER_DOCUMENTS = shared(
    ("lastUpdate", "issueDate", "dueDate", "reference", "amount", "amountVat", "status"), "issueDate"
) + _named(
    SEARCH,
    ("reference", STRING),
    ("supplierId", OBJECT_ID),
    ("type", {"type": "string", "enum": ["invoice", "creditNote"]}),
    ("status", {"type": "string", "enum": ["toApprove", "approved", "refused", "disputed", "paid"]}),
    ("startIssueDate", DATE_TIME),
    ("endIssueDate", DATE_TIME),
    ("startDueDate", DATE_TIME),
    ("endDueDate", DATE_TIME),
    *AMOUNT_RANGE,
    ("tags", STRING),
)
WEBHOOKS = shared(("lastUpdate", "url"), "lastUpdate")


def listing(parameters: list[dict]) -> dict:
    """The `openapi_extra` of a list route."""
    return {"parameters": parameters}
