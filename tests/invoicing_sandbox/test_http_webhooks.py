"""Webhook deliveries: envelope, which operation fires which event, retries on the scaled schedule."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness.common import wait_until
from invoicing_sandbox.webhooks import MAX_FAILURES, RETRY_DELAYS_S
from tests.invoicing_sandbox.conftest import (
    client_for,
    created,
    new_customer,
    new_document,
    new_item,
    small_config,
)


class Receiver:
    """A webhook receiver on 127.0.0.1: records every POST; answers the queued statuses, then 200."""

    def __init__(self, statuses: list[int] | None = None, delay_s: float = 0.0) -> None:
        self.statuses = list(statuses or [])
        self.delay_s = delay_s
        self.received: list[tuple[float, dict]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                time.sleep(receiver.delay_s)
                with receiver.lock:
                    receiver.received.append((time.monotonic(), body))
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def wait_for(self, count: int, timeout_s: float = 5.0) -> list[dict]:
        """The first `count` bodies received (bounded wait)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return [body for _, body in self.received]
            time.sleep(0.01)
        raise AssertionError(f"expected {count} deliveries, got {len(self.received)}")

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def receiver_factory() -> Iterator:
    receivers: list[Receiver] = []

    def make(**kwargs) -> Receiver:
        receivers.append(Receiver(**kwargs))
        return receivers[-1]

    yield make
    for receiver in receivers:
        receiver.stop()


def subscribe(client, url: str, events: list[str]) -> dict:
    return created(client.post("/webhooks", json={"url": url, "events": events}), 200)


def test_deliveries_carry_the_envelope_and_the_resource(make_sandbox, receiver_factory):
    server = make_sandbox(small_config(), generate=False)
    receiver = receiver_factory()
    with client_for(server) as client:
        client.patch("/portal", json={"referenceAssignmentMethod": "CHRONOLOGICAL"})
        subscribe(client, receiver.url, ["customer.created", "product.created", "invoice.validated"])
        customer = new_customer(client, name="Client notifié")
        item = new_item(client, name="Produit notifié", type="product")
        draft = new_document(client, customer, item)
        validated = created(client.post(f"/documents/{draft['id']}/validate"), 200)
        bodies = receiver.wait_for(3)
    portal_id = server.portal.get_portal()["id"]
    by_event = {body["event"]["eventId"]: body for body in bodies}
    assert set(by_event) == {"customer.created", "product.created", "invoice.validated"}
    for body in bodies:
        assert set(body) == {"id", "portalId", "event"} and set(body["event"]) == {"eventId", "data"}
        assert body["portalId"] == portal_id
    assert len({body["id"] for body in bodies}) == 3
    assert by_event["customer.created"]["event"]["data"]["id"] == customer["id"]
    assert by_event["product.created"]["event"]["data"] == item
    assert by_event["invoice.validated"]["event"]["data"]["id"] == validated["id"]
    assert by_event["invoice.validated"]["event"]["data"]["status"] == "VALIDATED"
    # the sender records a delivery once the receiver's answer is back, which may come after the receiver has
    # handed the body over (a busy machine showed it): waited for, bounded
    assert wait_until(lambda: all(d.delivered for d in server.webhooks.deliveries), timeout_s=10)
    assert all(len(d.attempts) == 1 for d in server.webhooks.deliveries)


def test_failed_deliveries_are_retried_on_the_scaled_schedule(make_sandbox, receiver_factory):
    factor = 0.01  # 1 s, 30 s, 5 min... become 10 ms, 300 ms, 3 s
    server = make_sandbox(small_config(webhook_time_factor=factor), generate=False)
    receiver = receiver_factory(statuses=[500, 503])
    with client_for(server) as client:
        hook = subscribe(client, receiver.url, ["customer.created"])
        started = time.monotonic()
        new_customer(client, name="Client réessayé")
        receiver.wait_for(3)
        elapsed = time.monotonic() - started
        assert elapsed < 2.0
        times = [at for at, _ in receiver.received]
        assert times[1] - times[0] >= RETRY_DELAYS_S[0] * factor
        assert times[2] - times[1] >= RETRY_DELAYS_S[1] * factor * 0.9
        assert len({body["id"] for _, body in receiver.received}) == 1  # the same delivery, retried
        (delivery,) = server.webhooks.deliveries
        # the receiver counts a request before it answers; the sender records the attempt after the answer
        assert server.webhooks.wait_idle() and wait_until(lambda: delivery.delivered, timeout_s=10, every_s=0.01)
        assert [a["status"] for a in delivery.attempts] == [500, 503, 200]
        assert client.get(f"/webhooks/{hook['id']}").json()["data"]["failures"] == 2
    assert server.stats["webhook_attempts"] == 3 and server.stats["webhook_failures"] == 2


def test_a_slow_receiver_never_delays_the_api(make_sandbox, receiver_factory):
    server = make_sandbox(small_config(), generate=False)
    receiver = receiver_factory(delay_s=1.0)
    with client_for(server) as client:
        subscribe(client, receiver.url, ["customer.created"])
        started = time.monotonic()
        new_customer(client, name="Client pressé")
        assert time.monotonic() - started < 0.5
        receiver.wait_for(1)


def test_subscription_is_disabled_after_100_failures(make_sandbox, receiver_factory):
    server = make_sandbox(small_config(webhook_time_factor=0.000005), generate=False)  # 10 attempts in ~0.7 s
    receiver = receiver_factory(statuses=[500] * 1000)
    with client_for(server) as client:
        hook = subscribe(client, receiver.url, ["customer.created"])
        for number in range(MAX_FAILURES // len(RETRY_DELAYS_S) + 1):
            new_customer(client, name=f"Client {number}")
        receiver.wait_for(MAX_FAILURES, timeout_s=10)
        state: dict = {}

        def disabled() -> bool:  # the sender records the last failure just after the receiver answered it
            state.update(client.get(f"/webhooks/{hook['id']}").json()["data"])
            return state["enabled"] is False

        assert wait_until(disabled, timeout_s=10, every_s=0.01), state
        assert state["enabled"] is False and state["failures"] == MAX_FAILURES
        before = len(receiver.received)
        new_customer(client, name="Client après désactivation")
        server.webhooks.wait_idle()
        time.sleep(0.2)
        assert len(receiver.received) == before


def test_only_local_urls_can_subscribe(sandbox_server):
    with client_for(sandbox_server) as client:
        for url in ("http://example.com/hook", "https://10.0.0.1/hook", "ftp://127.0.0.1/hook"):
            response = client.post("/webhooks", json={"url": url, "events": ["customer.created"]})
            assert response.status_code == 400, url
            assert "127.0.0.1" in response.json()["error"]
        local = created(
            client.post("/webhooks", json={"url": "http://localhost:1/hook", "events": ["customer.created"]}),
            200,
        )
        assert local["enabled"] is True
        assert client.delete(f"/webhooks/{local['id']}").status_code == 200


def test_each_operation_fires_its_events(make_sandbox, receiver_factory):
    from invoicing_sandbox.domain.catalog import EVENT_NAMES

    server = make_sandbox(small_config(), generate=False)
    receiver = receiver_factory()
    with client_for(server) as client:
        client.patch("/portal", json={"referenceAssignmentMethod": "CHRONOLOGICAL"})
        subscribe(client, receiver.url, list(EVENT_NAMES))

        def fired(action) -> tuple[object, list[str]]:
            # a delivery is recorded by the receiver before it answers, so "idle" means "received"
            assert server.webhooks.wait_idle()
            before = len(receiver.received)
            result = action()
            assert server.webhooks.wait_idle()
            with receiver.lock:
                return result, [body["event"]["eventId"] for _, body in receiver.received[before:]]

        customer, events = fired(lambda: new_customer(client, name="Client événements"))
        assert events == ["customer.created"]
        item, events = fired(lambda: new_item(client, name="Article événements", type="product"))
        assert events == ["product.created"]
        _, events = fired(lambda: client.patch(f"/items/{item['id']}", json={"price": 150}))
        assert events == ["product.updated"]
        draft, events = fired(lambda: new_document(client, customer, item))
        assert events == ["document.created"]
        _, events = fired(lambda: client.post(f"/documents/{draft['id']}/validate"))
        assert "invoice.validated" in events
        _, events = fired(lambda: client.post(f"/documents/{draft['id']}/payment"))
        assert "invoice.paid" in events
        quotation = new_document(client, customer, item, type="QUOTATION", status="VALIDATED")
        _, events = fired(lambda: client.post(f"/documents/{quotation['id']}/accept-quotation"))
        assert "quotation.accepted" in events
        other = new_document(client, customer, item)
        _, events = fired(lambda: client.delete(f"/documents/{other['id']}"))
        assert events == ["document.deleted"]
        supplier, events = fired(
            lambda: created(
                client.post(
                    "/suppliers", json={"name": "Fournisseur notifié", "legalIdentifier": "FR-EVENTS"}
                ),
                200,
            )
        )
        assert events == ["supplier.created"]
        _, events = fired(lambda: client.delete(f"/suppliers/{supplier['id']}"))
        assert events == ["supplier.deleted"]
        assert receiver.received[-1][1]["event"]["data"] == {"supplierId": supplier["id"]}
