"""Fault injection: latency, 5xx answers, dropped connections, and the counters the reliability suite reads.

Every setting is read from the live `SandboxConfig` on each request, so a test (or the operator) can turn a
fault on or off while the sandbox runs. The dice are a seeded `random.Random`, so a run with the same seed
and the same request sequence injects the same faults.
"""

from __future__ import annotations

import random
import threading

from invoicing_sandbox.config import SandboxConfig

# The 5xx statuses a client meets in front of a real service: the application failing, the gateway
# failing to reach it, and the service being overloaded or restarting.
INJECTED_ERRORS: dict[int, str] = {
    500: "internal server error",
    502: "bad gateway",
    503: "service unavailable",
}


class SandboxStats(dict):
    """A plain dict of counters (`server.stats`) that many threads may bump at once.

    Keys: `requests`, `rate_limited` (429 answers), `latency` (answers delayed), `error` and `error_500`,
    `error_502`, `error_503` (injected 5xx), `dropped` (connections cut mid-answer), `token_revoked`
    (tokens revoked by `revoke_token_after_requests`), `tokens_issued`, `webhook_attempts`, `webhook_failures`, and the
    delivery faults (delivery_faults.py): `webhook_lost`, `webhook_duplicated`, `webhook_reordered`,
    `webhook_delayed`, `webhook_bursts` (bursts released).
    """

    KEYS = (
        "requests",
        "rate_limited",
        "latency",
        "error",
        "error_500",
        "error_502",
        "error_503",
        "dropped",
        "token_revoked",
        "tokens_issued",
        "webhook_attempts",
        "webhook_failures",
        "webhook_lost",
        "webhook_duplicated",
        "webhook_reordered",
        "webhook_delayed",
        "webhook_bursts",
    )

    def __init__(self) -> None:
        super().__init__({key: 0 for key in self.KEYS})
        self._lock = threading.Lock()

    def bump(self, key: str, by: int = 1) -> None:
        """Adds `by` to counter `key` (thread-safe)."""
        with self._lock:
            self[key] = self.get(key, 0) + by

    def reset(self) -> None:
        """Sets every counter back to zero."""
        with self._lock:
            for key in list(self):
                self[key] = 0


class FaultInjector:
    """Rolls the seeded dice for one request: how long to wait, whether to fail it, whether to drop it."""

    def __init__(self, config: SandboxConfig, stats: SandboxStats) -> None:
        self.config = config
        self.stats = stats
        seed = config.fault_seed if config.fault_seed is not None else config.seed
        self._dice = random.Random(seed)
        self._lock = threading.Lock()

    def _roll(self) -> float:
        with self._lock:
            return self._dice.random()

    def latency_s(self) -> float:
        """Seconds to delay this answer: fixed latency plus uniform jitter (0 when both are off)."""
        fixed = max(0.0, float(self.config.latency_ms))
        jitter = max(0.0, float(self.config.latency_jitter_ms))
        if fixed <= 0 and jitter <= 0:
            return 0.0
        self.stats.bump("latency")
        return (fixed + jitter * self._roll()) / 1000.0

    def injected_error(self) -> int | None:
        """A 5xx status to answer instead of serving the request, or None."""
        rate = float(self.config.error_rate)
        if rate <= 0 or self._roll() >= rate:
            return None
        statuses = sorted(set(self.config.error_statuses) & set(INJECTED_ERRORS))  # others are not injectable
        if not statuses:
            return None
        with self._lock:
            status = self._dice.choice(statuses)
        self.stats.bump("error")
        self.stats.bump(f"error_{status}")
        return status

    def failing_list(self, method: str, path: str) -> int | None:
        """The status to answer a GET of the list at `path` (relative to the base URL) with, when the config's
        `failing_lists` names it; None for every other request. Counted as an injected error."""
        if method != "GET":
            return None
        status = next((code for listed, code in self.config.failing_lists if listed == path), None)
        if status is not None:
            self.stats.bump("error")
            self.stats.bump(f"error_{status}")
        return status

    def stamps_present(self, status: int) -> bool:
        """True when the injected `status` answer carries `AccessToken-ExpireAt` = the server's present (the
        sandbox clock, which `Date` follows unless the profile skews it) instead of the token's expiry (profile
        switch `unavailable_expire_at`): a server that answers 503 with its present, as one seen in production
        did."""
        return status == 503 and self.config.contract.unavailable_expire_at == "present"

    def drop_connection(self) -> bool:
        """True when this answer must be cut off mid-way (the connection closes)."""
        rate = float(self.config.drop_rate)
        if rate <= 0 or self._roll() >= rate:
            return False
        self.stats.bump("dropped")
        return True
