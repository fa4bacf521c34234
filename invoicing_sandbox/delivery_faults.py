"""Faults of webhook deliveries: loss, duplicates, reordering, delay and bursts, on seeded dice.

The real service promises nothing about delivery (spec, Events 8: "retries and delivery guarantees: not
shown"), so a receiver and the runs behind it must survive every one of these. The dispatcher's worker
thread hands each new delivery to `admit` and, on every turn of its loop, asks `due` for held ones whose
time has come; both return the deliveries to send now, in order. Every setting is read from the live
`SandboxConfig`, all default to off (then `admit` returns the delivery at once and rolls no dice, so the
sandbox behaves exactly as without this module).

- loss (`webhook_loss_rate`): the delivery is never sent and never retried (`Delivery.lost`).
- duplicates (`webhook_duplicate_rate`): the dispatcher sends it twice, same delivery id (`duplicate`).
- delay (`webhook_delay_ms` + uniform `webhook_delay_jitter_ms`): first attempt that much later (jitter
  reorders too).
- reordering (`webhook_reorder_rate`): held back until `webhook_reorder_depth` later deliveries went out.
- bursts (`webhook_burst_size` > 1): held until at least that many wait, then released together.
Held deliveries (reorder, burst) go out at the latest `webhook_hold_max_ms` after they were held, so nothing
waits forever when the writes stop.
"""

from __future__ import annotations

import heapq
import itertools
import random
import threading
import time
from typing import Any

from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.faults import SandboxStats


class DeliveryFaults:
    """Decides, for the dispatcher's one worker thread, when each delivery goes out (if ever)."""

    def __init__(self, config: SandboxConfig, stats: SandboxStats) -> None:
        self.config = config
        self.stats = stats
        seed = config.fault_seed if config.fault_seed is not None else config.seed
        self._dice = random.Random(f"webhook-deliveries-{seed}")  # its own stream: the API's faults stay as they were
        self._order = itertools.count()
        self._delayed: list[tuple[float, int, Any]] = []  # (due, order, delivery)
        self._burst: list[Any] = []
        self._burst_since = 0.0
        self._held: list[list] = []  # [delivery, later deliveries still to go before it, held since]
        self._lock = threading.Lock()  # `holding` is read from other threads

    def _rolls(self, rate: float) -> bool:
        return rate > 0 and self._dice.random() < rate

    def admit(self, delivery: Any, now: float | None = None) -> list:
        """A new delivery: the deliveries to send now (it, others it released, or none)."""
        now = time.monotonic() if now is None else now
        if self._rolls(float(self.config.webhook_loss_rate)):
            delivery.lost = True
            self.stats.bump("webhook_lost")
            return []
        delay_ms = max(0.0, float(self.config.webhook_delay_ms))
        jitter_ms = max(0.0, float(self.config.webhook_delay_jitter_ms))
        if delay_ms > 0 or jitter_ms > 0:
            delay_s = (delay_ms + jitter_ms * self._dice.random()) / 1000.0
            self.stats.bump("webhook_delayed")
            with self._lock:
                heapq.heappush(self._delayed, (now + delay_s, next(self._order), delivery))
            return []
        return self._after_delay([delivery], now)

    def due(self, now: float | None = None) -> list:
        """Held deliveries whose time has come, in the order to send them."""
        now = time.monotonic() if now is None else now
        hold_s = max(0.0, float(self.config.webhook_hold_max_ms)) / 1000.0
        ready: list = []
        with self._lock:
            while self._delayed and self._delayed[0][0] <= now:
                ready.append(heapq.heappop(self._delayed)[2])
        out = self._after_delay(ready, now) if ready else []
        with self._lock:
            if self._burst and now - self._burst_since >= hold_s:
                burst, self._burst = self._burst, []
            else:
                burst = []
            expired = [entry for entry in self._held if now - entry[2] >= hold_s]
            self._held = [entry for entry in self._held if now - entry[2] < hold_s]
        if burst:
            self.stats.bump("webhook_bursts")
            out += self._reorder(burst, now)
        return out + [entry[0] for entry in expired]

    def next_due_s(self, now: float | None = None) -> float | None:
        """Seconds until `due` may have something (None: nothing held)."""
        now = time.monotonic() if now is None else now
        hold_s = max(0.0, float(self.config.webhook_hold_max_ms)) / 1000.0
        with self._lock:
            times = [self._delayed[0][0]] if self._delayed else []
            if self._burst:
                times.append(self._burst_since + hold_s)
            times += [entry[2] + hold_s for entry in self._held]
        return max(0.0, min(times) - now) if times else None

    def holding(self) -> int:
        """How many deliveries wait here (delayed, in a burst, held back)."""
        with self._lock:
            return len(self._delayed) + len(self._burst) + len(self._held)

    def duplicated(self) -> bool:
        """Whether this first attempt is to be sent twice."""
        if self._rolls(float(self.config.webhook_duplicate_rate)):
            self.stats.bump("webhook_duplicated")
            return True
        return False

    def _after_delay(self, deliveries: list, now: float) -> list:
        size = int(self.config.webhook_burst_size)
        if size <= 1:
            return self._reorder(deliveries, now)
        with self._lock:
            if not self._burst:
                self._burst_since = now
            self._burst += deliveries
            if len(self._burst) < size:
                return []
            burst, self._burst = self._burst, []
        self.stats.bump("webhook_bursts")
        return self._reorder(burst, now)

    def _reorder(self, deliveries: list, now: float) -> list:
        out: list = []
        depth = max(1, int(self.config.webhook_reorder_depth))
        for delivery in deliveries:
            if self._rolls(float(self.config.webhook_reorder_rate)):
                self.stats.bump("webhook_reordered")
                with self._lock:
                    self._held.append([delivery, depth, now])
                continue
            out.append(delivery)
            with self._lock:  # one more delivery went out ahead of each held one
                for entry in self._held:
                    entry[1] -= 1
                released = [entry[0] for entry in self._held if entry[1] <= 0]
                self._held = [entry for entry in self._held if entry[1] > 0]
            out += released
        return out
