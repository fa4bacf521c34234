"""`SandboxServer`: a whole sandbox (portal, data, HTTP server, webhooks, application user) in one object.

```python
with SandboxServer(SandboxConfig(scale=60)) as sandbox:
    httpx.get(sandbox.base_url + "/me", headers={"Authorization": "Bearer " + sandbox.token()})
    sandbox.portal.snapshot("documents")   # the ground truth
```
uvicorn runs in a background thread on a free port of 127.0.0.1; every setting of `config` (faults, rate
limit, page size policy) can be changed while it runs and applies to the next request.
"""

from __future__ import annotations

import socket
import threading
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Self

import uvicorn

from invoicing_sandbox.app import create_app
from invoicing_sandbox.auth import TokenStore
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.faults import SandboxStats
from invoicing_sandbox.ratelimit import EdgeLimiter
from invoicing_sandbox.webhooks import WebhookDispatcher

if TYPE_CHECKING:  # imported when mutations start (see start_mutations)
    from invoicing_sandbox.mutator import Mutator

START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 10.0


class ConfiguredClock(Clock):
    """The server's own clock: real time plus `config.clock_offset_s`, following a change of that setting
    at once (even before the next request), while `freeze`/`advance` keep working for tests.

    `shift` moves it further, for good: a test run held as of another date (tests/support/sandboxes.py) shifts
    it by whole days, and a skew a test then sets through `clock_offset_s` still comes on top of that."""

    follows_config = True

    def __init__(self, config: SandboxConfig, shift: timedelta = timedelta(0)) -> None:
        super().__init__(offset=shift + timedelta(seconds=config.clock_offset_s))
        self._config = config
        self._shift = shift
        self._applied_offset = config.clock_offset_s

    def now(self):
        offset = self._config.clock_offset_s
        if offset != self._applied_offset:
            self._applied_offset = offset
            self.set_offset(self._shift + timedelta(seconds=offset))
        return super().now()


class HttpThread:
    """uvicorn serving one ASGI app in a background thread on a socket bound here (bounded start and stop)."""

    def __init__(self, app, host: str, port: int) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    def start(self) -> int:
        """Binds, serves, waits until uvicorn has started; returns the port."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((self.host, self.port))
        self.port = self._socket.getsockname()[1]
        server_config = uvicorn.Config(
            self.app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            date_header=False,
            server_header=False,
            timeout_graceful_shutdown=2,
            timeout_keep_alive=5,
        )
        self._server = uvicorn.Server(server_config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._socket]},
            name=f"sandbox-{self.port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"sandbox did not start on {self.host}:{self.port} within {START_TIMEOUT_S} s"
                )
            time.sleep(0.01)
        return self.port

    def stop(self) -> None:
        """Stops the server (bounded wait) and closes the socket; safe to call twice."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT_S)
            if self._thread.is_alive() and self._server is not None:
                self._server.force_exit = True
                self._thread.join(STOP_TIMEOUT_S)
        if self._socket is not None:
            self._socket.close()
        self._thread = None
        self._server = None
        self._socket = None


class Served:
    """`with` starts and stops what `start` and `stop` start and stop."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


class SandboxServer(Served):
    """A running emulator of the Invoicing API v2 on 127.0.0.1 (or `host`).

    Without `clock`, the server's clock runs at real time plus `config.clock_offset_s` and follows changes of
    that setting; a `clock` passed in is used as it is (a later change of the setting still applies to it).
    `portal` replaces the domain (tests of the HTTP layer alone); `limiter` replaces the server's own
    per-IP limiter (one shared by the portals of a `SandboxHost`).
    """

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        generate: bool = True,
        clock: Clock | None = None,
        portal=None,
        limiter: EdgeLimiter | None = None,
    ) -> None:
        self.config = config if config is not None else SandboxConfig()
        self.clock = clock if clock is not None else ConfiguredClock(self.config)
        if portal is None:
            from invoicing_sandbox.domain import Portal  # late: the domain is the heavy part

            portal = Portal(self.clock, self.config)
        self.portal = portal
        self.host = host
        self.port = port
        self.generate = generate
        self.generated: dict | None = None
        self.stats = SandboxStats()
        self.tokens = TokenStore(self.config, self.clock, self.stats)
        self.app = create_app(self.portal, self.config, self.clock, tokens=self.tokens, stats=self.stats,
                              limiter=limiter)
        self.webhooks = WebhookDispatcher(self.portal, self.config, self.stats)
        self.mutator: Mutator | None = None
        self._http: HttpThread | None = None

    @property
    def client_id(self) -> str:
        """The API client's id (from the config)."""
        return self.config.client_id

    @property
    def client_secret(self) -> str:
        """The API client's secret (from the config)."""
        return self.config.client_secret

    @property
    def base_url(self) -> str:
        """`http://HOST:PORT/api/v2` once started."""
        return f"http://{self.host}:{self.port}/api/v2"

    def token(self, scope: str = "read write") -> str:
        """A fresh bearer token for `scope`, issued directly (no HTTP request, no rate-limit count)."""
        return self.tokens.issue(scope).value

    def start(self) -> Self:
        """Generates the data (when asked), serves it, starts webhooks and mutations; returns self."""
        if self._http is not None:
            return self
        self.prepare()
        self._http = HttpThread(self.app, self.host, self.port)
        self.port = self._http.start()
        self.begin()
        return self

    def prepare(self) -> None:
        """Generates the seeded data once (when asked); `start` calls it, a `SandboxHost` too."""
        if self.generate and self.generated is None:
            from invoicing_sandbox.generator import generate

            # The history ends at the start of the sandbox's day, not at this second, so that one seed
            # gives the same portal (ids, amounts, overdue list) for a whole day: demos and reports repeat.
            self.generated = generate(
                self.portal, self.config.seed, self.config.scale, end=self.clock.today()
            )

    def begin(self) -> None:
        """Starts webhooks and (when configured) mutations, once the app is served."""
        self.webhooks.start()
        if self.config.mutations_per_s and self.config.mutations_per_s > 0:
            self.start_mutations(self.config.mutations_per_s)

    def start_mutations(self, rate_per_s: float) -> None:
        """Starts (or restarts at a new rate) the background application user."""
        from invoicing_sandbox.mutator import Mutator

        self.stop_mutations()
        self.config.mutations_per_s = rate_per_s
        self.mutator = Mutator(self.portal, rate_per_s, self.config.seed)
        self.mutator.start()

    def stop_mutations(self) -> None:
        """Stops the background application user (its `counts` stay readable)."""
        if self.mutator is not None:
            self.mutator.stop()

    def stop(self) -> None:
        """Stops mutations, webhooks and the HTTP server (bounded wait); safe to call twice."""
        self.stop_mutations()
        self.webhooks.stop()
        if self._http is not None:
            self._http.stop()
        self._http = None
