"""The small helpers the tests and the harness share, one copy each (test-review.md 3.4): move a sandbox's
clock past the windows' lag, poll a condition for a bounded time, find a free port on 127.0.0.1."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any


def quiet(sandbox: Any) -> None:
    """Lets the sandbox clock pass the windows' lag, as if nobody had written for a few seconds: writes made
    before it fall inside the next sync's frozen window (no test sleeps for it)."""
    from pipelines.invoicing.settings import WINDOW_LAG_S  # here: the port and polling helpers import no dlt

    sandbox.clock.advance(timedelta(seconds=WINDOW_LAG_S + 1))


def wait_until(condition: Callable[[], object], timeout_s: float = 30.0, every_s: float = 0.02) -> bool:
    """Polls `condition()` until it is true or `timeout_s` passed (bounded); returns its last value as a bool."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every_s)
    return bool(condition())


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now (bound, then released): for a server to start on, or a
    closed port to be refused by."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
