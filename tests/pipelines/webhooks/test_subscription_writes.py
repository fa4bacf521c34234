"""The subscriptions' writes on the one client, against an in-memory API: the token asks `read write`, a
POST is never re-sent after a 5xx (it may have happened), a 403 names the write scope and the webhook client,
a DELETE of what is already gone is done."""

from __future__ import annotations

import httpx
import pytest

from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.webhooks.subscriptions import SCOPE, Subscriptions

URL = "http://127.0.0.1:8787/hooks/a-token-of-twenty-chars"


class Api:
    """Answers the token request, then the queued (status, body) per method, recording every request."""

    def __init__(self, **answers: list[tuple[int, object]]) -> None:
        self.answers = answers
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path.endswith("/oauth2/token"):
            return httpx.Response(200, json={"access_token": "t" * 40, "expires_in": 604799})
        status, body = self.answers[request.method].pop(0)
        return httpx.Response(status, json=body)

    def client(self) -> InvoicingClient:
        settings = ClientSettings("http://api.test/api/v2", "webhook-id", "webhook-secret", scope=SCOPE,
                                  rate_limit_per_s=0)
        return InvoicingClient(settings, transport=httpx.MockTransport(self), sleep=lambda _s: None)


def test_the_token_asks_read_write_and_a_failed_post_is_not_sent_again():
    api = Api(GET=[(200, {"data": []})], POST=[(503, {"error": "unavailable", "code": 503})])
    with api.client() as client, pytest.raises(InvoicingApiError) as raised:
        Subscriptions(client, Portal("default")).register(URL, ["invoice.paid"])
    form = dict(httpx.QueryParams(api.requests[0].content.decode()))
    assert form == {"grant_type": "client_credentials", "scope": "read write"}
    assert [r.method for r in api.requests[1:]] == ["GET", "POST"]
    assert raised.value.status == 503 and "a-token" not in str(raised.value)


def test_a_403_names_the_write_scope_and_the_webhook_client_of_the_portal():
    api = Api(GET=[(403, {"error": "The request is not authorized because the authorized scope is insufficient",
                          "code": 403})])
    with api.client() as client, pytest.raises(InvoicingApiError) as raised:
        Subscriptions(client, Portal("acme", "http://api.test/api/v2")).current()
    text = str(raised.value)
    assert "'write' scope" in text and "SOURCES__INVOICING__PORTALS__ACME__WEBHOOK_CLIENT_ID" in text
    assert "webhook-secret" not in text


def test_removing_a_subscription_deleted_meanwhile_is_done():
    listed = [{"id": "w1", "url": URL, "events": ["invoice.paid"], "enabled": True}]
    api = Api(GET=[(200, {"data": listed}), (200, {"data": []})],
              DELETE=[(404, {"error": "not found", "code": 404})])
    with api.client() as client:
        removed = Subscriptions(client, Portal("default")).remove(url=URL)
    assert [s.id for s in removed] == ["w1"]
    assert [r.method for r in api.requests[1:]] == ["GET", "GET", "DELETE"]
