"""A tiny HTTP proxy on 127.0.0.1 that forwards to a sandbox and can rewrite chosen answers.

The sandbox produces well-formed answers only; the bad-input cases (a body that is not JSON, an
unknown extra field, a field whose type changes, a record without `lastUpdate`, a 404 for a record
just listed) are made by this proxy from the sandbox's real answers, so everything else the client
sees (tokens, paging, Date header, rate-limit headers) stays real. It also records every access
token the token endpoint issued, for the secret scan.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self
from urllib.parse import parse_qs, urlsplit

import httpx

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "host"}


@dataclass
class Exchange:
    """One request and the sandbox's answer; a tamper function may change status, headers, body."""

    method: str
    path: str  # path below the base URL, e.g. "/customers" or "/supplier-documents/<id>/events"
    query: dict[str, list[str]]
    status: int
    headers: dict[str, str]
    body: bytes
    tampered: bool = False
    # sent after `headers`, each as it is: a header repeated (two `Date`), which a dict cannot hold
    extra_headers: list[tuple[str, str]] = field(default_factory=list)

    def json(self):
        """The answer's JSON (raises on a non-JSON body)."""
        return json.loads(self.body)

    def set_json(self, value) -> None:
        """Replaces the body with `value` serialised as JSON."""
        self.body = json.dumps(value).encode()
        self.tampered = True


@dataclass
class TamperProxy:
    """Forwards `base_url` to `upstream_base_url`; `tamper(exchange)` may rewrite each answer."""

    upstream_base_url: str
    tamper: Callable[[Exchange], None] | None = None
    issued_tokens: list[str] = field(default_factory=list)
    tampered_requests: list[str] = field(default_factory=list)
    requests_seen: int = 0

    def __post_init__(self) -> None:
        upstream = urlsplit(self.upstream_base_url)
        self._prefix = upstream.path.rstrip("/")
        self._upstream_origin = f"{upstream.scheme}://{upstream.netloc}"
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=30.0)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="tamper-proxy", daemon=True)

    @property
    def base_url(self) -> str:
        """The proxy's base URL (same path prefix as the sandbox's)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}{self._prefix}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        self._client.close()

    def _forward(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> Exchange:
        split = urlsplit(raw_path)
        relative = split.path.removeprefix(self._prefix)
        upstream = self._client.request(
            method,
            self._upstream_origin + raw_path,
            headers={k: v for k, v in headers.items() if k.lower() not in _HOP_BY_HOP},
            content=body or None,
        )
        exchange = Exchange(
            method=method,
            path=relative,
            query=parse_qs(split.query),
            status=upstream.status_code,
            headers={k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_BY_HOP},
            body=upstream.content,
        )
        with self._lock:
            self.requests_seen += 1
            if relative.endswith("/oauth2/token") and upstream.status_code == 200:
                try:
                    self.issued_tokens.append(upstream.json()["access_token"])
                except (ValueError, KeyError):
                    pass
        if self.tamper is not None:
            self.tamper(exchange)
            if exchange.tampered:
                with self._lock:
                    self.tampered_requests.append(f"{method} {relative}")
        return exchange

    def _handler_class(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                try:
                    exchange = proxy._forward(self.command, self.path, dict(self.headers.items()), body)
                except httpx.TransportError:
                    self.close_connection = True  # pass a dropped upstream connection on as a drop
                    return
                # send_response_only: no Server/Date of the proxy's own; the sandbox's Date is the
                # server time the client's frozen windows are built on.
                self.send_response_only(exchange.status)
                for name, value in [*exchange.headers.items(), *exchange.extra_headers]:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(exchange.body)))
                self.end_headers()
                self.wfile.write(exchange.body)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _handle

            def handle(self) -> None:
                try:
                    super().handle()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on an answer (one past its byte cap): nothing to report

            def log_message(self, *args) -> None:  # keep the test output quiet
                return

        return Handler
