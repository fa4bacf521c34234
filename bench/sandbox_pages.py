"""How many `GET /documents?limit=100` pages per second the sandbox serves at scale 100,000 (rate limit off).

Starts `invoicing-warehouse sandbox` as its own process (so that its memory is measured apart from the
clients), then two client threads read pages for a fixed time: one walks the documents by `skip` in
`lastUpdate` order, the other reads `updatedSince`/`updatedUntil` windows of the last update times.
Prints pages/s and the server's resident memory. Target: >= 50 pages/s and < 2 GiB on the 2-core machine.

    .venv/bin/python bench/sandbox_pages.py [--scale 100000] [--seconds 15]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def start_sandbox(scale: int, timeout_s: float) -> tuple[subprocess.Popen, dict[str, str]]:
    """The sandbox subprocess and its printed `base_url`, `client_id`, `client_secret`."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "invoicing_warehouse.cli",
            "sandbox",
            "--port",
            "0",
            "--scale",
            str(scale),
            "--rate-limit",
            "0",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    printed: dict[str, str] = {}
    ready = threading.Event()

    def read() -> None:
        for line in process.stdout:
            key, _, value = line.strip().partition(": ")
            printed[key] = value
            if key == "openapi":
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(timeout_s):
        process.kill()
        raise SystemExit(f"the sandbox did not start within {timeout_s} s")
    return process, printed


def rss_mib(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of a process in MiB, from /proc."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (from /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def skip_reader(client: httpx.Client, stop: threading.Event, counts: list[int], total: int) -> None:
    """Pages through every document by skip, in lastUpdate order, round and round."""
    skip = 0
    while not stop.is_set():
        response = client.get(
            "/documents", params={"orderBy": "lastUpdate", "order": 1, "limit": 100, "skip": skip}
        )
        response.raise_for_status()
        counts[0] += 1
        skip = skip + 100 if len(response.json()["data"]) == 100 and skip + 100 < total else 0


def window_reader(client: httpx.Client, stop: threading.Event, counts: list[int], seed: int) -> None:
    """Reads random 30-day lastUpdate windows over the last two years, a few pages each."""
    dice = random.Random(seed)
    end = datetime.now(timezone.utc)
    while not stop.is_set():
        since = end - timedelta(days=dice.uniform(30, 730))
        window = {
            "orderBy": "lastUpdate",
            "order": 1,
            "limit": 100,
            "updatedSince": since.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "updatedUntil": (since + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        for page in range(5):
            if stop.is_set():
                return
            response = client.get("/documents", params=dict(window, skip=page * 100))
            response.raise_for_status()
            counts[1] += 1
            if len(response.json()["data"]) < 100:
                break


def main() -> int:
    """Runs the benchmark and prints its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--start-timeout", type=float, default=900.0)
    args = parser.parse_args()

    started = time.monotonic()
    process, printed = start_sandbox(args.scale, args.start_timeout)
    startup_s = time.monotonic() - started
    try:
        base_url = printed["base_url"]
        grant = httpx.post(
            base_url + "/oauth2/token",
            auth=(printed["client_id"], printed["client_secret"]),
            data={"grant_type": "client_credentials", "scope": "read"},
            timeout=30,
        )
        headers = {
            "Authorization": f"Bearer {grant.json()['access_token']}",
            "User-Agent": "sandbox-bench/0.1",
        }
        with (
            httpx.Client(base_url=base_url, headers=headers, timeout=60) as first,
            httpx.Client(base_url=base_url, headers=headers, timeout=60) as second,
        ):
            total = args.scale
            counts = [0, 0]
            stop = threading.Event()
            threads = [
                threading.Thread(target=skip_reader, args=(first, stop, counts, total)),
                threading.Thread(target=window_reader, args=(second, stop, counts, 1)),
            ]
            began = time.monotonic()
            cpu_before = cpu_seconds(process.pid)
            for thread in threads:
                thread.start()
            time.sleep(args.seconds)
            stop.set()
            for thread in threads:
                thread.join(60)
            elapsed = time.monotonic() - began
            cpu_used = cpu_seconds(process.pid) - cpu_before
        rss, peak = rss_mib(process.pid)
        pages = sum(counts)
        print(f"scale: {args.scale} documents (startup incl. generation: {startup_s:.1f} s)")
        print(
            f"pages: {pages} in {elapsed:.1f} s = {pages / elapsed:.1f} pages/s "
            f"(skip reader {counts[0]}, window reader {counts[1]}; target >= 50)"
        )
        print(
            f"server CPU: {cpu_used:.1f} s = {1000 * cpu_used / max(pages, 1):.1f} ms per page, so about "
            f"{pages / max(cpu_used, 1e-9):.0f} pages per CPU-second "
            f"(load average now: {os.getloadavg()[0]:.1f} "
            f"on {os.cpu_count()} cores; other processes share them)"
        )
        print(f"server RSS: {rss:.0f} MiB now, {peak:.0f} MiB peak (target < 2048)")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
