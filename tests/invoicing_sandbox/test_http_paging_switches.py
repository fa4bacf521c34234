"""The paging switches of `ContractProfile` over HTTP: a maximum page per list (clamped or refused), and
`limit`/`skip` refused or ignored on the lists whose paging names the spec does not show. Truth: the
portal's own records (`Portal.snapshot`) and the switch values."""

from __future__ import annotations

import dataclasses

import pytest

from invoicing_sandbox.contract import ContractProfile
from tests.invoicing_sandbox.conftest import client_for, small_config

CAPPED = dataclasses.replace(ContractProfile.default(), max_page_size_per_list=(("supplier_documents", 7),))


@pytest.mark.parametrize("policy", ["clamp", "reject"])
def test_a_list_has_its_own_maximum_page(make_sandbox, policy):
    server = make_sandbox(small_config(contract=CAPPED, page_size_policy=policy, scale=200))
    assert len(server.portal.snapshot("supplier_documents")) > 7 and len(server.portal.snapshot("documents")) > 50
    with client_for(server) as client:
        capped = client.get("/supplier-documents", params={"limit": 50})
        at_cap = client.get("/supplier-documents", params={"limit": 7, "skip": 7})
        other = client.get("/documents", params={"limit": 50})
    if policy == "clamp":
        assert len(capped.json()["data"]) == 7
    else:
        assert capped.status_code == 400 and "at most 7" in capped.json()["error"]
    assert len(at_cap.json()["data"]) == 7
    assert len(other.json()["data"]) == 50  # the other lists keep the config's maximum


def test_the_strict_profile_caps_supplier_documents_below_the_other_lists():
    strict = ContractProfile.strict()
    assert strict.list_max_page_size("supplier_documents") == 30
    assert strict.list_max_page_size("documents") == strict.max_page_size == 50


@pytest.mark.parametrize("name", ["max_page_size_per_list", "paging_params_refused_on", "paging_params_ignored_on"])
def test_paging_switches_are_validated(name):
    bad = {"max_page_size_per_list": (("invoices", 10),), "paging_params_refused_on": ("documents",),
           "paging_params_ignored_on": ("customers",)}[name]
    with pytest.raises(ValueError):
        dataclasses.replace(ContractProfile.default(), **{name: bad})
    with pytest.raises(ValueError):
        dataclasses.replace(ContractProfile.default(), max_page_size_per_list=(("documents", 0),))
    with pytest.raises(ValueError):
        dataclasses.replace(ContractProfile.default(), paging_params_refused_on=("suppliers",),
                            paging_params_ignored_on=("suppliers",))


def test_paging_refused_answers_400_and_the_default_page_without_it(make_sandbox):
    profile = dataclasses.replace(ContractProfile.default(), paging_params_refused_on=("supplier_documents",))
    server = make_sandbox(small_config(contract=profile, scale=200))
    with client_for(server) as client:
        limited = client.get("/supplier-documents", params={"limit": 50})
        skipped = client.get("/supplier-documents", params={"skip": 5})
        plain = client.get("/supplier-documents")
        documents = client.get("/documents", params={"limit": 50, "skip": 5})
    assert limited.status_code == skipped.status_code == 400
    assert limited.json()["error"] == "unknown query parameter limit"
    assert len(plain.json()["data"]) == 20 < len(server.portal.snapshot("supplier_documents"))
    assert documents.status_code == 200


def test_paging_ignored_answers_the_default_page_from_the_first_record(make_sandbox):
    profile = dataclasses.replace(ContractProfile.default(), paging_params_ignored_on=("supplier_documents",))
    server = make_sandbox(small_config(contract=profile, scale=200))
    with client_for(server) as client:
        first = client.get("/supplier-documents", params={"orderBy": "lastUpdate", "order": 1})
        later = client.get("/supplier-documents", params={"orderBy": "lastUpdate", "order": 1, "limit": 50,
                                                          "skip": 20})
    ids = [r["id"] for r in first.json()["data"]]
    assert len(ids) == 20
    assert [r["id"] for r in later.json()["data"]] == ids
    oldest = sorted(server.portal.snapshot("supplier_documents"), key=lambda r: (r["lastUpdate"], r["id"]))[:20]
    assert ids == [r["id"] for r in oldest]
