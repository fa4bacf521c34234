"""The rate limiter: N requests per client IP per second (the service allows 10/s), counted one of two ways
(`SandboxConfig.rate_limit_mode`, chosen when the limiter is made: `edge_limiter`):

- `fixed` (the default, as the service's headers show it): N per fixed one-second window;
- `sliding`: at most N accepted requests in ANY span of one second (a sliding log, as some gateways count):
  a client that paces exactly N per fixed window, or sends one request late, meets a 429 here.

Fixed windows are aligned to whole seconds of a monotonic real-time clock, not of the sandbox clock: the sandbox
clock can be frozen or shifted by tests, and a frozen window would never reset. Every request counts,
the token request and rejected (429) requests included, as a limiter in front of a service does.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from invoicing_sandbox.config import SandboxConfig

WINDOW_S = 1.0
RATE_LIMIT_MODES = ("fixed", "sliding")


@dataclass(frozen=True)
class RateDecision:
    """The limiter's answer for one request and the values of its `RateLimit-*` headers."""

    allowed: bool
    limit: int
    remaining: int
    ttl_s: int  # whole seconds until the window resets, at least 1

    def headers(self) -> list[tuple[bytes, bytes]]:
        """`RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-TTL` (no `X-` prefix, no Retry-After)."""
        return [
            (b"ratelimit-limit", str(self.limit).encode()),
            (b"ratelimit-remaining", str(self.remaining).encode()),
            (b"ratelimit-ttl", str(self.ttl_s).encode()),
        ]


class FixedWindowLimiter:
    """Counts requests per client IP in fixed one-second windows; the limit is read live from the config."""

    def __init__(self, config: SandboxConfig, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[int, int]] = {}  # ip -> (window index, requests counted in it)

    def hit(self, client_ip: str) -> RateDecision | None:
        """Counts one request from `client_ip`; None when the limiter is off (limit 0)."""
        limit = int(self.config.rate_limit_per_s or 0)
        if limit <= 0:
            return None
        now = self._monotonic()
        window = int(now // WINDOW_S)
        with self._lock:
            started, count = self._windows.get(client_ip, (window, 0))
            if started != window:
                count = 0
                if len(self._windows) > 10_000:  # forget idle clients so the table stays small
                    self._windows = {ip: w for ip, w in self._windows.items() if w[0] == window}
            count += 1
            self._windows[client_ip] = (window, count)
        ttl = max(1, math.ceil((window + 1) * WINDOW_S - now))
        return RateDecision(allowed=count <= limit, limit=limit, remaining=max(0, limit - count), ttl_s=ttl)


class SlidingWindowLimiter:
    """Counts requests per client IP over a sliding second: a request is accepted when fewer than N accepted
    requests of that IP arrived in the second before it (times of a monotonic real-time clock, as above).

    Only accepted requests enter the log: any one-second span then holds at most N accepted requests, the
    invariant the tests read, and a refused request does not push the client's next chance further away.
    `RateLimit-Remaining` is what is left in the second ending now; `RateLimit-TTL` the whole seconds until the
    oldest logged request leaves it (at least 1). `max_in_any_second` is the most accepted requests of one IP
    ever seen in one second: the server's own record of whether a client kept to the limit.
    """

    def __init__(self, config: SandboxConfig, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._logs: dict[str, deque[float]] = {}  # ip -> arrival times of its accepted requests, oldest first
        self.max_in_any_second = 0

    def hit(self, client_ip: str) -> RateDecision | None:
        """Counts one request from `client_ip`; None when the limiter is off (limit 0)."""
        limit = int(self.config.rate_limit_per_s or 0)
        if limit <= 0:
            return None
        with self._lock:
            now = self._monotonic()
            log = self._logs.setdefault(client_ip, deque())
            while log and log[0] <= now - WINDOW_S:
                log.popleft()
            allowed = len(log) < limit
            if allowed:
                log.append(now)
                self.max_in_any_second = max(self.max_in_any_second, len(log))
            if len(self._logs) > 10_000:  # forget idle clients so the table stays small
                self._logs = {ip: times for ip, times in self._logs.items() if times and times[-1] > now - WINDOW_S}
            ttl = max(1, math.ceil(log[0] + WINDOW_S - now)) if log else 1
            remaining = max(0, limit - len(log))
        return RateDecision(allowed=allowed, limit=limit, remaining=remaining, ttl_s=ttl)


EdgeLimiter = FixedWindowLimiter | SlidingWindowLimiter


def edge_limiter(config: SandboxConfig) -> EdgeLimiter:
    """The per-IP limiter `config.rate_limit_mode` names (`fixed` or `sliding`); ValueError for another."""
    if config.rate_limit_mode == "sliding":
        return SlidingWindowLimiter(config)
    if config.rate_limit_mode == "fixed":
        return FixedWindowLimiter(config)
    raise ValueError(f"rate limit mode {config.rate_limit_mode!r}: one of {', '.join(RATE_LIMIT_MODES)}")
