"""`SandboxHost`: several seeded portals behind ONE address and ONE per-IP rate limiter, as the service has.

The real service serves every portal on one base URL and tells them apart by the client's credentials; its
limit (10 requests/s) is per source IP, whatever the portal. Here each portal is a whole `SandboxServer`
(its own data, clock, credentials, tokens, webhooks) whose app is mounted under its own path prefix on
one uvicorn server, and every portal's edge counts requests in the one limiter of the host (fixed windows, or a
sliding second with `rate_limit_mode="sliding"`):

```python
with SandboxHost(portals=4, scale=300) as host:
    host.portals["p1"].base_url          # http://127.0.0.1:PORT/portals/p1/api/v2
    host.portals["p1"].portal.snapshot("documents")   # that portal's ground truth
    host.rate_limited()                  # 429s answered to every portal together
```
The path prefix stands for the credentials' role of choosing the portal (see invoicing_sandbox/README.md): a client
keys its rate budget on scheme, host and port, so it sees what it sees on the real host.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Self

from starlette.applications import Starlette
from starlette.routing import Mount

from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.ratelimit import EdgeLimiter, edge_limiter
from invoicing_sandbox.server import HttpThread, SandboxServer, Served

PREFIX = "/portals"


class _MountedPortal(SandboxServer):
    """A portal of a host: served by the host's server under `/portals/NAME`."""

    def __init__(self, name: str, host: SandboxHost, config: SandboxConfig, limiter: EdgeLimiter) -> None:
        super().__init__(config, host=host.host, limiter=limiter)
        self.name = name
        self._host = host

    @property
    def base_url(self) -> str:
        """`http://HOST:PORT/portals/NAME/api/v2` once the host is started."""
        return f"http://{self._host.host}:{self._host.port}{PREFIX}/{self.name}/api/v2"


class SandboxHost(Served):
    """`portals` seeded portals named p1..pN (seeds `seed`, `seed` + 1, ...; credentials per portal), or
    one per name of `configs`, on one port of `host` behind one limiter of `rate_limit_per_s` per IP, counted in
    fixed one-second windows or, `rate_limit_mode="sliding"`, over any one-second span."""

    def __init__(
        self,
        portals: int = 2,
        *,
        scale: int = 1000,
        seed: int = 1,
        rate_limit_per_s: int = 10,
        rate_limit_mode: str = "fixed",
        configs: dict[str, SandboxConfig] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if configs is None:
            if portals < 1:
                raise ValueError("a sandbox host needs at least one portal")
            configs = {
                f"p{i}": SandboxConfig(seed=seed + i - 1, scale=scale, client_id=f"sandbox-client-p{i}",
                                       client_secret=f"sandbox-secret-p{i}")
                for i in range(1, portals + 1)
            }
        self.host = host
        self.port = port
        # the host's own settings: only its rate limit is read (live, like a SandboxServer's)
        self.config = SandboxConfig(rate_limit_per_s=rate_limit_per_s, rate_limit_mode=rate_limit_mode)
        self.limiter = edge_limiter(self.config)
        self.portals: dict[str, SandboxServer] = {
            name: _MountedPortal(name, self, replace(config, rate_limit_per_s=rate_limit_per_s,
                                                     rate_limit_mode=rate_limit_mode), self.limiter)
            for name, config in configs.items()
        }
        self.app = Starlette(routes=[Mount(f"{PREFIX}/{name}", app=server.app)
                                     for name, server in self.portals.items()])
        self._http: HttpThread | None = None

    def rate_limited(self) -> int:
        """429 answers of every portal together."""
        return sum(server.stats.get("rate_limited", 0) for server in self.portals.values())

    def requests(self) -> int:
        """Requests of every portal together."""
        return sum(server.stats.get("requests", 0) for server in self.portals.values())

    def start(self) -> Self:
        """Generates every portal's data, serves them all, starts their webhooks; returns self."""
        if self._http is not None:
            return self
        for server in self.portals.values():
            server.prepare()
        self._http = HttpThread(self.app, self.host, self.port)
        self.port = self._http.start()
        for server in self.portals.values():
            server.port = self.port
            server.begin()
        return self

    def stop(self) -> None:
        """Stops every portal's background work and the server; safe to call twice."""
        for server in self.portals.values():
            server.stop()
        if self._http is not None:
            self._http.stop()
        self._http = None
