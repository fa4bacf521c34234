"""One pacing limiter shared by every request of a run, threads included.

The service allows 10 requests per second and (like the sandbox) counts them in fixed one-second windows
of its own clock. The limiter never grants more than N = round(rate) requests in any sliding span of
N / (rate * safety) seconds (1.053 s at the real limit with the default safety 0.95): a fixed one-second
window then never holds 11 requests even when their arrival at the server is shifted by up to ~50 ms
(thread scheduling, the server's own event loop), and the pace is 9.5 requests/s. (At 0.96 a benchmark
on a loaded machine still met one 429 in 5,500 requests.) Consecutive grants are
also kept `MIN_GAP_SHARE` of an interval apart, so the pace stays smooth; a thread that woke up late does
not cost the run its slot, because the next grant may come sooner as long as the span rule holds.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

DEFAULT_SAFETY = 0.95
MIN_GAP_SHARE = 0.75


class RateLimiter:
    """Paces requests below `rate_per_s` per second; `rate_per_s <= 0` turns pacing off."""

    def __init__(
        self,
        rate_per_s: float = 10.0,
        *,
        safety: float = DEFAULT_SAFETY,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rate_per_s = float(rate_per_s or 0)
        self.burst = max(1, round(self.rate_per_s)) if self.rate_per_s > 0 else 0
        self.span = self.burst / (self.rate_per_s * safety) if self.rate_per_s > 0 else 0.0
        self.min_gap = MIN_GAP_SHARE / self.rate_per_s if self.rate_per_s > 0 else 0.0
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._recent: deque[float] = deque(maxlen=self.burst or 1)  # the last `burst` grants
        self._paused_until = 0.0  # set after a 429: nobody sends before this
        self.grants = 0

    def acquire(self) -> None:
        """Blocks until this thread may send one request."""
        while True:
            with self._lock:
                now = self._clock()
                ready_at = self._paused_until
                if self.rate_per_s > 0 and self._recent:
                    ready_at = max(ready_at, self._recent[-1] + self.min_gap)
                if self.rate_per_s > 0 and len(self._recent) == self.burst:
                    ready_at = max(ready_at, self._recent[0] + self.span)
                if now >= ready_at:
                    if self.rate_per_s > 0:
                        self._recent.append(now)
                    self.grants += 1
                    return
                wait = ready_at - now
            self._sleep(wait)

    def pause(self, seconds: float) -> None:
        """Holds every thread back for `seconds` from now (the server said 429)."""
        with self._lock:
            self._paused_until = max(self._paused_until, self._clock() + max(0.0, seconds))
