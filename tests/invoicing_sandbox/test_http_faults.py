"""Every injected fault as a client sees it, and the counters the reliability suite reads (`server.stats`)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

import httpx
import pytest

from invoicing_sandbox.clock import parse_iso
from tests.invoicing_sandbox.conftest import client_for, small_config


@pytest.fixture
def faulty(make_sandbox):
    """A sandbox without generated data (faults are about the edge, not the records)."""
    return make_sandbox(small_config(), generate=False)


def test_latency_is_fixed_plus_jitter_and_does_not_block_other_requests(faulty):
    faulty.config.latency_ms = 500
    faulty.config.latency_jitter_ms = 50
    with client_for(faulty, "read") as client:
        started = time.monotonic()
        assert client.get("/me").status_code == 200
        single = time.monotonic() - started
        assert 0.5 <= single < 1.5
        started = time.monotonic()
        with ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(lambda _: client.get("/me").status_code, range(4)))
        together = time.monotonic() - started
    assert statuses == [200] * 4
    assert together < 1.5  # four delayed answers overlap instead of queueing (4 x 0.5 s = 2 s)
    assert faulty.stats["latency"] == 5


def test_error_rate_answers_5xx_with_the_error_body(faulty):
    faulty.config.error_rate = 1.0
    with client_for(faulty, "read") as client:
        responses = [client.get("/me") for _ in range(30)]
    assert {r.status_code for r in responses} == {500, 502, 503}  # seeded dice: all three kinds appear
    for response in responses:
        assert response.json()["code"] == response.status_code
        assert isinstance(response.json()["error"], str)
    assert faulty.stats["error"] == 30
    assert sum(faulty.stats[f"error_{s}"] for s in (500, 502, 503)) == 30


def test_error_rate_is_a_share_and_can_be_turned_off(faulty):
    faulty.config.error_rate = 0.3
    with client_for(faulty, "read") as client:
        failed = sum(client.get("/me").status_code >= 500 for _ in range(100))
        faulty.config.error_rate = 0.0
        after = {client.get("/me").status_code for _ in range(10)}
    assert 15 <= failed <= 45 and failed == faulty.stats["error"]
    assert after == {200}


def test_dropped_connections_cut_the_answer_mid_way(faulty):
    faulty.config.drop_rate = 1.0
    with client_for(faulty, "read") as client:
        for _ in range(3):
            with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
                client.get("/me")
        faulty.config.drop_rate = 0.0
        assert client.get("/me").status_code == 200  # the client recovers on a new connection
    assert faulty.stats["dropped"] == 3


def test_token_is_revoked_after_n_requests(faulty):
    faulty.config.revoke_token_after_requests = 3
    with client_for(faulty, "read") as client:
        assert [client.get("/me").status_code for _ in range(3)] == [200] * 3
        revoked = client.get("/me")
        assert revoked.status_code == 401 and revoked.json()["error"] == "token revoked"
        assert client.get("/me").status_code == 401  # stays revoked
    grant = httpx.post(
        faulty.base_url + "/oauth2/token",
        auth=(faulty.client_id, faulty.client_secret),
        data={"grant_type": "client_credentials", "scope": "read"},
    )
    fresh = grant.json()["access_token"]
    assert httpx.get(faulty.base_url + "/me", headers={"Authorization": f"Bearer {fresh}"}).status_code == 200
    assert faulty.stats["token_revoked"] == 1


def test_clock_offset_moves_the_date_header_and_timestamps(faulty):
    faulty.config.clock_offset_s = 7200
    # the server's clock follows the setting at once, before any request
    assert abs((faulty.clock.now() - datetime.now(timezone.utc)).total_seconds() - 7200) < 5
    with client_for(faulty) as client:
        response = client.post("/items", json={"name": "Horodaté"})
    real_now = datetime.now(timezone.utc)
    served = parsedate_to_datetime(response.headers["date"])
    assert abs((served - real_now).total_seconds() - 7200) < 5
    assert abs((parse_iso(response.json()["data"]["lastUpdate"]) - real_now).total_seconds() - 7200) < 5
    faulty.config.clock_offset_s = 0
    with client_for(faulty) as client:
        back = parsedate_to_datetime(client.get("/me").headers["date"])
    assert abs((back - datetime.now(timezone.utc)).total_seconds()) < 5


def test_fault_dice_are_seeded(make_sandbox):
    outcomes = []
    for _ in range(2):
        server = make_sandbox(small_config(error_rate=0.5, fault_seed=42), generate=False)
        with client_for(server, "read") as client:
            outcomes.append([client.get("/me").status_code for _ in range(20)])
    assert outcomes[0] == outcomes[1] and len(set(outcomes[0])) > 1


def test_injected_5xx_writes_nothing_and_a_dropped_answer_still_wrote(faulty):
    with client_for(faulty) as client:
        faulty.config.error_rate = 1.0
        assert client.post("/items", json={"name": "Jamais écrit"}).status_code >= 500
        faulty.config.error_rate = 0.0
        assert [i for i in faulty.portal.snapshot("items") if i["name"] == "Jamais écrit"] == []
        faulty.config.drop_rate = 1.0
        with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
            client.post("/items", json={"name": "Écrit, réponse perdue"})
        faulty.config.drop_rate = 0.0
    assert len([i for i in faulty.portal.snapshot("items") if i["name"] == "Écrit, réponse perdue"]) == 1
