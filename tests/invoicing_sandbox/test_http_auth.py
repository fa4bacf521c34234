"""OAuth2 token endpoint, bearer tokens, scopes and the headers of authenticated answers."""

from __future__ import annotations

import re
from datetime import timedelta
from email.utils import parsedate_to_datetime

import httpx

from invoicing_sandbox.auth import INSUFFICIENT_SCOPE
from invoicing_sandbox.clock import parse_iso
from tests.invoicing_sandbox.conftest import FROZEN_AT, client_for, small_config

GRANT = {"grant_type": "client_credentials"}


def token_request(server, scope: str | None = "read write", auth=None, **form) -> httpx.Response:
    data = dict(GRANT, **form)
    if scope is not None:
        data["scope"] = scope
    return httpx.post(
        server.base_url + "/oauth2/token",
        data=data,
        timeout=10,
        auth=auth if auth is not None else (server.client_id, server.client_secret),
    )


def test_token_grant_answers_the_oauth2_body(sandbox_server):
    for scope in ("read", "write", "read write"):
        response = token_request(sandbox_server, scope)
        assert response.status_code == 200
        body = response.json()
        assert set(body) == {"access_token", "token_type", "expires_in", "scope"}
        assert re.fullmatch(r"[0-9a-f]{40}", body["access_token"])
        assert body["token_type"] == "Bearer"
        assert body["expires_in"] == sandbox_server.config.token_lifetime_s == 604799
        assert body["scope"] == scope


def test_issued_token_works_on_me(sandbox_server):
    token = token_request(sandbox_server, "read").json()["access_token"]
    response = httpx.get(sandbox_server.base_url + "/me", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    assert response.json()["data"] == sandbox_server.portal.me()


def test_bad_client_credentials_are_invalid_client(sandbox_server):
    for auth in ((sandbox_server.client_id, "wrong"), ("someone-else", sandbox_server.client_secret)):
        response = token_request(sandbox_server, auth=auth)
        assert response.status_code == 401
        assert response.json()["error"] == "invalid_client"
        assert "error_description" in response.json()
    no_auth = httpx.post(sandbox_server.base_url + "/oauth2/token", data=dict(GRANT, scope="read"))
    assert no_auth.status_code == 401 and no_auth.json()["error"] == "invalid_client"


def test_bad_scope_and_grant_type_are_oauth2_errors(sandbox_server):
    for scope in ("admin", "", "read admin"):
        response = token_request(sandbox_server, scope)
        assert response.status_code == 400, scope
        assert response.json()["error"] == "invalid_scope"
    wrong_grant = token_request(sandbox_server, "read", grant_type="password")
    assert wrong_grant.status_code == 400 and wrong_grant.json()["error"] == "unsupported_grant_type"


def test_client_may_ask_only_for_its_allowed_scopes(make_sandbox):
    server = make_sandbox(small_config(allowed_scopes=("read",)), generate=False)
    assert token_request(server, "read").status_code == 200
    refused = token_request(server, "read write")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_scope"


def test_missing_malformed_and_unknown_tokens_are_401(sandbox_server):
    url = sandbox_server.base_url + "/documents"
    for headers in (
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic abc"},
        {"Authorization": "Bearer " + "0" * 40},
    ):
        response = httpx.get(url, headers=headers)
        assert response.status_code == 401, headers
        body = response.json()
        assert body["code"] == 401 and isinstance(body["error"], str)
        assert "accesstoken-expireat" not in response.headers


def test_token_expires_by_the_sandbox_clock(make_sandbox, frozen_clock):
    server = make_sandbox(small_config(token_lifetime_s=3600), clock=frozen_clock, generate=False)
    with client_for(server, "read") as client:
        first = client.get("/me")
        assert first.status_code == 200
        assert first.headers["accesstoken-expireat"] == "2026-03-16T10:30:00Z"
        frozen_clock.advance(timedelta(seconds=3599))
        assert client.get("/me").status_code == 200
        frozen_clock.advance(timedelta(seconds=1))
        expired = client.get("/me")
        assert expired.status_code == 401
        assert expired.json() == {"error": "token expired", "code": 401}


def test_read_token_cannot_write_and_write_token_can_read(sandbox_server):
    with client_for(sandbox_server, "read") as reader, client_for(sandbox_server, "write") as writer:
        assert reader.get("/items", params={"limit": 1}).status_code == 200
        for method, path in (
            ("POST", "/items"),
            ("POST", "/customers"),
            ("PATCH", "/portal"),
            ("POST", "/documents"),
            ("POST", "/suppliers"),
            ("DELETE", "/items/" + "0" * 24),
        ):
            denied = reader.request(method, path, json={})
            assert denied.status_code == 403, path
            assert denied.json() == {"error": INSUFFICIENT_SCOPE, "code": 403}
        for path in (
            "/items",
            "/customers",
            "/documents",
            "/transactions",
            "/transaction-usages",
            "/suppliers",
            "/supplier-documents",
            "/webhooks",
            "/me",
            "/portal",
        ):
            assert writer.get(path).status_code == 200, path
        created = writer.post("/items", json={"name": "Written with a write-only token", "price": 10})
        assert created.status_code == 201


def test_token_then_scope_then_request_are_checked_in_that_order(sandbox_server):
    bad_json = {"content": b"{not json", "headers": {"content-type": "application/json"}}
    with client_for(sandbox_server, None) as anonymous, client_for(sandbox_server, "read") as reader:
        assert anonymous.post("/items", **bad_json).status_code == 401
        assert reader.post("/items", **bad_json).status_code == 403
        assert reader.post(f"/documents/{'0' * 24}/validate").status_code == 403  # not 404
        assert reader.get(f"/documents/{'0' * 24}").status_code == 404


def test_listing_webhooks_needs_the_global_default_scope(sandbox_server):
    # spec: GET /webhooks states no scope, "the global default (read and write) applies"
    with client_for(sandbox_server, "read") as reader:
        assert reader.get("/webhooks").status_code == 403


def test_every_answer_carries_date_ratelimit_and_token_expiry(make_sandbox, frozen_clock):
    server = make_sandbox(small_config(rate_limit_per_s=50), clock=frozen_clock, generate=False)
    with client_for(server, "read") as client:
        for path in ("/me", "/documents/" + "0" * 24, "/no-such-route"):
            response = client.get(path)
            assert parsedate_to_datetime(response.headers["date"]) == FROZEN_AT
            assert response.headers["ratelimit-limit"] == "50"
            assert int(response.headers["ratelimit-remaining"]) < 50
            assert int(response.headers["ratelimit-ttl"]) >= 1
            expires = parse_iso(response.headers["accesstoken-expireat"])
            assert expires == FROZEN_AT + timedelta(seconds=server.config.token_lifetime_s)
    anonymous = httpx.get(server.base_url + "/me")
    assert parsedate_to_datetime(anonymous.headers["date"]) == FROZEN_AT
    assert "ratelimit-limit" in anonymous.headers
