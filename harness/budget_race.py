"""Processes that hammer one host's shared rate budget (the tests of `pipelines/invoicing/http/host_budget.py`).

Each worker runs in its own process (multiprocessing, spawn), paces GETs to one URL through a `RateLimiter`
on the host's shared state, and reports what it was granted and what the server answered. The server's
answer counts whatever the path: the sandbox's edge counts every request against the per-IP limit before
anything else (an unauthenticated GET is answered 401, with the `RateLimit-*` headers).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx

from pipelines.invoicing.http.host_budget import HostBudget
from pipelines.invoicing.http.ratelimit import RateLimiter


def hammer(url: str, budget_dir: str, requests: int, start_at: float, results) -> None:
    """Waits until `start_at` (time.monotonic, one clock for the machine), then sends `requests` paced
    GETs to `url`; puts (pid, [(granted at, status, turns given up before it), ...], locks) on `results`."""
    limiter = RateLimiter(10, shared=HostBudget(url, Path(budget_dir)))
    answers: list[tuple[float, int, int]] = []
    time.sleep(max(0.0, start_at - time.monotonic()))
    with httpx.Client(timeout=30) as client:
        for _ in range(requests):
            given_up = limiter.turns_given_up
            grant = limiter.acquire()
            response = client.get(url)
            answers.append((grant.at, response.status_code, limiter.turns_given_up - given_up))
            if response.status_code == 429:
                limiter.pause(1.0)
            else:
                limiter.observe(grant, limit=_int(response, "ratelimit-limit"),
                                remaining=_int(response, "ratelimit-remaining"))
    results.put((os.getpid(), answers, limiter.locks))


def reserve_and_die(url: str, budget_dir: str, reserved) -> None:
    """Takes a grant (a reservation in the shared state), then holds the budget's file lock and signals
    `reserved`; its parent then kills it while it holds the lock."""
    budget = HostBudget(url, Path(budget_dir))
    RateLimiter(10, shared=budget).acquire()
    with budget.hold():
        reserved.set()
        time.sleep(120)  # bounded: the test kills it long before


def _int(response: httpx.Response, name: str) -> int | None:
    value = response.headers.get(name)
    return int(value) if value is not None and value.isdigit() else None
