"""The dashboard answers only requests addressed to a host it was started for (DNS rebinding, review M4).

A web page open in the same browser can make its own domain resolve to 127.0.0.1 and then read the
dashboard as if it were that page's: the request then carries the attacker's name in `Host`. Streamlit
(1.67, Starlette) has `server.allowedHosts`, but checks it on the WebSocket only; the HTTP routes (the page,
health, media files of the CSV downloads) accept any Host. `invoicing-warehouse dashboard` therefore sets
`server.allowedHosts` (dashboard_command.py: loopback names, `--host`, `--allowed-host`), and `install()`
puts Streamlit's own check (`is_host_allowed`, the same list) in front of every request, HTTP and WebSocket
alike: a foreign Host gets 421 Misdirected Request, or a closed WebSocket. Streamlit exposes no public hook
for middleware under `streamlit run`, so `install()` wraps the factory of its middleware stack; when that
factory is missing (another Streamlit), it refuses to start rather than serve unguarded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
REFUSED_STATUS = 421  # Misdirected Request: this server is not the one the name was meant for
REFUSED_BODY = b"this dashboard does not answer for that host name (its allowed hosts: see --allowed-host)\n"


def _host_header(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"host":
            return value.decode("latin-1")
    return None


class HostGuard:
    """ASGI middleware: requests whose `Host` is not allowed (`allowed(host)`) never reach the app."""

    def __init__(self, app: ASGIApp, allowed: Callable[[str | None], bool]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.allowed(_host_header(scope)):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: the server answers 403
            return
        await send({"type": "http.response.start", "status": REFUSED_STATUS,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(REFUSED_BODY)).encode())]})
        await send({"type": "http.response.body", "body": REFUSED_BODY})


def install() -> None:
    """Puts HostGuard first in the middleware of the Streamlit server this process is about to start (call
    before `streamlit run`); raises RuntimeError when this Streamlit has no such factory to wrap."""
    try:
        from starlette.middleware import Middleware
        from streamlit.web.server.starlette import starlette_app
        from streamlit.web.server.starlette.starlette_websocket import is_host_allowed
    except ImportError as error:
        raise RuntimeError(f"the dashboard's Host check cannot be installed on this Streamlit: {error}") from None
    factory = getattr(starlette_app, "create_streamlit_middleware", None)
    if factory is None:
        raise RuntimeError("the dashboard's Host check cannot be installed: this Streamlit has no "
                           "create_streamlit_middleware; refusing to serve without it")
    if getattr(factory, "host_guarded", False):
        return

    def guarded_middleware() -> list:
        return [Middleware(HostGuard, allowed=is_host_allowed), *factory()]

    guarded_middleware.host_guarded = True  # type: ignore[attr-defined]
    starlette_app.create_streamlit_middleware = guarded_middleware
