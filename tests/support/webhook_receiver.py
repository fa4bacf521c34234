"""A webhook receiver served in this test process (the real ASGI app on the real server config,
receiver_server.server_config: h11 with its bounds, 127.0.0.1, a free port), and envelopes as the service
sends them."""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from pipelines.invoicing.hook_urls import hook_url
from pipelines.invoicing.webhooks.hint_spool import MAX_PENDING_PER_PORTAL, HintSpool, spool_path
from pipelines.invoicing.webhooks.receiver import Receiver, ReceiverSettings
from pipelines.invoicing.webhooks.receiver_server import DEFAULT_LIMITS, ServerLimits, server_config

START_S = 30.0
STOP_S = 10.0


@dataclass
class ServedReceiver:
    """A running receiver: its token, base address, spool file and the `Receiver` (its counts)."""

    token: str
    base: str
    spool_path: Path
    receiver: Receiver

    def url(self, portal: str | None = None, token: str | None = None) -> str:
        """The delivery URL of `portal` (None: `default`), its door derived from the token (another `token` to
        test a wrong one)."""
        return hook_url(self.base, self.token if token is None else token, portal)

    def path(self, portal: str | None = None) -> str:
        """The delivery path of `portal` (None: `default`), door included."""
        return self.url(portal)[len(self.base):]

    def pending(self) -> list:
        """The hints in the spool now (read through a connection of its own)."""
        with HintSpool(self.spool_path) as spool:
            return spool.pending()


@contextlib.contextmanager
def serving_app(app, limits: ServerLimits = DEFAULT_LIMITS) -> Iterator[int]:
    """Serves `app` with the receiver's server config (`limits`) in a thread on 127.0.0.1; yields the port;
    stopped (bounded waits) on exit."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(server_config(app, limits, log_level="warning", lifespan="off",
                                          timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + START_S
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the receiver's server did not start"
            time.sleep(0.01)
        yield listener.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(STOP_S)
        if thread.is_alive():
            server.force_exit = True
            thread.join(STOP_S)
        listener.close()
        assert not thread.is_alive(), "the receiver's server did not stop"


@contextlib.contextmanager
def serving_receiver(tmp_path: Path, *, portals: tuple[str, ...] = ("default",), hmac_secret: str | None = None,
                     limits: ServerLimits = DEFAULT_LIMITS,
                     max_pending_per_portal: int = MAX_PENDING_PER_PORTAL) -> Iterator[ServedReceiver]:
    """Serves a receiver whose spool sits beside `tmp_path/warehouse.duckdb`; stopped on exit."""
    token = secrets.token_urlsafe(24)
    settings = ReceiverSettings(token, spool_path(tmp_path / "warehouse.duckdb"), frozenset(portals), hmac_secret,
                                max_pending_per_portal)
    receiver = Receiver(settings)
    receiver.open()
    try:
        with serving_app(receiver.app(), limits) as port:
            yield ServedReceiver(token, f"http://127.0.0.1:{port}", settings.spool_path, receiver)
    finally:
        receiver.close()


def envelope(delivery_id: str, event: str = "document.updated", record_id: str = "0123456789abcdef01234567",
             data: object = None) -> dict:
    """A delivery as the service sends it (api-facts)."""
    payload = {"id": record_id, "lastUpdate": "2026-11-24T10:00:00Z"} if data is None else data
    return {"id": delivery_id, "portalId": "64f0c0ffee0000000000abcd", "event": {"eventId": event, "data": payload}}
