"""Syncs every portal of a `SandboxHost` at once, one `invoicing-warehouse sync` process per portal.

Each process has its own workspace (warehouse file, dlt data dir, working dir: `sync_process.Workspace`)
and the same rate budget directory, so they share one budget per host as syncs on one machine do. Used by
the concurrency test and by `bench/multi_portal.py`.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.sync_process import COMMAND, Workspace

SUMMARY = re.compile(r"requests (\d+) \([\d.]+/s\), 429s (\d+)")


@dataclass
class PortalRun:
    """One portal's sync process: exit code, wall time, its own count of requests and of 429s."""

    name: str
    workspace: Workspace
    returncode: int
    seconds: float
    output: str

    @property
    def requests(self) -> int | None:
        """Requests the sync reported (None when it printed no summary)."""
        found = SUMMARY.search(self.output)
        return int(found.group(1)) if found else None

    @property
    def throttled(self) -> int | None:
        """429 answers the sync reported (None when it printed no summary)."""
        found = SUMMARY.search(self.output)
        return int(found.group(2)) if found else None


def arrival_times(host) -> list[float]:
    """From now on, the time.monotonic() of every request reaching `host` (a SandboxHost), as its one per-IP
    limiter counts it (whichever portal, whatever the answer): the server's own record of the pace."""
    arrivals: list[float] = []
    hit = host.limiter.hit

    def counted(client_ip: str):  # the limiter's own decision, passed through
        arrivals.append(time.monotonic())
        return hit(client_ip)

    host.limiter.hit = counted
    return arrivals


def sync_all(host, root: Path, budget_dir: Path, *args: str, timeout: float = 600,
             extra_env: dict[str, str] | None = None,
             env_of: Callable[[str], dict[str, str]] | None = None,
             prefix_of: Callable[[str], list[str]] | None = None) -> dict[str, PortalRun]:
    """Starts one sync process per portal of `host` at once and waits for all (each bounded by `timeout`;
    one still running then is killed and reported with returncode -9). `env_of(name)`: more environment for
    that portal's process (its own folders, say); `prefix_of(name)`: words before its command
    (`ip netns exec NS`)."""
    started: dict[str, tuple[subprocess.Popen, Workspace, float]] = {}
    try:
        for name, portal in host.portals.items():
            workspace = Workspace(root / name)
            env = workspace.env(portal.base_url, portal.client_id, portal.client_secret,
                                INVOICING_RATE_BUDGET_DIR=str(budget_dir), **(extra_env or {}))
            env.update(env_of(name) if env_of else {})
            process = subprocess.Popen(
                [*(prefix_of(name) if prefix_of else []), *COMMAND, "sync", "--warehouse", str(workspace.warehouse),
                 *args],
                env=env, cwd=workspace.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
            started[name] = (process, workspace, time.monotonic())
        runs: dict[str, PortalRun] = {}

        def wait(name: str) -> None:  # one waiter per process: each wall time ends when its process does
            process, workspace, begun = started[name]
            try:
                output, _ = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                output, _ = process.communicate()
            runs[name] = PortalRun(name, workspace, process.returncode, time.monotonic() - begun, output)

        waiters = [threading.Thread(target=wait, args=(name,), daemon=True) for name in started]
        for waiter in waiters:
            waiter.start()
        for waiter in waiters:
            waiter.join(timeout + 30)
        return runs
    finally:
        for process, _, _ in started.values():
            if process.poll() is None:
                process.kill()
                process.wait(10)
