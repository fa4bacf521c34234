"""Message rules 1-4 with a frozen clock, customers (type inference, soft delete), items and the portal."""

from datetime import datetime, timezone

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.domain import Portal
from invoicing_sandbox.errors import ApiError


def make_portal():
    clock = Clock(fixed=datetime(2026, 3, 10, 9, 0, tzinfo=timezone.utc))
    portal = Portal(clock, SandboxConfig())
    portal.update_portal({"referenceAssignmentMethod": "CHRONOLOGICAL"})
    customer = portal.create("customers", {"name": "Dupont SARL", "email": "compta@dupont.fr"})
    return portal, clock, customer["id"]


def invoice(portal, customer_id, due):
    return portal.create(
        "documents",
        {
            "customerId": customer_id,
            "status": "VALIDATED",
            "dueDate": due,
            "lines": [{"name": "Conseil", "price": 100, "quantity": 1}],
        },
    )


@pytest.mark.parametrize(
    "due, model",
    [
        ("2026-03-18T00:00:00Z", "STANDARD"),  # 8 days away
        ("2026-03-17T00:00:00Z", "PRELAUNCH"),  # 7 days away
        ("2026-03-10T00:00:00Z", "PRELAUNCH"),  # due today
        ("2026-03-09T00:00:00Z", "RELAUNCH1"),  # overdue
    ],
)
def test_default_template_follows_the_due_date(due, model):
    portal, _, customer_id = make_portal()
    document = invoice(portal, customer_id, due)
    message = portal.send_message(document["id"], None)
    assert message["model"] == model
    assert (message["from"], message["to"]) == ("contact@atelier-martin.fr", "compta@dupont.fr")  # rules 1, 2
    assert document["reference"] in message["subject"]
    assert portal.get("documents", document["id"])["messages"] == [message]


def test_second_reminder_after_a_first_one_and_standard_once_paid():
    portal, _, customer_id = make_portal()
    document = invoice(portal, customer_id, "2026-02-01T00:00:00Z")
    assert portal.send_message(document["id"], None)["model"] == "RELAUNCH1"
    assert portal.send_message(document["id"], None)["model"] == "RELAUNCH2"
    assert portal.send_message(document["id"], None)["model"] == "RELAUNCH2"
    portal.pay_document(document["id"], None)
    assert portal.send_message(document["id"], None)["model"] == "STANDARD"
    assert [m["model"] for m in portal.get("documents", document["id"])["messages"]] == [
        "RELAUNCH1",
        "RELAUNCH2",
        "RELAUNCH2",
        "STANDARD",
    ]


def test_overrides_sender_recipient_template_subject():
    portal, _, customer_id = make_portal()
    document = invoice(portal, customer_id, "2026-05-01T00:00:00Z")
    message = portal.send_message(
        document["id"],
        {
            "from": "camille.martin@atelier-martin.fr",
            "to": "boss@dupont.fr",
            "model": "RELAUNCH2",
            "subject": "Votre facture",
            "message": "Bonjour",
            "cc": "a@x.fr; b@x.fr",
        },
    )
    assert (message["from"], message["to"], message["model"], message["subject"]) == (
        "camille.martin@atelier-martin.fr",
        "boss@dupont.fr",
        "RELAUNCH2",
        "Votre facture",
    )
    with pytest.raises(ApiError) as error:
        portal.send_message(document["id"], {"from": "someone@else.fr"})  # rule 1: user or portal only
    assert error.value.status == 400


def test_recipient_is_required_when_the_customer_has_no_email():
    portal, _, _ = make_portal()
    silent = portal.create("customers", {"name": "Sans Mail"})["id"]
    document = invoice(portal, silent, "2026-05-01T00:00:00Z")
    with pytest.raises(ApiError) as error:
        portal.send_message(document["id"], None)
    assert error.value.status == 400 and "e-mail" in error.value.message
    assert portal.send_message(document["id"], {"to": "x@y.fr"})["to"] == "x@y.fr"


def test_drafts_cannot_be_sent_and_pdf_is_a_pdf():
    portal, _, customer_id = make_portal()
    draft = portal.create("documents", {"customerId": customer_id, "lines": [{"name": "A", "price": 1}]})
    with pytest.raises(ApiError) as error:
        portal.send_message(draft["id"], None)
    assert "DRAFT" in error.value.message
    import base64

    content = base64.b64decode(portal.document_pdf(draft["id"])["pdfB64"])
    assert content.startswith(b"%PDF-") and content.rstrip().endswith(b"%%EOF")


@pytest.mark.parametrize(
    "body, expected",
    [
        ({"name": "A", "siret": "12345678900011"}, "business"),
        ({"name": "B"}, "consumer"),
        ({"name": "C", "siret": "12345678900011", "type": "consumer"}, "consumer"),
        ({"name": "D", "type": "business"}, "business"),
    ],
)
def test_customer_type_is_inferred_from_the_siret(body, expected):
    portal, _, _ = make_portal()
    assert portal.create("customers", body)["type"] == expected


def test_inferred_type_follows_a_later_siret():
    portal, _, _ = make_portal()
    customer = portal.create("customers", {"name": "B"})
    assert portal.update("customers", customer["id"], {"siret": "12345678900011"})["type"] == "business"
    assert customer["reference"] == "C-000002"


def test_customer_soft_delete_and_its_conflict():
    portal, clock, customer_id = make_portal()
    invoice(portal, customer_id, "2026-05-01T00:00:00Z")
    with pytest.raises(ApiError) as error:
        portal.delete("customers", customer_id)
    assert error.value.status == 409
    lone = portal.create("customers", {"name": "Seul"})
    events = []
    portal.listeners.append(lambda name, data: events.append((name, data)))
    assert portal.delete("customers", lone["id"]) == {}
    gone = portal.get("customers", lone["id"])
    assert (gone["deleted"], gone["deletedAt"]) == (True, "2026-03-10T09:00:00Z")
    assert lone["id"] in {c["id"] for c in portal.list("customers", {})}
    assert [name for name, _ in events] == ["customer.updated", "customer.deleted"]
    assert events[1][1] == {"customerId": lone["id"]}
    with pytest.raises(ApiError):
        portal.update("customers", lone["id"], {"name": "Revenu"})


def test_items_crud_and_events():
    portal, _, _ = make_portal()
    events = []
    portal.listeners.append(lambda name, data: events.append(name))
    item = portal.create("items", {"name": "Stylo", "price": 1.5, "vat": 20, "type": "product"})
    assert item["reference"] == "P-000001"
    assert portal.update("items", item["id"], {"price": 2})["price"] == 2
    assert portal.delete("items", item["id"]) == {}
    with pytest.raises(ApiError) as error:
        portal.get("items", item["id"])
    assert error.value.status == 404
    assert events == ["product.created", "product.updated"]
    with pytest.raises(ApiError) as error:
        portal.create("items", {"name": "X", "type": "gadget"})
    assert error.value.status == 400


def test_portal_patch_and_user():
    portal, _, _ = make_portal()
    assert portal.get_portal()["referenceAssignmentMethod"] == "CHRONOLOGICAL"
    assert (
        portal.update_portal({"referenceAssignmentMethod": "YEARLY"})["referenceAssignmentMethod"] == "YEARLY"
    )
    with pytest.raises(ApiError):
        portal.update_portal({"referenceAssignmentMethod": "RANDOM"})
    assert set(portal.me()) == {
        "id",
        "name",
        "email",
        "mobile",
        "phone",
        "address",
        "creationDate",
        "lastConnectionDate",
        "metadata",
    }
