"""The sandbox's FastAPI application: routes under /api/v2, error bodies, and the edge every request crosses.

The edge (an ASGI middleware) does what sits in front of the real service: the per-IP rate limiter, the
injected faults, and the headers every answer carries (`Date` from the sandbox clock, `RateLimit-*`,
`AccessToken-ExpireAt` for an authenticated request).
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import timedelta
from email.utils import format_datetime

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from invoicing_sandbox.auth import TokenStore
from invoicing_sandbox.clock import Clock, iso
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.errors import ApiError, not_found
from invoicing_sandbox.faults import INJECTED_ERRORS, FaultInjector, SandboxStats
from invoicing_sandbox.ratelimit import EdgeLimiter, edge_limiter
from invoicing_sandbox.routes import build_router
from invoicing_sandbox.routes.openapi import build_openapi
from invoicing_sandbox.routes.responses import ApiJSONResponse

BASE_PATH = "/api/v2"
log = logging.getLogger("invoicing_sandbox.app")


class _DroppedAnswerFilter(logging.Filter):
    """Hides uvicorn's complaint about the answers the drop fault cuts off on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "returned without completing response" not in record.getMessage()


logging.getLogger("uvicorn.error").addFilter(_DroppedAnswerFilter())


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def _error_bytes(status: int, message: str) -> bytes:
    return json.dumps({"error": message, "code": status}, separators=(",", ":")).encode()


def _api_path(scope) -> str:
    """The request's path below the API's base address (`/api/v2`), under a host's portal prefix too."""
    path = scope.get("path", "")
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    return path.removeprefix(BASE_PATH)


class Edge:
    """Pure ASGI middleware: rate limit, faults, and the headers of every answer."""

    def __init__(
        self,
        app,
        *,
        config: SandboxConfig,
        clock: Clock,
        stats: SandboxStats,
        limiter: EdgeLimiter,
        faults: FaultInjector,
        tokens: TokenStore,
        applied_offset_s: float,
    ) -> None:
        self.app = app
        self.tokens = tokens
        self.config = config
        self.clock = clock
        self.stats = stats
        self.limiter = limiter
        self.faults = faults
        # Starlette builds middleware on the first request: the offset the clock was built with is
        # passed in, so a change made before that request is still applied.
        self._applied_offset = applied_offset_s

    def _sync_clock_offset(self) -> None:
        # `clock_offset_s` can change at run time; apply each new value once (unless the clock follows
        # the config itself, as SandboxServer's does).
        if getattr(self.clock, "follows_config", False):
            return
        offset = float(self.config.clock_offset_s or 0.0)
        if offset != self._applied_offset:
            self.clock.set_offset(timedelta(seconds=offset))
            self._applied_offset = offset

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.stats.bump("requests")
        self._sync_clock_offset()
        state = scope.setdefault("state", {})
        client = scope.get("client") or ("unknown", 0)
        decision = self.limiter.hit(client[0])
        edge_headers = decision.headers() if decision else []
        started = False

        async def send_with_headers(message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", [])) + edge_headers
                # the edge's clock may run apart from the one stamping lastUpdate (contract profile)
                edge_now = self.clock.now() + timedelta(seconds=self.config.contract.date_header_skew_s)
                headers.append((b"date", format_datetime(edge_now, usegmt=True).encode()))
                # a 503 stamped with the answering server's present (faults.stamps_present): the service's clock
                expire_at = self.clock.now() if state.get("expire_at_present") else state.get("token_expire_at")
                if expire_at is None:  # a route that did not authenticate (unknown path, 429, fault)
                    token = self.tokens.peek(_header(scope, b"authorization"))
                    expire_at = token.expires_at if token is not None else None
                if expire_at is not None:
                    headers.append((b"accesstoken-expireat", iso(expire_at).encode()))
                message = {**message, "headers": headers}
            await send(message)

        if decision is not None and not decision.allowed:
            self.stats.bump("rate_limited")
            await self._send_error(
                send_with_headers, 429, f"too many requests: limit is {decision.limit} per second"
            )
            return
        delay = self.faults.latency_s()
        if delay > 0:
            await asyncio.sleep(delay)
        status = self.faults.failing_list(scope.get("method", ""), _api_path(scope))
        if status is None:
            status = self.faults.injected_error()
        if status is not None:
            state["expire_at_present"] = self.faults.stamps_present(status)
            await self._send_error(send_with_headers, status, INJECTED_ERRORS.get(status, "injected failure"))
            return
        target = send_with_headers
        held: list[dict] = []
        dropping = self.faults.drop_connection()
        if dropping:

            async def hold(message) -> None:
                held.append(message)

            target = hold
        try:
            await self.app(scope, receive, target)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if dropping or not started:
                held.clear()
                dropping = False
                await self._send_error(send_with_headers, 500, "internal server error")
            return
        if dropping:
            await self._send_cut_off(send_with_headers, held)

    @staticmethod
    async def _send_error(send, status: int, message: str) -> None:
        body = _error_bytes(status, message)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    async def _send_cut_off(send, held: list[dict]) -> None:
        """Sends the head and half the body of the real answer, then returns: uvicorn closes the connection
        and the client sees an incomplete message (the server did the work; the answer is lost)."""
        start = next((m for m in held if m["type"] == "http.response.start"), None)
        body = b"".join(m.get("body", b"") for m in held if m["type"] == "http.response.body")
        if start is None:
            return
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        full = body or b'{"data":null}'
        headers.append((b"content-length", str(len(full)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": full[: len(full) // 2], "more_body": True})


def create_app(
    portal,
    config: SandboxConfig,
    clock: Clock,
    *,
    tokens: TokenStore | None = None,
    stats: SandboxStats | None = None,
    limiter: EdgeLimiter | None = None,
) -> FastAPI:
    """The ASGI app serving `portal` under /api/v2 (OpenAPI document at /api/v2/openapi.json); `limiter`
    is the per-IP limiter in front of it (a `SandboxHost` passes one limiter to all its portals)."""
    stats = stats if stats is not None else SandboxStats()
    app = FastAPI(
        title="Invoicing API v2 (sandbox)",
        version="2.0.6",
        description='Local emulator of the Invoicing API v2. Success bodies are {"data": ...}; '
        'errors are {"error", "code", "details"}.',
        openapi_url=f"{BASE_PATH}/openapi.json",
        docs_url=f"{BASE_PATH}/docs",
        redoc_url=None,
        default_response_class=ApiJSONResponse,
    )
    app.state.portal = portal
    app.state.config = config
    app.state.clock = clock
    app.state.stats = stats
    tokens = tokens if tokens is not None else TokenStore(config, clock, stats)
    app.state.tokens = tokens
    app.include_router(build_router(), prefix=BASE_PATH)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError):
        body = error.body()
        details = error.details or [{}]
        if error.status == 404 and isinstance(details[0], dict) and not details[0].get("path"):
            # the domain does not know the URL; the service's 404 names it
            body["details"] = [{"path": request.url.path, "message": error.message}]
        return ApiJSONResponse(body, status_code=error.status)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException):
        if error.status_code == 404:
            return ApiJSONResponse(not_found(request.url.path).body(), status_code=404)
        message = str(error.detail).lower() if error.detail else "error"
        return ApiJSONResponse(
            {"error": message, "code": error.status_code},
            status_code=error.status_code,
            headers=getattr(error, "headers", None),
        )

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, error: RequestValidationError):
        details = [
            {"path": ".".join(str(p) for p in e.get("loc", ())), "message": e.get("msg", "")}
            for e in error.errors()
        ]
        return ApiJSONResponse({"error": "invalid request", "code": 400, "details": details}, status_code=400)

    # replacing the method is FastAPI's documented way to serve a custom OpenAPI document
    app.openapi = lambda: build_openapi(app, BASE_PATH)  # type: ignore[method-assign]
    app.add_middleware(
        Edge,
        config=config,
        clock=clock,
        stats=stats,
        limiter=limiter if limiter is not None else edge_limiter(config),
        faults=FaultInjector(config, stats),
        tokens=tokens,
        applied_offset_s=float(config.clock_offset_s or 0.0),
    )
    return app
