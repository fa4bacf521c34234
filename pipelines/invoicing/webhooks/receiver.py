"""The webhook receiver (the doorbell's ear): an ASGI app that turns each delivery into one spooled hint.

`POST /hooks/<door>` (portal `default`) or `/hooks/<door>/<portal name>` (a portal of the portals file), the
door being that portal's own secret (hook_urls.portal_door: HMAC-SHA256 of its name keyed by the token),
body = the service's envelope `{"id", "portalId", "event": {"eventId", "data"}}` (api-facts). Checks, in
this order, each answering before anything is spooled:

| check | answer |
|---|---|
| a method other than POST, on any path | 404, the same body as any unknown path |
| the door is not the path portal's (HMAC of its name by `INVOICING_WEBHOOK_TOKEN`, constant-time compare) | 404, the same body as any unknown path |
| portal name not configured | 404 `unknown portal` |
| body over 256 KiB (read in bounded chunks; a declared Content-Length over it is refused unread) | 413 |
| `INVOICING_WEBHOOK_HMAC_SECRET` set and `X-Invoicing-Signature: sha256=<hex>` missing or wrong | 401 |
| not JSON, nested too deeply to parse, or not the envelope's shape (`portalId` optional, a string) | 400 |
| an event outside `hint_events.EVENTS`, or a payload without a record id (record_ids.py) | 422 |
| `portalId` missing or not the path portal's id, once an applying run learnt that id from the API | 422 |
| the spool cannot be written (disk full, locked longer than its busy timeout) | 503: the sender retries |

Then `HintSpool.receive(delivery id, hint)` commits (a file: synchronous=FULL, on disk before the answer; PostgreSQL:
the commit returned) and the
answer is 200 `spooled` (or `collapsed` into its resource's re-read hint when the portal is at its bound, or
`dead` when the record's hint is a dead letter: counted, not spooled); a delivery id seen before (a retry of a
delivery already spooled) is also 200 `replayed` and spools nothing. Header size, a request's read time and
the number of connections are the server's to bound (receiver_server.py). Why 404 for a wrong token, not 401: the token
*is* the address; a stranger learns nothing, not even that a receiver listens there, and a 401 would invite guessing.
The payload is read for the record's id only and never written anywhere, nor logged; log lines show the path with the
token masked.

The spool's connection lives on one writer thread: an append waits on an fsync (milliseconds, more on
a busy disk, or a round trip to PostgreSQL) and must not stall the event loop that reads other deliveries; the
spool serialises writers anyway, so a second writer thread would only wait on the first one's lock. An append
that fails drops the connection: the next delivery opens a new one (a PostgreSQL restart heals itself).
"""  # noqa: E501 (a table, one row a line)

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from invoicing_warehouse.engine.names import DEFAULT_PORTAL
from pipelines.invoicing.hook_urls import is_portal_door, masked
from pipelines.invoicing.webhooks.hint_events import UnknownEvent, hint_for_event
from pipelines.invoicing.webhooks.hint_spool import MAX_PENDING_PER_PORTAL, PORTAL_MISMATCH, Hint, HintSpool
from pipelines.invoicing.webhooks.spool_stores import SpoolLocation

MAX_BODY_BYTES = 256 * 1024
SIGNATURE_HEADER = "X-Invoicing-Signature"
MAX_DELIVERY_ID_LENGTH = 200  # the service's ids are 24 hex; a longer one is not a delivery
log = logging.getLogger(__name__)


class Refused(Exception):
    """A delivery answered with `status` and a short reason (never the token, never the payload)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class ReceiverSettings:
    """What one receiver accepts: its token, the spool (a file or a `PostgresSpool`), the portal names, the
    optional HMAC secret."""

    token: str
    spool_path: SpoolLocation
    portals: frozenset[str] = frozenset({DEFAULT_PORTAL})
    hmac_secret: str | None = field(default=None)
    max_pending_per_portal: int = MAX_PENDING_PER_PORTAL

    def __repr__(self) -> str:
        return (f"ReceiverSettings(token=***, spool_path={str(self.spool_path)!r}, portals={sorted(self.portals)}, "
                f"hmac_secret={'***' if self.hmac_secret else None})")


class Receiver:
    """The app and its one spool writer thread; `counts` says what was answered (by outcome)."""

    def __init__(self, settings: ReceiverSettings) -> None:
        self.settings = settings
        self.counts: Counter[str] = Counter()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hint-spool")
        self._spool: HintSpool | None = None  # opened and used on the writer thread only
        self._counts_lock = threading.Lock()

    def app(self) -> Starlette:
        """The ASGI app (its lifespan closes the spool when the server stops)."""

        @asynccontextmanager
        async def lifespan(_app: Starlette):
            yield
            self.close()

        # 405 answered as 404: a stranger must not learn that /hooks/<anything> exists (any method)
        not_found = {404: self._not_found, 405: self._not_found}
        routes = [Route("/hooks/{door}", self.handle, methods=["POST"]),
                  Route("/hooks/{door}/{portal}", self.handle, methods=["POST"])]
        return Starlette(routes=routes, exception_handlers=not_found, lifespan=lifespan)

    def open(self) -> None:
        """Opens (creates) the spool now on its writer thread, so that a bad path fails at start, not at
        the first delivery; raises what sqlite3 or the file system raise."""
        self._writer.submit(self._open).result(timeout=60)

    def _open(self) -> HintSpool:
        if self._spool is None:
            self._spool = HintSpool(self.settings.spool_path,
                                    max_pending_per_portal=self.settings.max_pending_per_portal)
        return self._spool

    def close(self) -> None:
        """Closes the spool on its own thread and stops that thread; safe to call twice."""
        def close_spool() -> None:
            if self._spool is not None:
                self._spool.close()
                self._spool = None

        try:
            self._writer.submit(close_spool).result(timeout=30)
        except RuntimeError:  # already shut down
            return
        self._writer.shutdown(wait=True)

    async def _not_found(self, request: Request, _exc: Exception) -> JSONResponse:
        return JSONResponse({"error": "not found"}, status_code=404)

    async def handle(self, request: Request) -> JSONResponse:
        """One delivery: the checks of the module's table, then the durable append."""
        path = masked(request.url.path)
        try:
            status, outcome = await self._receive(request)
        except Refused as refusal:
            self._count(f"refused_{refusal.status}")
            log.info("POST %s -> %s %s", path, refusal.status, refusal.reason[:120])
            if refusal.status == 404 and refusal.reason == "not found":
                return await self._not_found(request, refusal)
            return JSONResponse({"error": refusal.reason}, status_code=refusal.status)
        self._count(outcome)
        log.info("POST %s -> %s %s", path, status, outcome)
        return JSONResponse({"status": outcome}, status_code=status)

    def _count(self, outcome: str) -> None:
        with self._counts_lock:
            self.counts[outcome] += 1

    async def _receive(self, request: Request) -> tuple[int, str]:
        portal = str(request.path_params.get("portal", DEFAULT_PORTAL))
        # a door per portal (hook_urls.portal_door): the token itself, or another portal's door, opens nothing
        if not is_portal_door(str(request.path_params["door"]), self.settings.token, portal):
            raise Refused(404, "not found")
        if portal not in self.settings.portals:
            raise Refused(404, "unknown portal")
        body = await _bounded_body(request)
        self._check_signature(request, body)
        delivery_id, api_portal_id, hint = _hint_of(portal, body)
        loop = asyncio.get_running_loop()
        try:
            outcome = await loop.run_in_executor(self._writer, self._append, delivery_id, hint, api_portal_id)
        except Exception as error:  # noqa: BLE001 (the sender retries a 503; the reason goes to the log)
            log.error("spool %s: append failed: %s: %s", self.settings.spool_path, type(error).__name__, error)
            raise Refused(503, "the spool cannot be written; retry later") from None
        if outcome == PORTAL_MISMATCH:
            raise Refused(422, "the envelope's 'portalId' is missing, and this portal's id is known"
                          if api_portal_id is None else "the envelope's 'portalId' is not the id of the path's portal")
        return 200, outcome

    def _append(self, delivery_id: str, hint: Hint, api_portal_id: str | None) -> str:
        try:
            return self._open().receive(delivery_id, hint, api_portal_id=api_portal_id, must_name_portal=True)
        except Exception:
            self._drop_spool()  # a broken connection (a database restarted) is not reused: the next one reconnects
            raise

    def _drop_spool(self) -> None:
        spool, self._spool = self._spool, None
        if spool is not None:
            try:
                spool.close()
            except Exception:  # noqa: BLE001, S110 (closing a broken connection may fail too; it is dropped anyway)
                pass

    def _check_signature(self, request: Request, body: bytes) -> None:
        secret = self.settings.hmac_secret
        if not secret:
            return
        given = request.headers.get(SIGNATURE_HEADER, "").strip()
        given = given.removeprefix("sha256=")
        expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        if not given or not hmac.compare_digest(given.lower().encode(), expected.encode()):
            raise Refused(401, f"missing or wrong {SIGNATURE_HEADER} (sha256=<hex HMAC of the body>)")


async def _bounded_body(request: Request) -> bytes:
    """The body, read chunk by chunk and given up as soon as it passes MAX_BODY_BYTES (a declared length
    over it is refused before reading; a lying or missing Content-Length is caught while reading)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.strip().isdigit():
            raise Refused(400, "invalid Content-Length")
        if int(declared) > MAX_BODY_BYTES:
            raise Refused(413, f"body over {MAX_BODY_BYTES} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise Refused(413, f"body over {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        raise Refused(400, "the body ended early") from None
    return b"".join(chunks)


def _hint_of(portal: str, body: bytes) -> tuple[str, str | None, Hint]:
    """(delivery id, the envelope's portalId if any, hint) of an envelope; Refused 400 (shape) or 422 (event)."""
    try:
        envelope = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise Refused(400, "the body is not JSON") from None
    except RecursionError:  # 256 KiB of `[[[...` parses past the interpreter's stack: not an envelope anyway
        raise Refused(400, "the body is JSON nested too deeply") from None
    if not isinstance(envelope, dict):
        raise Refused(400, "the body is not a JSON object")
    delivery_id, event = envelope.get("id"), envelope.get("event")
    if not isinstance(delivery_id, str) or not 0 < len(delivery_id) <= MAX_DELIVERY_ID_LENGTH:
        raise Refused(400, "the envelope's 'id' (the delivery id) must be a non-empty string")
    api_portal_id = envelope.get("portalId")
    if api_portal_id is not None and not isinstance(api_portal_id, str):
        raise Refused(400, "the envelope's 'portalId', when given, must be a string")
    if not isinstance(event, dict) or not isinstance(event.get("eventId"), str) or "data" not in event:
        raise Refused(400, "the envelope's 'event' must be {\"eventId\": <name>, \"data\": <payload>}")
    try:
        return delivery_id, api_portal_id, hint_for_event(portal, event["eventId"], event["data"])
    except UnknownEvent as error:
        raise Refused(422, str(error)[:300]) from None
