"""Webhook deliveries: every Portal event POSTed to each enabled subscription that asks for it.

A background worker thread does the sending, so a write never waits for a receiver. The envelope and the
retry schedule are the real service's (api-facts.md): `{"id", "portalId", "event": {"eventId", "data"}}`,
retried on any answer but 200 after 1 s, 30 s, 5 min, 15 min, 30 min, 1 h, 6 h, 12 h and 24 h (each
multiplied by `config.webhook_time_factor`, so tests see several retries in a second), and a subscription
is disabled after 100 failed attempts. Deliveries only go to 127.0.0.1 / localhost: the sandbox never
sends traffic off the machine. Delivery faults (loss, duplicates, reordering, delay, bursts; all off by
default) are decided by `delivery_faults.DeliveryFaults`.
"""

from __future__ import annotations

import copy
import heapq
import itertools
import logging
import queue
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.delivery_faults import DeliveryFaults
from invoicing_sandbox.errors import ApiError
from invoicing_sandbox.faults import SandboxStats
from invoicing_sandbox.served import served_payload

RETRY_DELAYS_S = (1, 30, 300, 900, 1800, 3600, 21600, 43200, 86400)
MAX_FAILURES = 100
KEPT_DELIVERIES = 10_000  # the most recent deliveries stay inspectable; a long run does not grow without end
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
log = logging.getLogger("invoicing_sandbox.webhooks")


def check_local_url(url: str) -> None:
    """Refuses (400) a subscription URL that is not http(s) on 127.0.0.1 / localhost."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as error:
        raise ApiError(400, f"invalid webhook url: {error}") from error
    if parts.scheme not in ("http", "https") or host not in LOCAL_HOSTS:
        raise ApiError(
            400,
            "the sandbox only delivers webhooks to http(s)://127.0.0.1 or localhost URLs",
            [{"path": "url", "message": "must be a local http(s) URL"}],
        )


@dataclass
class Delivery:
    """One event sent to one subscription, with every attempt (`{"at", "status", "error"}`); `lost`: never
    sent (a fault); `duplicates`: the extra sends of the same delivery (a fault), with their answers."""

    id: str
    subscription_id: str
    url: str
    event: str
    envelope: dict
    attempts: list[dict] = field(default_factory=list)
    delivered: bool = False
    abandoned: bool = False
    lost: bool = False
    duplicates: list[dict] = field(default_factory=list)


class WebhookDispatcher:
    """Listens to the Portal and delivers its events from one background thread."""

    def __init__(self, portal, config: SandboxConfig, stats: SandboxStats, timeout_s: float = 5.0) -> None:
        self.portal = portal
        self.config = config
        self.stats = stats
        self.deliveries: deque[Delivery] = deque(maxlen=KEPT_DELIVERIES)
        self._timeout_s = timeout_s
        self._events: queue.Queue = queue.Queue()
        self._retries: list[tuple[float, int, Delivery]] = []
        self._sequence = itertools.count()
        self._failures: dict[str, int] = {}  # per subscription, when the Portal does not keep them
        self._lock = threading.Lock()
        self._busy = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._portal_id: str | None = None
        self.faults = DeliveryFaults(config, stats)

    def start(self) -> None:
        """Registers the Portal listener and starts the worker thread."""
        if self.on_event not in self.portal.listeners:
            self.portal.listeners.append(self.on_event)
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="sandbox-webhooks", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Unregisters the listener and stops the worker (pending retries are dropped)."""
        if self.on_event in self.portal.listeners:
            self.portal.listeners.remove(self.on_event)
        self._stop.set()
        self._events.put(None)
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    def on_event(self, event: str, payload: dict) -> None:
        """The Portal listener: queues the event (called inside the writer's thread, so it only queues)."""
        with self._lock:
            self._busy += 1
        self._events.put((event, copy.deepcopy(payload)))

    def idle(self) -> bool:
        """True when no event waits to be fanned out nor a delivery held by a fault (scheduled retries may
        still be pending)."""
        with self._lock:
            return self._busy == 0 and self._events.empty() and self.faults.holding() == 0

    def wait_idle(self, timeout_s: float = 5.0) -> bool:
        """Waits (bounded) until every queued event has had its first attempt."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.idle():
                return True
            time.sleep(0.01)
        return self.idle()

    def _run(self) -> None:
        with httpx.Client(timeout=self._timeout_s, trust_env=False) as client:
            while not self._stop.is_set():
                wait = 0.2
                with self._lock:
                    if self._retries:
                        wait = max(0.0, min(wait, self._retries[0][0] - time.monotonic()))
                held = self.faults.next_due_s()
                if held is not None:
                    wait = min(wait, held)
                try:
                    item = self._events.get(timeout=wait)
                except queue.Empty:
                    item = False
                if item is None:
                    break
                if item:
                    try:
                        self._fan_out(client, *item)
                    except Exception:  # a broken event must not kill the worker
                        log.exception("webhook fan-out failed for %s", item[0])
                    finally:
                        with self._lock:
                            self._busy -= 1
                try:
                    for delivery in self.faults.due():
                        self._first_attempt(client, delivery)
                    self._run_due_retries(client)
                except Exception:  # same: the worker outlives a failed retry
                    log.exception("webhook retry failed")

    def _subscriptions(self) -> dict[str, dict]:
        return {s["id"]: s for s in self.portal.snapshot("webhooks")}

    def _enabled(self, subscription: dict | None) -> bool:
        if subscription is None or subscription.get("enabled") is False:
            return False
        return self._failures.get(subscription["id"], 0) < MAX_FAILURES

    def _fan_out(self, client: httpx.Client, event: str, payload: dict) -> None:
        subscriptions = [s for s in self._subscriptions().values() if event in (s.get("events") or [])]
        if not subscriptions:
            return
        if self._portal_id is None:
            self._portal_id = self.portal.get_portal()["id"]
        payload = served_payload(event, payload, self.config.contract)  # the same shapes as the GETs
        for subscription in subscriptions:
            if not self._enabled(subscription):
                continue
            delivery_id = f"{int(time.time()):08x}{secrets.token_hex(8)}"
            envelope = {
                "id": delivery_id,
                "portalId": self._portal_id,
                "event": {"eventId": event, "data": payload},
            }
            delivery = Delivery(delivery_id, subscription["id"], subscription["url"], event, envelope)
            with self._lock:
                self.deliveries.append(delivery)
            for ready in self.faults.admit(delivery):
                self._first_attempt(client, ready)

    def _first_attempt(self, client: httpx.Client, delivery: Delivery) -> None:
        """The first attempt of a delivery the faults let go (and its duplicate when the dice say so)."""
        if not self._enabled(self._subscriptions().get(delivery.subscription_id)):
            delivery.abandoned = True  # disabled or deleted while the delivery was held
            return
        self._attempt(client, delivery)
        if self.faults.duplicated():
            record: dict = {"at": time.time(), "status": None, "error": None}
            try:
                record["status"] = client.post(delivery.url, json=delivery.envelope).status_code
            except httpx.HTTPError as error:
                record["error"] = f"{type(error).__name__}: {error}"
            delivery.duplicates.append(record)  # never retried: the original has its own retries

    def _run_due_retries(self, client: httpx.Client) -> None:
        while not self._stop.is_set():
            with self._lock:
                if not self._retries or self._retries[0][0] > time.monotonic():
                    return
                _, _, delivery = heapq.heappop(self._retries)
            if self._enabled(self._subscriptions().get(delivery.subscription_id)):
                self._attempt(client, delivery)
            else:
                delivery.abandoned = True

    def _attempt(self, client: httpx.Client, delivery: Delivery) -> None:
        self.stats.bump("webhook_attempts")
        record: dict = {"at": time.time(), "status": None, "error": None}
        try:
            check_local_url(delivery.url)
            response = client.post(delivery.url, json=delivery.envelope)
            record["status"] = response.status_code
        except (httpx.HTTPError, ApiError) as error:
            record["error"] = f"{type(error).__name__}: {error}"
        delivery.attempts.append(record)
        delivered = record["status"] == 200
        self._record_result(delivery.subscription_id, delivered)
        if delivered:
            delivery.delivered = True
            return
        self.stats.bump("webhook_failures")
        retry = len(delivery.attempts) - 1
        if retry >= len(RETRY_DELAYS_S):
            delivery.abandoned = True
            return
        due = time.monotonic() + RETRY_DELAYS_S[retry] * float(self.config.webhook_time_factor)
        with self._lock:
            heapq.heappush(self._retries, (due, next(self._sequence), delivery))

    def _record_result(self, subscription_id: str, delivered: bool) -> None:
        # The Portal keeps `failures` and `enabled` on the subscription (disabled after 100 failures);
        # the local count is a fallback for a Portal without that method.
        if not delivered:
            self._failures[subscription_id] = self._failures.get(subscription_id, 0) + 1
        record = getattr(self.portal, "webhook_delivery_result", None)
        if record is not None:
            try:
                record(subscription_id, delivered)
            except ApiError:  # the subscription was deleted meanwhile
                pass
