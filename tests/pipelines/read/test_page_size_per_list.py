"""Each list has its own maximum page (the contract shows none): a list capped lower than the others, or
below the sandbox's default page of 20, or one whose maximum shrinks between runs, is read whole by a full
sync and by an incremental one. Truth: the sandbox's own records (`Portal.snapshot`, compared field by field
by harness/warehouse_truth.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.warehouse_truth import mismatches
from invoicing_sandbox.contract import ContractProfile
from tests.pipelines.sandbox_syncs import quiet, sync


def tag_supplier_documents(portal, count: int) -> None:
    """Moves `count` supplier documents into the next window (a tag change moves `lastUpdate`)."""
    documents = portal.snapshot("supplier_documents")
    assert len(documents) >= count, "the seed must have enough supplier documents"
    for document in documents[:count]:
        portal.tag_supplier_document(document["id"], ["checked"])


@pytest.mark.parametrize(
    ("caps", "policy", "changed"),
    [
        ((("supplier_documents", 30),), "clamp", 40),
        ((("supplier_documents", 30),), "reject", 40),
        ((("supplier_documents", 7), ("suppliers", 3)), "clamp", 20),
        ((("supplier_documents", 7), ("suppliers", 3)), "reject", 20),
    ],
    ids=["30-clamp", "30-reject", "below-20-clamp", "below-20-reject"],
)
def test_a_list_capped_lower_than_documents_is_read_whole(start_sandbox, warehouse, caps, policy, changed):
    profile = replace(ContractProfile.default(), max_page_size_per_list=caps)
    sandbox = start_sandbox(seed=3, scale=300, contract=profile, page_size_policy=policy)
    portal = sandbox.portal
    assert len(portal.snapshot("supplier_documents")) > 2 * dict(caps)["supplier_documents"]
    sync(sandbox, warehouse)
    assert mismatches(warehouse, portal) == []

    tag_supplier_documents(portal, changed)  # more changes than one page of the capped list
    supplier = portal.snapshot("suppliers")[0]
    portal.update("suppliers", supplier["id"], {"name": "Renamed supplier SAS"})
    quiet(sandbox)
    second = sync(sandbox, warehouse)
    assert mismatches(warehouse, portal) == []
    assert second.rows["supplier_documents"] == changed


def test_a_maximum_that_shrinks_below_20_between_runs_truncates_nothing(start_sandbox, warehouse):
    sandbox = start_sandbox(seed=3, scale=300)
    portal = sandbox.portal
    first = sync(sandbox, warehouse)
    assert first.requests["documents"] > 1  # pages of 100 were served and remembered
    # the same server now serves pages of at most 10 on customers, 6 on supplier documents
    sandbox.config.contract = replace(ContractProfile.default(), max_page_size_per_list=(
        ("customers", 10), ("supplier_documents", 6)))
    for number in range(25):  # more new customers than two pages of 10 in the next window
        portal.create("customers", {"name": f"New customer {number}", "email": f"n{number}@example.com"})
    tag_supplier_documents(portal, 15)
    quiet(sandbox)
    second = sync(sandbox, warehouse)
    assert mismatches(warehouse, portal) == []
    assert second.rows["customers"] == 25
    assert second.rows["supplier_documents"] == 15
