"""One rate budget per API host, shared by every process and thread of this machine that calls it.

The service allows 10 requests per second per source IP: two syncs on one machine that paced themselves
alone would together send 20. So the limiter's state (the recent grants and reservations, a pause after a
429, what it learnt of the server's windows and the grid of slots) lives in one small file per API host,
read and written under an exclusive `flock`. Every process then paces on the same grants, exactly as the
threads of one process do, and a process alone paces exactly as it did with a state of its own.

- Key: the base URL's scheme, host and port (credentials and path left out), so every portal served by
  one host shares its budget.
- Where: the user's private state folder (private_state.py: `INVOICING_RATE_BUDGET_DIR`, else
  `$XDG_RUNTIME_DIR/invoicing-warehouse`, else `~/.cache/invoicing-warehouse`; mode 700, owner checked), the file
  opened without following links, a regular file of this user's only; the lock waited for 10 s at most.
- What is read is checked (ratelimit.py `_load`): a pause or a time further ahead than a server may ask
  (`MAX_PAUSE_S`) is cut or the state dropped, so a forged or damaged file cannot freeze the processes.
- Times are `time.monotonic()`: CLOCK_MONOTONIC is one clock for the whole machine on Linux, so grant
  times written by one process compare with another's.
- A crashed process cannot keep the budget locked: the kernel releases its `flock` with its file
  descriptor. What it reserved and never used costs at most the slots it had reserved (about a second).
- A state left untouched for `STALE_S` (20 minutes) is forgotten: the server may have restarted its windows,
  and two clocks drift apart. Within it, a run of the 15-minute schedule starts on the window phase the
  previous run learnt, at the full rate from its first request instead of learning again at 9/s (an
  answer that contradicts the phase, or a 429, drops it as always).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from pipelines.invoicing.http.private_state import (
    DIR_ENV,
    LOCK_WAIT_S,
    lock_exclusive,
    open_state_file,
    private_state_dir,
    read_bounded,
    state_dir,
)

log = logging.getLogger(__name__)

__all__ = ["DIR_ENV", "STALE_S", "HostBudget", "budget_dir", "host_key"]

STALE_S = 1200.0
# The state of a host is a few kilobytes: a bigger file is not one this product wrote, and is started afresh.
MAX_STATE_BYTES = 1 << 20
FORMAT = 1
DEFAULT_PORTS = {"http": 80, "https": 443}


def host_key(base_url: str) -> str:
    """`scheme://host:port` of `base_url`: what one per-IP budget covers (no credentials, no path)."""
    parts = urlsplit(base_url)
    if not parts.scheme or not parts.hostname:
        raise ValueError(f"not an absolute URL: {parts.scheme or '?'}://{parts.hostname or '?'}")
    port = parts.port or DEFAULT_PORTS.get(parts.scheme, 0)
    return f"{parts.scheme}://{parts.hostname.lower()}:{port}"


def budget_dir() -> Path:
    """The folder of the hosts' state files and the kept tokens (private_state.py `state_dir`)."""
    return state_dir()


class HostBudget:
    """The shared pacing state of one API host: `hold` gives it under the host's file lock.

    Raises LocalStateError (an InvoicingApiError naming the path) when the folder or the file is not this user's
    own, and when the lock stays held for `lock_wait_s`."""

    def __init__(self, base_url: str, directory: Path | None = None, *, lock_wait_s: float = LOCK_WAIT_S) -> None:
        self.key = host_key(base_url)
        self.folder = private_state_dir(directory if directory is not None else budget_dir())
        name = re.sub(r"[^A-Za-z0-9.-]+", "_", self.key)
        self.name = f"invoicing-rate-budget-{os.getuid()}-{name}.json"
        self.path = self.folder / self.name
        self.lock_wait_s = lock_wait_s
        # flock excludes open files, not threads sharing one: threads of this process queue here first
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def hold(self) -> Iterator[dict]:
        """The state (a dict, empty when new or stale) under the exclusive lock; what the caller leaves
        in it is saved when the block ends without an error."""
        with self._lock:
            fd = open_state_file(self.folder, self.name, os.O_RDWR | os.O_CREAT)
            try:
                lock_exclusive(fd, self.path, self.lock_wait_s)
                # read the clock only once the lock is ours: a time taken before waiting for it could be
                # older than the last writer's, and its state would look written in the future
                now = time.monotonic()
                state = self._read(fd, now)
                yield state
                data = json.dumps({"format": FORMAT, "host": self.key, "touched": now, "state": state},
                                  separators=(",", ":")).encode()
                os.pwrite(fd, data, 0)
                os.ftruncate(fd, len(data))
            finally:
                os.close(fd)  # releases the lock

    def _read(self, fd: int, now: float) -> dict:
        raw = read_bounded(fd, MAX_STATE_BYTES)
        if raw is None:
            log.warning("rate budget: %s is larger than a budget's state, starting afresh", self.path)
            return {}
        if not raw:
            return {}
        try:
            saved = json.loads(raw)
        except ValueError:
            log.warning("rate budget: unreadable state in %s, starting afresh", self.path)
            return {}
        if not isinstance(saved, dict) or saved.get("format") != FORMAT or saved.get("host") != self.key:
            return {}
        touched = saved.get("touched", 0.0)
        if not isinstance(touched, float | int) or not 0 <= now - touched <= STALE_S:
            return {}  # long unused, or written before this machine booted (the monotonic clock restarted)
        state = saved.get("state")
        return state if isinstance(state, dict) else {}
