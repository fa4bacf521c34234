"""The rate limiter: N requests per client IP per fixed one-second window (the service allows 10/s).

Windows are aligned to whole seconds of a monotonic real-time clock, not of the sandbox clock: the sandbox
clock can be frozen or shifted by tests, and a frozen window would never reset. Every request counts,
the token request and rejected (429) requests included, as a limiter in front of a service does.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from sandbox.config import SandboxConfig

WINDOW_S = 1.0


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
