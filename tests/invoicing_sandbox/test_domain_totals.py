"""Document totals against hand-computed fixtures (docs/resources.md: rounding at each step)."""

from datetime import datetime, timezone

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.domain import Portal
from invoicing_sandbox.errors import ApiError


def make_portal():
    portal = Portal(Clock(fixed=datetime(2026, 3, 10, 9, 0, tzinfo=timezone.utc)), SandboxConfig())
    customer = portal.create("customers", {"name": "Dupont SARL", "siret": "12345678900011"})
    return portal, customer["id"]


# line 1: 100 x 3 less 10 % = 270.00, VAT 20 % = 54.00
# line 2: 19.99 x 2 = 39.98, VAT 5.5 % = 2.1989 -> 2.20
# line 3: 33.335 x 1 = 33.335 -> 33.34 (half up), VAT 10 % = 3.334 -> 3.33
# amount 343.32, vat 59.53, amountVat 402.85
LINES = [
    {"name": "Chaise", "price": 100, "quantity": 3, "discount": 10, "vat": 20},
    {"name": "Café", "price": 19.99, "quantity": 2, "vat": 5.5},
    {"name": "Repas", "price": 33.335, "quantity": 1, "vat": 10},
]


@pytest.mark.parametrize(
    "discount, net, vat_net",
    [
        (None, 343.32, 402.85),
        # PERCENT 10: 343.32 * 0.9 = 308.988 -> 308.99; 402.85 * 0.9 = 362.565 -> 362.57 (half up)
        ({"type": "PERCENT", "amount": 10}, 308.99, 362.57),
        # AMOUNT 43.32: 343.32 - 43.32 = 300; 402.85 * 300 / 343.32 = 352.0185... -> 352.02
        ({"type": "AMOUNT", "amount": 43.32}, 300, 352.02),
    ],
)
def test_totals_with_line_discounts_global_discounts_and_vat_rates(discount, net, vat_net):
    portal, customer_id = make_portal()
    body = {"customerId": customer_id, "lines": LINES}
    if discount:
        body["discount"] = discount
    document = portal.create("documents", body)
    assert (document["amount"], document["vat"], document["amountVat"]) == (343.32, 59.53, 402.85)
    assert (document["amountNet"], document["amountVatNet"]) == (net, vat_net)
    assert document["remaining"] == vat_net and document["totalPayments"] == 0


def test_whole_amounts_are_json_integers_and_others_floats():
    portal, customer_id = make_portal()
    document = portal.create(
        "documents",
        {"customerId": customer_id, "lines": [{"name": "Forfait", "price": 250, "quantity": 2, "vat": 20}]},
    )
    assert document["amount"] == 500 and isinstance(document["amount"], int)
    assert isinstance(document["amountVat"], int) and document["amountVat"] == 600
    assert document["lines"][0]["vat"] == 20 and isinstance(document["lines"][0]["price"], int)
    half = portal.create(
        "documents",
        {"customerId": customer_id, "lines": [{"name": "Heure", "price": 45.5, "quantity": 1, "vat": 5.5}]},
    )
    assert half["amount"] == 45.5 and isinstance(half["amount"], float)
    assert half["vat"] == 2.5  # 45.5 * 5.5 % = 2.5025 -> 2.50
    assert half["lines"][0]["vat"] == 5.5


def test_lines_take_item_defaults_and_manual_amounts_are_kept():
    portal, customer_id = make_portal()
    item = portal.create(
        "items", {"name": "Audit", "price": 800, "vat": 20, "type": "service", "unit": "jour"}
    )
    document = portal.create(
        "documents", {"customerId": customer_id, "lines": [{"itemId": item["id"], "quantity": 1.5}]}
    )
    line = document["lines"][0]
    assert (line["name"], line["price"], line["unit"], line["reference"]) == (
        "Audit",
        800,
        "jour",
        item["reference"],
    )
    assert (document["amount"], document["vat"], document["amountVat"]) == (1200, 240, 1440)
    manual = portal.create("documents", {"customerId": customer_id, "amount": 1000, "vat": 200})
    assert (manual["amount"], manual["vat"], manual["amountVat"], manual["amountVatNet"]) == (
        1000,
        200,
        1200,
        1200,
    )


@pytest.mark.parametrize(
    "discount",
    [{"type": "PERCENT", "amount": 120}, {"type": "AMOUNT", "amount": 1000}, {"type": "OTHER", "amount": 5}],
)
def test_impossible_discounts_are_400(discount):
    portal, customer_id = make_portal()
    with pytest.raises(ApiError) as error:
        portal.create("documents", {"customerId": customer_id, "lines": LINES, "discount": discount})
    assert error.value.status == 400


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({"lines": [{"itemId": "0" * 24, "quantity": 1}]}, "unknown item"),
        ({"lines": [{"price": 10}]}, "name"),
        ({"lines": [{"name": "x", "price": "10"}]}, "must be a number"),
        ({"colour": "blue"}, "unknown property"),
        ({"lines": [{"name": "x", "price": 10, "quantity": 0}]}, "quantity"),
    ],
)
def test_bad_document_bodies_are_400(body, fragment):
    portal, customer_id = make_portal()
    with pytest.raises(ApiError) as error:
        portal.create("documents", dict(body, customerId=customer_id))
    assert error.value.status == 400 and fragment in error.value.message
