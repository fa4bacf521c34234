"""The sandbox's switches of issue 40 (a list fails alone), over HTTP, on both contract profiles: one list
failing alone (`failing_lists`), GET /webhooks to a read token (`webhooks_listed_to_read_scope`), a
subscriptions list that changes between requests (`subscriptions_churn_every`), with paging ignored.
Truth: the spec's statuses and the portal's own records (`Portal.snapshot`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from invoicing_sandbox.contract import ContractProfile
from tests.invoicing_sandbox.conftest import client_for, small_config


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_failing_list_answers_its_status_and_only_it(make_sandbox, contract):
    server = make_sandbox(small_config(contract=contract, failing_lists=(("/supplier-documents", 503),)))
    document = server.portal.snapshot("supplier_documents")[0]["id"]
    with client_for(server, "read") as client:
        failed = client.get("/supplier-documents", params={"limit": 5})
        assert failed.status_code == 503 and failed.json()["code"] == 503
        assert client.get(f"/supplier-documents/{document}").status_code == 200  # a record by id still answers
        assert client.get("/documents", params={"limit": 5}).status_code == 200  # the other lists too
    assert server.stats["error_503"] == 1
    server.config.failing_lists = ()  # mended while it runs
    with client_for(server, "read") as client:
        assert client.get("/supplier-documents", params={"limit": 5}).status_code == 200


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_webhooks_listed_to_a_read_token_only_under_the_switch(make_sandbox, contract):
    profile = ContractProfile.named(contract)
    server = make_sandbox(small_config(contract=profile))
    with client_for(server, "read") as reader:
        assert reader.get("/webhooks").status_code == 403  # the sandbox's reading of "read and write"
        server.config.contract = replace(profile, webhooks_listed_to_read_scope=True)
        assert reader.get("/webhooks").status_code == 200
        assert reader.post("/webhooks", json={"url": "http://127.0.0.1:9/x", "events": ["customer.created"]}
                           ).status_code == 403  # writing still needs `write`


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_churning_subscriptions_list_changes_after_every_nth_answer(make_sandbox, contract):
    profile = replace(ContractProfile.named(contract), subscriptions_churn_every=2,
                      paging_params_ignored_on=("webhooks",))
    server = make_sandbox(small_config(contract=profile))
    for number in range(3):
        server.portal.create("webhooks", {"url": f"http://127.0.0.1:9/{number}", "events": ["customer.created"]})
    ids = [{record["id"] for record in server.portal.snapshot("webhooks")}]
    with client_for(server, "read write") as client:
        answers = []
        for _ in range(4):
            answers.append({record["id"] for record in client.get("/webhooks", params={"skip": 2}).json()["data"]})
            ids.append({record["id"] for record in server.portal.snapshot("webhooks")})
    # after answers 2 and 4: the oldest subscription gone, a new one added; never after 1 and 3
    assert ids[1] == ids[0] and ids[3] == ids[2] and ids[2] != ids[1] and ids[4] != ids[3]
    assert all(len(known) == 3 for known in ids)
    # paging ignored: every answer is the whole (small) list as it was, `skip` or not
    assert answers == [ids[0], ids[1], ids[2], ids[3]]
    added = (ids[2] - ids[1]).pop()
    assert server.portal.get("webhooks", added)["enabled"] is False  # it receives no delivery


def test_the_switches_are_validated():
    with pytest.raises(ValueError, match="subscriptions_churn_every"):
        ContractProfile(subscriptions_churn_every=-1)
    with pytest.raises(TypeError, match="webhooks_listed_to_read_scope"):
        ContractProfile(webhooks_listed_to_read_scope="yes")  # type: ignore[arg-type]
