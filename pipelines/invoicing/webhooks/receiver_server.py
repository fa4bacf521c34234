"""The receiver's HTTP server: uvicorn with every door bounded, so a stranger without the token cannot exhaust it.

The receiver must be reachable by the service, so by anyone; deliveries are tiny (api-facts: an envelope of a
few hundred bytes, headers of a few hundred more). What uvicorn leaves open by default, and what is set here:

| what | uvicorn's default | here |
|---|---|---|
| header size | httptools: no cap (40 MB of headers were read); h11's `h11_max_incomplete_event_size` caps only a head still incomplete (one read of up to 256 KiB passes whole) | h11's cap at `MAX_HEADER_BYTES` for a head arriving in pieces, and `BoundedH11Protocol` measuring every parsed head: over it, 431 and the connection closed |
| a half-sent request (headers or body) | waits forever | dropped `REQUEST_READ_TIMEOUT_S` after its first byte (`BoundedH11Protocol`), whatever it sent so far |
| an idle kept-alive connection | 5 s | `KEEP_ALIVE_S` |
| requests being handled at once | unbounded | `limit_concurrency` = `MAX_CONCURRENT`: beyond it uvicorn answers 503 (the sender retries) |
| open connections | unbounded (file descriptors) | `MAX_CONNECTIONS`: a connection over it is closed at once, before reading a byte |

A reverse proxy in front (docs/webhook-receiver.md: nginx with TLS, per-IP limits) is still the first wall;
these bounds hold when it is missing or misconfigured. h11 is pure Python and slower than httptools, which a
receiver of a few deliveries a second does not notice (bench/receiver_answers.py).
"""  # noqa: E501 (a table, one row a line)

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_HEADER_BYTES = 16 * 1024  # a delivery's request line and headers are well under 1 KiB; nginx's default is 8 KiB
REQUEST_READ_TIMEOUT_S = 10.0  # a 256 KiB body at a slow 30 KB/s still fits
KEEP_ALIVE_S = 5
MAX_CONCURRENT = 128  # the service sends deliveries one by one per subscription; a burst of portals fits
MAX_CONNECTIONS = 256  # under a systemd unit's default 1,024 file descriptors, with room for the spool


@dataclass(frozen=True)
class ServerLimits:
    """The server's bounds (the module's table); tests shorten the read timeout."""

    max_header_bytes: int = MAX_HEADER_BYTES
    request_read_timeout_s: float = REQUEST_READ_TIMEOUT_S
    keep_alive_s: int = KEEP_ALIVE_S
    max_concurrent: int = MAX_CONCURRENT
    max_connections: int = MAX_CONNECTIONS


DEFAULT_LIMITS = ServerLimits()


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol that refuses connections over `max_connections`, a request line and headers over
    `max_header_bytes` (431), and drops a request not read whole within `request_read_timeout_s` of its first
    byte (uvicorn times out idle kept-alive connections only, never a request that stops half-way)."""

    limits = DEFAULT_LIMITS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_deadline: asyncio.TimerHandle | None = None
        self._head_too_large = False
        parse = self.conn.next_event

        # Every head h11 parses is measured here, however it arrived (in one read, after a pipelined body...);
        # h11 itself refuses only a head still incomplete past its cap. Both end in uvicorn's refusal path.
        def bounded_next_event() -> Any:
            try:
                event = parse()
            except h11.RemoteProtocolError as error:
                self._head_too_large = error.error_status_hint == 431
                raise
            if isinstance(event, h11.Request) and _head_size(event) > self.limits.max_header_bytes:
                self._head_too_large = True
                raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
            return event

        self.conn.next_event = bounded_next_event  # type: ignore[method-assign]

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 refused: 431 when it was the head's size, else uvicorn's 400."""
        if not self._head_too_large:
            super().send_400_response(msg)
            return
        self.logger.info("request head over %d bytes: 431, connection closed", self.limits.max_header_bytes)
        self._disarm()
        self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; "
                             b"charset=utf-8\r\nconnection: close\r\ncontent-length: 32\r\n\r\n"
                             b"request header fields too large\n")
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self.logger.warning("connection refused: %d open connections", len(self.connections) - 1)
            transport.abort()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._disarm()  # the request is read: the app's answer is not bounded here
        elif self._read_deadline is None:
            self._arm()  # the next request on a kept-alive connection

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._read_deadline = self.loop.call_later(self.limits.request_read_timeout_s, self._drop)

    def _disarm(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _drop(self) -> None:
        self._read_deadline = None
        if self.conn.their_state not in (h11.DONE, h11.MUST_CLOSE) and not self.transport.is_closing():
            self.logger.info("request not read within %s s: connection dropped", self.limits.request_read_timeout_s)
            self.transport.abort()


def _head_size(request: h11.Request) -> int:
    """The bytes of a parsed request's line and headers (`METHOD target HTTP/1.1`, `name: value` lines)."""
    line = len(request.method) + len(request.target) + len(b"  HTTP/1.1\r\n")
    return line + sum(len(name) + len(value) + 4 for name, value in request.headers) + 2


def server_config(app: Any, limits: ServerLimits = DEFAULT_LIMITS, **options: Any) -> uvicorn.Config:
    """The uvicorn config of the receiver: `app` behind the bounds of `limits`; `options` go to uvicorn.Config
    (log level, lifespan...)."""
    protocol = type("ReceiverH11Protocol", (BoundedH11Protocol,), {"limits": limits})
    return uvicorn.Config(app, http=protocol, h11_max_incomplete_event_size=limits.max_header_bytes,
                          timeout_keep_alive=limits.keep_alive_s, limit_concurrency=limits.max_concurrent,
                          access_log=False, server_header=False, **options)
