"""Benchmark: N portals of one host syncing at once (one process each) behind the host's one rate budget.

One `SandboxHost` serves N seeded portals on one port behind one per-IP limiter of 10 requests/s (the
service's limit); N `invoicing-warehouse sync` processes run at once, sharing the budget through its state
file. Prints the aggregate requests/s, 429s, each portal's wall time, fairness (max/min wall time) and the
full-sync time of all portals against the ideal: total minimum requests / 10 per second. Prints figures;
not a test.

    .venv/bin/python bench/multi_portal.py                      # 20 portals x 2,000 documents
    .venv/bin/python bench/multi_portal.py --portals 4 --scale 500
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.multi_portal import sync_all  # noqa: E402
from sandbox.config import SandboxConfig  # noqa: E402
from sandbox.host import SandboxHost  # noqa: E402

PAGE = 100
LISTS = ("customers", "items", "documents", "transactions", "transaction_usages", "suppliers", "supplier_documents")
RATE = 10


def minimum_requests(portal) -> int:
    """Token + /me + /portal + /webhooks + per list every full page and the short one that ends it, + one
    per supplier document for its status history (as bench/sync_throughput.py counts)."""
    counts = {name: len(portal.snapshot(name)) for name in LISTS}
    return 4 + sum(n // PAGE + 1 for n in counts.values()) + counts["supplier_documents"]


def steady_rate(samples: list[tuple[float, int]], total: int) -> float:
    """Requests/s between the moments 5 % and 95 % of `total` had been served."""
    low = next((s for s in samples if s[1] >= 0.05 * total), None)
    high = next((s for s in samples if s[1] >= 0.95 * total), None)
    if low is None or high is None or high[0] <= low[0]:
        return float("nan")
    return (high[1] - low[1]) / (high[0] - low[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--portals", type=int, default=20)
    parser.add_argument("--scale", type=int, default=2000, help="about this many documents per portal")
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    configs = {f"p{i}": SandboxConfig(seed=args.seed + i, scale=args.scale, latency_ms=args.latency_ms,
                                      client_id=f"client-p{i}", client_secret=f"secret-p{i}")
               for i in range(1, args.portals + 1)}
    print(f"=== {args.portals} portals x {args.scale} documents on one host, {RATE} requests/s per IP, "
          f"latency {args.latency_ms:.0f} ms", flush=True)
    started = time.monotonic()
    with SandboxHost(configs=configs, rate_limit_per_s=RATE) as host, tempfile.TemporaryDirectory() as scratch:
        print(f"sandbox host generated and serving in {time.monotonic() - started:.0f} s", flush=True)
        minimum = {name: minimum_requests(server.portal) for name, server in host.portals.items()}
        began = time.monotonic()
        samples: list[tuple[float, int]] = []
        done = threading.Event()

        def sample() -> None:  # (seconds since the start, requests served so far), every 0.5 s
            while not done.wait(0.5):
                samples.append((time.monotonic() - began, host.requests()))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        runs = sync_all(host, Path(scratch), Path(scratch) / "budget", timeout=7200)
        wall = time.monotonic() - began
        done.set()
        sampler.join(5)
        served, refused = host.requests(), host.rate_limited()
    failed = [name for name, run in runs.items() if run.returncode != 0]
    for name, run in runs.items():
        print(f"  {name:>4}: wall {run.seconds:6.1f} s, requests {run.requests}, minimum {minimum[name]}, "
              f"429s {run.throttled}, exit {run.returncode}")
    walls = [run.seconds for run in runs.values()]
    ideal = sum(minimum.values()) / RATE
    print(f"requests served {served} (minimum {sum(minimum.values())}), 429s answered {refused}")
    print(f"aggregate {served / wall:.2f} requests/s over {wall:.1f} s (all portals, from the first start "
          f"to the last exit)")
    print(f"steady rate {steady_rate(samples, served):.2f} requests/s (from the 5 % to the 95 % of the "
          f"requests served: the processes' start-up and final loads left out)")
    print(f"per-portal wall: min {min(walls):.1f} s, max {max(walls):.1f} s, fairness max/min "
          f"{max(walls) / min(walls):.2f}")
    print(f"full sync of all portals {wall:.1f} s against the ideal {ideal:.1f} s "
          f"({100 * (wall / ideal - 1):+.1f}%)")
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        for name in failed:
            print(runs[name].output[-2000:])


if __name__ == "__main__":
    main()
