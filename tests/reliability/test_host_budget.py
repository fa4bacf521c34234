"""Issue 15, point 2: one rate budget per host, shared by real processes (multiprocessing, spawn).

Four processes hammer one `SandboxHost` (one per-IP limiter of 10/s) through their own `RateLimiter`s on
the host's shared state file. The truths are the server's own: its 429 count, and the grant times read
against its fixed one-second windows (whole seconds of CLOCK_MONOTONIC, one clock for every process).
"""

from __future__ import annotations

import json
import math
import multiprocessing
import time
from collections import Counter

import pytest

from harness.budget_race import hammer, reserve_and_die
from harness.multi_portal import arrival_times
from invoicing_sandbox.host import SandboxHost
from pipelines.invoicing.http.host_budget import HostBudget, host_key
from pipelines.invoicing.http.ratelimit import RateLimiter

# in the serial set (scripts/test): the grants' spacing and the budget's throughput are measured in real time
pytestmark = pytest.mark.serial

PROCESSES = 4
REQUESTS = 50
SPAWN = multiprocessing.get_context("spawn")


def race(host: SandboxHost, budget_dir, requests: int = REQUESTS) -> list[tuple[float, int, int, int]]:
    """Every portal's process hammers the host at once; returns (granted at, pid, status, turns given up before
    it) in grant order."""
    results = SPAWN.Queue()
    start_at = time.monotonic() + 3  # the processes' imports take a while
    workers = [SPAWN.Process(target=hammer, args=(portal.base_url + "/me", str(budget_dir), requests,
                                                   start_at, results))
               for portal in host.portals.values()]
    for worker in workers:
        worker.start()
    try:
        reports = [results.get(timeout=120) for _ in workers]
    finally:
        for worker in workers:
            worker.join(30)
            if worker.is_alive():
                worker.kill()
    return sorted((at, pid, status, given_up) for pid, answers, _ in reports for at, status, given_up in answers)


def test_processes_on_one_budget_never_exceed_the_limit_and_share_it_fairly(tmp_path):
    with SandboxHost(portals=PROCESSES, scale=20) as host:
        arrivals = arrival_times(host)
        grants = race(host, tmp_path)
        refused = host.rate_limited()
        served = host.requests()
    assert refused == 0
    assert served == len(grants) == len(arrivals) == PROCESSES * REQUESTS
    assert Counter(status for _, _, status, _ in grants) == {401: PROCESSES * REQUESTS}  # no token: 401, counted
    windows = Counter(math.floor(at) for at, *_ in grants)  # the sandbox's windows: whole seconds
    assert max(windows.values()) <= 10
    # ... and the budget is used, not only never exceeded: 200 requests at 10 per window fill 20 windows, so
    # the server sees the first to the last in about 19-20 s; a budget starving its processes (the only other
    # bound is the 120-s queue timeout, about 1.7 requests/s) takes longer than that plus 3 s of slack
    span = arrivals[-1] - arrivals[0]
    all_given_up = sum(given_up for *_, given_up in grants)
    print(f"\n{len(arrivals)} requests reached the server in {span:.2f} s: {(len(arrivals) - 1) / span:.2f}/s; "
          f"turns given up: {all_given_up}")
    # Turns given up are the limiter's own count and loosen the fairness bound below, so they are capped: a
    # limiter that gave up turns all the time would otherwise make that bound impossible to fail (test-review-2
    # F4). 2 % of the grants: a few late wake-ups on a busy machine, not a habit.
    assert all_given_up <= len(grants) // 50, f"{all_given_up} turns given up in {len(grants)} grants"
    assert span <= len(arrivals) / 10 + 3, f"{len(arrivals)} requests took {span:.2f} s: the budget is underused"
    # While every process wants grants, they take turns: between the last first grant and the first last
    # grant, no process has more than two grants more than another, but for the turns given up. A limiter gives
    # up a reserved turn rather than risk a 429 (woken or saved too late on a busy machine) and reserves again,
    # behind those who asked meanwhile: each such turn can move one grant from one process to another.
    firsts, lasts = {}, {}
    for at, pid, *_ in grants:
        firsts.setdefault(pid, at)
        lasts[pid] = at
    between = [(pid, given_up) for at, pid, _, given_up in grants if max(firsts.values()) <= at <= min(lasts.values())]
    together = Counter(pid for pid, _ in between)
    given_up = sum(turns for _, turns in between)
    assert len(together) == PROCESSES and sum(together.values()) >= 2 * PROCESSES
    assert max(together.values()) - min(together.values()) <= 2 + 2 * given_up, (together, given_up)


def test_a_process_killed_while_holding_the_budget_blocks_nobody(tmp_path):
    with SandboxHost(portals=1, scale=20) as host:
        url = host.portals["p1"].base_url + "/me"
        reserved = SPAWN.Event()
        holder = SPAWN.Process(target=reserve_and_die, args=(url, str(tmp_path), reserved))
        holder.start()
        try:
            assert reserved.wait(60)
        finally:
            holder.kill()  # SIGKILL while it holds the lock and a reservation
            holder.join(30)
        assert holder.exitcode == -9
        grants = race(host, tmp_path, requests=12)
        assert len(grants) == 12 and host.rate_limited() == 0


def test_the_budget_is_keyed_on_scheme_host_and_port_and_its_state_is_shared(tmp_path):
    assert host_key("https://api.example.fr/api/v2") == "https://api.example.fr:443"
    assert host_key("http://user:pw@127.0.0.1:8765/portals/p1/api/v2") == "http://127.0.0.1:8765"
    one = HostBudget("http://127.0.0.1:8765/portals/p1/api/v2", tmp_path)
    other = HostBudget("http://127.0.0.1:8765/portals/p2/api/v2", tmp_path)
    assert one.path == other.path and "pw" not in str(one.path)
    first, second = RateLimiter(10, shared=one), RateLimiter(10, shared=other)
    grants = [limiter.acquire() for _ in range(3) for limiter in (first, second)]
    assert [g.seq for g in grants] == [1, 2, 3, 4, 5, 6]  # one sequence: the two limiters pace as one
    # paced as one: each reservation the minimum gap (0.75 / rate) after the one before, whichever limiter
    # made it (two limiters pacing alone would take 2 gaps); 10 ms for the first grant's own bookkeeping
    assert grants[-1].at - grants[0].at >= 5 * 0.075 - 0.01


def test_an_unreadable_or_stale_state_is_started_afresh(tmp_path):
    budget = HostBudget("http://127.0.0.1:8765/api/v2", tmp_path)
    budget.path.write_text('{"format": 1, "host": "http://127.0.0.1:8765", "touch')  # a write cut short
    limiter = RateLimiter(10, shared=budget)
    assert limiter.acquire().seq == 1
    saved = json.loads(budget.path.read_text())
    assert saved["host"] == "http://127.0.0.1:8765" and saved["state"]["seq"] == 1
    saved["touched"] -= 3600  # an hour unused: the server may have moved its windows since
    saved["state"]["grid"] = [0.5, 0.1, 10]
    budget.path.write_text(json.dumps(saved))
    with budget.hold() as state:
        assert state == {}


def test_the_next_scheduled_run_starts_on_the_window_phase_the_last_one_learnt(tmp_path):
    budget = HostBudget("http://127.0.0.1:8765/api/v2", tmp_path)
    RateLimiter(10, shared=budget).acquire()
    saved = json.loads(budget.path.read_text())
    saved["state"]["grid"] = [0.5, 0.08, 10]  # as a locked limiter leaves it
    for idle_s, locked in ((15 * 60, True), (3600, False)):  # the next run of the schedule; an hour later
        saved["touched"] = time.monotonic() - idle_s
        budget.path.write_text(json.dumps(saved))
        limiter = RateLimiter(10, shared=budget)
        limiter.acquire()
        assert limiter.locked is locked  # locked: it paces on the grid from its first request
