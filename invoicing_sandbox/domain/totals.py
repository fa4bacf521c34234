"""Document totals from lines and discounts, rounded half-up to the cent at each step (docs/resources.md)."""

from __future__ import annotations

from decimal import Decimal

from .money import HUNDRED, ZERO, round2


def line_amounts(line: dict) -> tuple[Decimal, Decimal]:
    """(line total, line VAT): round(price * quantity * (1 - discount/100)), round(total * vat/100)."""
    discount = line.get("discount") or ZERO
    total = round2(line["price"] * line["quantity"] * (1 - discount / HUNDRED))
    return total, round2(total * (line.get("vat") or ZERO) / HUNDRED)


def with_discount(amount: Decimal, amount_vat: Decimal, discount: dict | None) -> tuple[Decimal, Decimal]:
    """(amountNet, amountVatNet) after the global discount (PERCENT or AMOUNT excl. tax)."""
    if not discount:
        return amount, amount_vat
    value = discount["amount"]
    if discount["type"] == "PERCENT":
        factor = 1 - value / HUNDRED
        return round2(amount * factor), round2(amount_vat * factor)
    net = amount - value
    if amount == ZERO:
        return net, amount_vat
    return net, round2(amount_vat * net / amount)


def document_totals(lines: list[dict], discount: dict | None) -> dict:
    """amount, vat, amountVat, amountNet, amountVatNet of a document built from lines."""
    amount = ZERO
    vat = ZERO
    for line in lines:
        line_total, line_vat = line_amounts(line)
        amount += line_total
        vat += line_vat
    return manual_totals(amount, vat, None, discount)


def manual_totals(
    amount: Decimal, vat: Decimal | None, amount_vat: Decimal | None, discount: dict | None
) -> dict:
    """Totals of a document whose amounts were set by hand (no lines); missing ones are completed."""
    if amount_vat is None:
        amount_vat = amount + (vat or ZERO)
    if vat is None:
        vat = amount_vat - amount
    net, vat_net = with_discount(amount, amount_vat, discount)
    return {"amount": amount, "vat": vat, "amountVat": amount_vat, "amountNet": net, "amountVatNet": vat_net}
