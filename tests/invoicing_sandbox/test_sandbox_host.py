"""`SandboxHost`: several portals on one address behind ONE per-IP limiter, each with its own credentials
and data; and `invoicing-warehouse sandbox --portals N`, which serves one."""

from __future__ import annotations

import httpx
from test_http_cli import start_cli

from invoicing_sandbox.host import SandboxHost


def token(portal) -> httpx.Response:
    return httpx.post(portal.base_url + "/oauth2/token", auth=(portal.client_id, portal.client_secret),
                      data={"grant_type": "client_credentials", "scope": "read"})


def test_portals_of_one_host_share_one_per_ip_limit():
    with SandboxHost(portals=2, scale=20, rate_limit_per_s=3) as host:
        one, two = host.portals["p1"], host.portals["p2"]
        assert one.base_url.rsplit("/portals/", 1)[0] == two.base_url.rsplit("/portals/", 1)[0]
        answers = [httpx.get(portal.base_url + "/me") for _ in range(6) for portal in (one, two)]
        # 12 quick requests fall in at most 3 one-second windows of 3 requests for the whole host
        refused = sum(a.status_code == 429 for a in answers)
        assert refused >= 3 and refused == host.rate_limited()
        assert one.stats.get("rate_limited", 0) > 0 and two.stats.get("rate_limited", 0) > 0
        assert host.requests() == 12


def test_each_portal_has_its_own_credentials_tokens_and_data():
    with SandboxHost(portals=2, scale=30, rate_limit_per_s=0) as host:
        one, two = host.portals["p1"], host.portals["p2"]
        assert one.client_id != two.client_id
        assert token(one).status_code == 200
        stolen = httpx.post(two.base_url + "/oauth2/token", auth=(one.client_id, one.client_secret),
                            data={"grant_type": "client_credentials", "scope": "read"})
        assert stolen.status_code == 401
        bearer = {"Authorization": "Bearer " + token(one).json()["access_token"]}
        assert httpx.get(two.base_url + "/documents", headers=bearer).status_code == 401
        served = httpx.get(one.base_url + "/documents", headers=bearer, params={"limit": 100}).json()["data"]
        truth = one.portal.snapshot("documents")
        assert {d["id"] for d in served} <= {d["id"] for d in truth} and len(served) == min(100, len(truth))
        assert {d["id"] for d in truth} != {d["id"] for d in two.portal.snapshot("documents")}


def test_cli_serves_several_portals_on_one_port():
    process, printed = start_cli("--portals", "2", until="p2 openapi")
    try:
        assert printed["p1 base_url"].endswith("/portals/p1/api/v2")
        assert printed["p1 base_url"].split("/portals/")[0] == printed["p2 base_url"].split("/portals/")[0]
        answer = httpx.post(printed["p2 base_url"] + "/oauth2/token",
                            auth=(printed["p2 client_id"], printed["p2 client_secret"]),
                            data={"grant_type": "client_credentials", "scope": "read"})
        assert answer.status_code == 200
    finally:
        process.terminate()
        process.wait(30)
    assert process.returncode == 0
