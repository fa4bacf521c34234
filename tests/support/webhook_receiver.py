"""A webhook receiver served in this test process (the real ASGI app on uvicorn, 127.0.0.1, a free port),
and envelopes as the service sends them."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_path
from pipelines.invoicing.webhooks.receiver import Receiver, ReceiverSettings
from sandbox.server import HttpThread


@dataclass
class ServedReceiver:
    """A running receiver: its token, base address, spool file and the `Receiver` (its counts)."""

    token: str
    base: str
    spool_path: Path
    receiver: Receiver

    def url(self, portal: str | None = None, token: str | None = None) -> str:
        """The delivery URL (another `token` to test a wrong one)."""
        path = f"{self.base}/hooks/{self.token if token is None else token}"
        return f"{path}/{portal}" if portal else path

    def pending(self) -> list:
        """The hints in the spool now (read through a connection of its own)."""
        with HintSpool(self.spool_path) as spool:
            return spool.pending()


@contextlib.contextmanager
def serving_receiver(tmp_path: Path, *, portals: tuple[str, ...] = ("default",),
                     hmac_secret: str | None = None) -> Iterator[ServedReceiver]:
    """Serves a receiver whose spool sits beside `tmp_path/warehouse.duckdb`; stopped on exit."""
    token = secrets.token_urlsafe(24)
    settings = ReceiverSettings(token, spool_path(tmp_path / "warehouse.duckdb"), frozenset(portals), hmac_secret)
    receiver = Receiver(settings)
    receiver.open()
    server = HttpThread(receiver.app(), "127.0.0.1", 0)
    port = server.start()
    try:
        yield ServedReceiver(token, f"http://127.0.0.1:{port}", settings.spool_path, receiver)
    finally:
        server.stop()
        receiver.close()


def envelope(delivery_id: str, event: str = "document.updated", record_id: str = "0123456789abcdef01234567",
             data: object = None) -> dict:
    """A delivery as the service sends it (api-facts)."""
    payload = {"id": record_id, "lastUpdate": "2026-11-24T10:00:00Z"} if data is None else data
    return {"id": delivery_id, "portalId": "64f0c0ffee0000000000abcd", "event": {"eventId": event, "data": payload}}
