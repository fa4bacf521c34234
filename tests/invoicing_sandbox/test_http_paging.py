"""Page size over HTTP: the default, the clamp or reject policy for a too-large limit, skip, live changes."""

from __future__ import annotations

import pytest

from tests.invoicing_sandbox.conftest import client_for, small_config


@pytest.fixture(scope="module")
def paged(module_sandbox_factory):
    return module_sandbox_factory(config=small_config(max_page_size=10, default_page_size=4), real_date=True)


def ids(response) -> list[str]:
    assert response.status_code == 200, response.text
    return [record["id"] for record in response.json()["data"]]


def test_default_limit_and_clamp(paged):
    every = sorted(paged.portal.snapshot("documents"), key=lambda d: (d["lastUpdate"], d["id"]))
    assert len(every) > 10
    with client_for(paged, "read") as client:
        query = {"orderBy": "lastUpdate", "order": 1}
        assert ids(client.get("/documents", params=query)) == [d["id"] for d in every[:4]]
        clamped = ids(client.get("/documents", params=dict(query, limit=50)))
        assert clamped == [d["id"] for d in every[:10]]
        assert ids(client.get("/documents", params=dict(query, limit=10, skip=10))) == [
            d["id"] for d in every[10:20]
        ]


def test_reject_policy_refuses_a_limit_above_the_maximum_and_applies_at_once(paged):
    with client_for(paged, "read") as client:
        paged.config.page_size_policy = "reject"
        try:
            refused = client.get("/documents", params={"limit": 11})
            assert refused.status_code == 400
            assert refused.json()["code"] == 400 and "limit" in refused.json()["error"]
            assert len(ids(client.get("/documents", params={"limit": 10}))) == 10
        finally:
            paged.config.page_size_policy = "clamp"
        assert len(ids(client.get("/documents", params={"limit": 11}))) == 10


@pytest.mark.parametrize(
    "bad",
    [
        {"limit": "ten"},
        {"skip": "-1"},
        {"order": "up"},
        {"orderBy": "colour"},
        {"updatedSince": "yesterday"},
        {"unknownFilter": "1"},
    ],
)
def test_invalid_list_parameters_are_400(paged, bad):
    with client_for(paged, "read") as client:
        response = client.get("/documents", params=bad)
    assert response.status_code == 400 and response.json()["code"] == 400
