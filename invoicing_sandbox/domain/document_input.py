"""The document input schema and the building of lines, totals and the legal notice from a body."""

from __future__ import annotations

from typing import Any

from invoicing_sandbox.errors import bad_request

from .money import HUNDRED, ZERO, shared
from .totals import document_totals, manual_totals
from .validation import Field

LINE_SCHEMA = {
    "lineType": Field("enum", values=("ITEM",)),
    "itemId": Field("str"),
    "name": Field("str"),
    "description": Field("str", max_length=10000),
    "reference": Field("str"),
    "price": Field("number"),
    "quantity": Field("number"),
    "unit": Field("str"),
    "vat": Field("number"),
    "discount": Field("number"),
    "buyingPrice": Field("number"),
}
DISCOUNT_SCHEMA = {
    "type": Field("enum", nullable=False, values=("PERCENT", "AMOUNT")),
    "amount": Field("number", nullable=False),
}
# the legal notice printed for each exemption (French tax code); CUSTOM_* take the caller's text
VAT_EXEMPTION_NOTICES = {
    "FRANCHISE_EN_BASE": "TVA non applicable, art. 293 B du CGI",
    "AUTOLIQUIDATION": "Autoliquidation, art. 283-2 du CGI",
    "INTRACOMMUNITY_DELIVERY": "Exonération de TVA, art. 262 ter I du CGI",
    "EXPORT": "Exonération de TVA, art. 262 I du CGI",
    "CUSTOM_EXEMPTION": None,
    "CUSTOM_APPLICATION": None,
}
PAYMENT_METHODS = ("CREDIT_CARD", "CHECK", "TRANSFER", "CASH", "OTHER")
EDITABLE = {
    "referenceInternal": Field("str"),
    "title": Field("str"),
    "messageTop": Field("str", max_length=10000),
    "messageBottom": Field("str", max_length=10000),
    "emitDate": Field("datetime"),
    "dueDate": Field("datetime"),
    "lines": Field("list", item=Field("object", schema=LINE_SCHEMA)),
    "discount": Field("object", schema=DISCOUNT_SCHEMA),
    "paymentMethod": Field("enum", values=PAYMENT_METHODS),
}
DOCUMENT_SCHEMA = dict(EDITABLE)
DOCUMENT_SCHEMA.update(
    {
        "customerId": Field("str"),
        "type": Field("enum", values=("INVOICE", "QUOTATION", "OTHER")),
        "subtype": Field("enum", values=("CREDIT_NOTE", "PROFORMA", "DEPOSIT")),
        "status": Field(
            "enum", values=("DRAFT", "VALIDATED", "CANCELED", "CONVERTED", "ACCEPTED", "REFUSED", "PAID")
        ),
        "description": Field("str", max_length=10000),
        "price": Field("number"),
        "amount": Field("number"),
        "vat": Field("number"),
        "amountVat": Field("number"),
        "amountNotice": Field("str"),
        "vatExemptionType": Field("enum", values=tuple(VAT_EXEMPTION_NOTICES)),
        "invoiceId": Field("str"),
        "from": Field("object", schema={"tradeName": Field("str")}),
        "metadata": Field("str"),
    }
)
ONE = shared(ZERO + 1)


def build_lines(raw_lines: list[dict], items: dict[str, dict]) -> list[dict]:
    """Lines completed from their items (name, price, vat... unless given); 400 on bad values."""
    lines = []
    for position, raw in enumerate(raw_lines):
        where = f"body.lines[{position}]"
        item = None
        if raw.get("itemId") is not None:
            item = items.get(raw["itemId"])
            if item is None:
                raise bad_request(f"invalid body: {where}.itemId: unknown item {raw['itemId']}")
        line: dict[str, Any] = {"lineType": "ITEM", "itemId": raw.get("itemId")}
        for name in ("name", "description", "reference", "price", "unit", "vat", "buyingPrice"):
            value = raw.get(name)
            line[name] = value if value is not None or item is None else item.get(name)
        line["quantity"] = raw.get("quantity") if raw.get("quantity") is not None else ONE
        line["discount"] = raw.get("discount") if raw.get("discount") is not None else shared(ZERO)
        if line["vat"] is None:
            line["vat"] = shared(ZERO + 20)
        if not line["name"]:
            raise bad_request(f"invalid body: {where}.name: is required without an itemId")
        if line["price"] is None:
            raise bad_request(f"invalid body: {where}.price: is required without an itemId")
        if line["price"] < ZERO or line["quantity"] <= ZERO or line["vat"] < ZERO:
            raise bad_request(f"invalid body: {where}: price and vat must be >= 0 and quantity > 0")
        if not ZERO <= line["discount"] <= HUNDRED:
            raise bad_request(f"invalid body: {where}.discount: must be a percentage between 0 and 100")
        lines.append(line)
    return lines


def check_discount(discount: dict | None, amount) -> None:
    """A PERCENT discount lies in 0-100, an AMOUNT one in 0-amount."""
    if not discount:
        return
    if discount.get("type") is None or discount.get("amount") is None:
        raise bad_request("invalid body: body.discount: needs type and amount")
    value = discount["amount"]
    ceiling = HUNDRED if discount["type"] == "PERCENT" else amount
    if not ZERO <= value <= ceiling:
        raise bad_request(f"invalid body: body.discount.amount: must lie between 0 and {ceiling}")


def totals_from(fields: dict, lines: list[dict] | None) -> dict:
    """Totals from the lines, or the manual amounts of a document without lines."""
    discount = fields.get("discount")
    if lines:
        totals = document_totals(lines, None)
        check_discount(discount, totals["amount"])
        return document_totals(lines, discount)
    amount = fields.get("amount") if fields.get("amount") is not None else fields.get("price")
    if amount is None and fields.get("amountVat") is None:
        raise bad_request("invalid body: a document needs lines, or amounts set by hand (amount)")
    if amount is None:
        amount = fields["amountVat"] - (fields.get("vat") or ZERO)
    check_discount(discount, amount)
    return manual_totals(amount, fields.get("vat"), fields.get("amountVat"), discount)


def legal_notice(fields: dict) -> tuple[str | None, str | None]:
    """(vatExemptionType, amountNotice): amountNotice only with CUSTOM_EXEMPTION / CUSTOM_APPLICATION."""
    exemption = fields.get("vatExemptionType")
    notice = fields.get("amountNotice")
    custom = exemption in ("CUSTOM_EXEMPTION", "CUSTOM_APPLICATION")
    if notice is not None and not custom:
        raise bad_request(
            "amountNotice may be set only with a vatExemptionType of CUSTOM_EXEMPTION or "
            f"CUSTOM_APPLICATION (got vatExemptionType {exemption})"
        )
    if custom and not notice:
        raise bad_request(f"amountNotice is required with vatExemptionType {exemption}")
    if exemption is None:
        return None, None
    return exemption, notice if custom else VAT_EXEMPTION_NOTICES[exemption]
