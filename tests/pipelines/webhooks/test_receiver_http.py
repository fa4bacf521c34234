"""The receiver over real HTTP: every refusal is a 4xx that spools nothing, a replay spools once, the
token never reaches a log line."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging

import httpx
import pytest

from pipelines.invoicing.webhooks.receiver import MAX_BODY_BYTES, SIGNATURE_HEADER
from tests.support.webhook_receiver import envelope, serving_receiver


@pytest.fixture
def served(tmp_path):
    with serving_receiver(tmp_path, portals=("default", "acme")) as receiver:
        yield receiver


@pytest.fixture
def http():
    with httpx.Client(timeout=10.0, trust_env=False) as client:
        yield client


def test_a_delivery_becomes_one_hint_of_its_portal(served, http):
    answer = http.post(served.url(), json=envelope("d1", "invoice.paid", "aaaaaaaaaaaaaaaaaaaaaaaa"))
    assert answer.status_code == 200 and answer.json() == {"status": "spooled"}
    answer = http.post(served.url("acme"), json=envelope("d2", "customer.deleted", data={"customerId": "c-9"}))
    assert answer.status_code == 200
    assert sorted((h.portal_id, h.resource, h.record_id, h.event) for h in served.pending()) == [
        ("acme", "customers", "c-9", "customer.deleted"),
        ("default", "documents", "aaaaaaaaaaaaaaaaaaaaaaaa", "invoice.paid"),
    ]


def test_a_replayed_delivery_id_answers_200_and_spools_one_hint(served, http):
    first = http.post(served.url(), json=envelope("same-id", "document.updated", "r1"))
    # the same delivery id again, even with another record: a retry of what was spooled
    again = http.post(served.url(), json=envelope("same-id", "document.deleted", "r2"))
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.json() == {"status": "replayed"}
    assert [(h.record_id, h.event) for h in served.pending()] == [("r1", "document.updated")]


def _chunks(size: int, chunk: int = 16 * 1024):
    sent = 0
    while sent < size:
        yield b" " * min(chunk, size - sent)
        sent += chunk


@pytest.mark.parametrize("case", ["wrong token", "empty token", "unknown portal", "declared too large",
                                  "streamed too large", "not json", "not an object", "no delivery id",
                                  "no event", "unknown event", "payload without id"])
def test_refusals_are_4xx_and_spool_nothing(served, http, case):
    good = json.dumps(envelope("d-" + case)).encode()
    url, body, headers = served.url(), good, {"content-type": "application/json"}
    expected = {"wrong token": 404, "empty token": 404, "unknown portal": 404, "declared too large": 413,
                "streamed too large": 413, "not json": 400, "not an object": 400, "no delivery id": 400,
                "no event": 400, "unknown event": 422, "payload without id": 422}[case]
    if case == "wrong token":
        url = served.url(token=served.token[:-1] + ("A" if served.token[-1] != "A" else "B"))
    elif case == "empty token":
        url = served.base + "/hooks/"
    elif case == "unknown portal":
        url = served.url("globex")
    elif case == "declared too large":
        body = b'{"id": "x", "pad": "' + b"x" * MAX_BODY_BYTES + b'"}'
    elif case == "not json":
        body = b"{not json"
    elif case == "not an object":
        body = b"[1, 2]"
    elif case == "no delivery id":
        body = json.dumps({**envelope("x"), "id": ""}).encode()
    elif case == "no event":
        body = json.dumps({"id": "x", "portalId": "p"}).encode()
    elif case == "unknown event":
        body = json.dumps(envelope("x", "invoice.exploded")).encode()
    elif case == "payload without id":
        body = json.dumps(envelope("x", "document.updated", data={"status": "PAID"})).encode()
    if case == "streamed too large":  # no Content-Length: chunked, caught while reading
        answer = http.post(url, content=_chunks(MAX_BODY_BYTES + 1), headers=headers)
    else:
        answer = http.post(url, content=body, headers=headers)
    assert answer.status_code == expected, answer.text
    assert served.token not in answer.text
    assert served.pending() == []
    if case == "wrong token":  # the same answer as a path that does not exist at all
        assert answer.json() == http.post(served.base + "/nowhere", content=good).json()


def test_a_body_of_exactly_the_cap_is_read(served, http):
    body = json.dumps(envelope("cap", "document.updated", "r-cap"))
    body = body[:-1] + ', "pad": "' + "x" * (MAX_BODY_BYTES - len(body) - 11) + '"}'
    assert len(body.encode()) == MAX_BODY_BYTES
    assert http.post(served.url(), content=body.encode()).status_code == 200
    assert [h.record_id for h in served.pending()] == ["r-cap"]


def test_with_an_hmac_secret_only_signed_deliveries_are_spooled(tmp_path, http):
    secret = "a-shared-secret"
    with serving_receiver(tmp_path, hmac_secret=secret) as served:
        body = json.dumps(envelope("signed", "product.updated", "item-1")).encode()
        signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        unsigned = http.post(served.url(), content=body)
        forged = http.post(served.url(), content=body, headers={SIGNATURE_HEADER: "sha256=" + "0" * 64})
        assert (unsigned.status_code, forged.status_code) == (401, 401)
        assert served.pending() == []
        signed = http.post(served.url(), content=body, headers={SIGNATURE_HEADER: f"sha256={signature}"})
        assert signed.status_code == 200
        assert [(h.resource, h.record_id) for h in served.pending()] == [("items", "item-1")]


def test_log_lines_mask_the_token(served, http, caplog):
    with caplog.at_level(logging.INFO, logger="pipelines.invoicing.webhooks.receiver"):
        http.post(served.url("acme"), json=envelope("logged", "supplier.updated", "s-1"))
        http.post(served.url("globex"), json=envelope("refused"))
        http.post(served.url(), content=b"{nope")
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 3 and all("/hooks/***" in line for line in lines), lines
    assert not any(served.token in line for line in lines)
