"""One rate budget per API host, shared by every process and thread of this machine that calls it.

The service allows 10 requests per second per source IP: two syncs on one machine that paced themselves
alone would together send 20. So the limiter's state (the recent grants and reservations, a pause after a
429, what it learnt of the server's windows and the grid of slots) lives in one small file per API host,
read and written under an exclusive `flock`. Every process then paces on the same grants, exactly as the
threads of one process do, and a process alone paces exactly as it did with a state of its own.

- Key: the base URL's scheme, host and port (credentials and path left out), so every portal served by
  one host shares its budget.
- Where: the user's private state folder (private_state.py: `INVOICING_RATE_BUDGET_DIR`, else
  `$XDG_CACHE_HOME` or `~/.cache`, `/invoicing-warehouse`; mode 700, owner checked), the same for every run of
  the user whether `XDG_RUNTIME_DIR` is set or not (issue 40: a cron run and a login shell's paced on two budgets);
  the file opened without following links, a regular file of this user's only; the lock waited for 10 s at most.
- Several users of one host (one source IP) share one budget when the operator sets
  `INVOICING_RATE_BUDGET_SHARED_DIR` for all of them: a folder owned by root, of a group of theirs, mode 2770
  (private_state.py checks it), holding one file per API host for every user (0660, the folder's group).
- A budget file for the same API host found in the other places a run may pace (the per-user folder, the
  `$XDG_RUNTIME_DIR` folder of earlier versions, the shared folder), touched within `STALE_S`, is named in a
  warning: a run there paces apart from this one.
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
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from invoicing_warehouse.engine.environment.api_settings import RATE_BUDGET_SHARED_DIR
from invoicing_warehouse.engine.environment.reader import current_environment
from pipelines.invoicing.http.private_state import (
    DIR_ENV,
    LOCK_WAIT_S,
    default_state_dir,
    lock_exclusive,
    open_state_file,
    private_state_dir,
    read_bounded,
    runtime_state_dirs,
    shared_state_dir,
    state_dir,
)

log = logging.getLogger(__name__)

__all__ = ["DIR_ENV", "SHARED_DIR_ENV", "STALE_S", "HostBudget", "budget_dir", "host_key"]

SHARED_DIR_ENV = RATE_BUDGET_SHARED_DIR.name

STALE_S = 1200.0
# The state of a host is a few kilobytes: a bigger file is not one this product wrote, and is started afresh.
MAX_STATE_BYTES = 1 << 20
FORMAT = 1
DEFAULT_PORTS = {"http": 80, "https": 443}
_warned: set[Path] = set()  # the other budget files this process has named already (one warning each)


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


def shared_budget_dir() -> Path | None:
    """The folder the users of this host share their budget in (`INVOICING_RATE_BUDGET_SHARED_DIR`), None when
    each user paces on a budget of their own."""
    configured = current_environment().text(RATE_BUDGET_SHARED_DIR)
    return Path(configured) if configured else None


class HostBudget:
    """The shared pacing state of one API host: `hold` gives it under the host's file lock.

    `directory`: this user's folder (default `budget_dir()`); with `shared` (default: whether
    `INVOICING_RATE_BUDGET_SHARED_DIR` is set, which then is the folder), a folder of every user of the host.
    Raises LocalStateError (an InvoicingApiError naming the path) when the folder or the file is not this user's
    own (shared: its group's), and when the lock stays held for `lock_wait_s`."""

    def __init__(self, base_url: str, directory: Path | None = None, *, lock_wait_s: float = LOCK_WAIT_S,
                 shared: bool | None = None) -> None:
        self.key = host_key(base_url)
        shared_folder = shared_budget_dir() if directory is None and shared is None else None
        self.shared = bool(shared) or shared_folder is not None
        name = re.sub(r"[^A-Za-z0-9.-]+", "_", self.key)
        if self.shared:
            self.folder = shared_state_dir(directory if directory is not None else shared_folder or budget_dir())
            self.name = f"invoicing-rate-budget-{name}.json"  # every user's: no uid in it
        else:
            self.folder = private_state_dir(directory if directory is not None else budget_dir())
            self.name = f"invoicing-rate-budget-{os.getuid()}-{name}.json"
        self.path = self.folder / self.name
        self.lock_wait_s = lock_wait_s
        # flock excludes open files, not threads sharing one: threads of this process queue here first
        self._lock = threading.Lock()
        self._warn_of_budgets_elsewhere(f"invoicing-rate-budget-{os.getuid()}-{name}.json",
                                        f"invoicing-rate-budget-{name}.json")

    def _warn_of_budgets_elsewhere(self, private_name: str, shared_name: str) -> None:
        """Names, once per process, a budget file of the same host in another place a run of this host may pace
        on, touched within STALE_S: such a run (another environment, an earlier version) paces apart from this one,
        and together they may exceed the service's limit."""
        places = [(folder, private_name) for folder in (default_state_dir(), *runtime_state_dirs())]
        if (shared_folder := shared_budget_dir()) is not None:
            places.append((shared_folder, shared_name))
        for folder, name in places:
            other = folder / name
            if other == self.path or other in _warned:
                continue
            try:
                status = other.lstat()
            except OSError:
                continue  # none there, or not ours to see
            idle_s = time.time() - status.st_mtime
            if stat.S_ISREG(status.st_mode) and idle_s <= STALE_S:
                _warned.add(other)
                log.warning("rate budget: another budget file for %s is at %s (touched %.0f s ago), while this run "
                            "paces on %s: runs on the two pace apart and together may exceed the service's limit; "
                            "give every run of this host the same %s (or %s), or remove the other file if no run "
                            "uses it", self.key, other, max(idle_s, 0.0), self.path, DIR_ENV, SHARED_DIR_ENV)

    @contextlib.contextmanager
    def hold(self) -> Iterator[dict]:
        """The state (a dict, empty when new or stale) under the exclusive lock; what the caller leaves
        in it is saved when the block ends without an error."""
        with self._lock:
            fd = open_state_file(self.folder, self.name, os.O_RDWR | os.O_CREAT, shared=self.shared)
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
