"""Benchmark: N portals of one host syncing at once (one process each) behind the host's one rate budget.

One `SandboxHost` serves N seeded portals on one port behind one per-IP limiter of 10 requests/s (the
service's limit); N `invoicing-warehouse sync` processes run at once, sharing the budget through its state
file. Prints the aggregate requests/s, 429s, each portal's wall time, fairness (max/min wall time) and the
full-sync time of all portals against the ideal: total minimum requests / 10 per second. Prints figures;
not a test.

`--budget postgres` (issue 33): the budget lives in a PostgreSQL database started for the run
(database_budget.py) and every process has its own HOME, XDG_RUNTIME_DIR and INVOICING_RATE_BUDGET_DIR: they
share no file, only the database. `--namespaces 2` (root, with --budget postgres): the portals are split over two
network namespaces with two addresses, as two hosts with their own egress IPs (harness/network_namespaces.py);
the sandbox counts per source address, so the ideal is then twice the rate. `--rate-limit-mode sliding`: the
sandbox counts any one-second span instead of fixed windows.

    .venv/bin/python bench/multi_portal.py                      # 20 portals x 2,000 documents
    .venv/bin/python bench/multi_portal.py --portals 4 --scale 500
    .venv/bin/python bench/multi_portal.py --budget postgres --scale 500
    .venv/bin/python bench/multi_portal.py --budget postgres --namespaces 2 --scale 500
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.egress_race import own_folders  # noqa: E402
from harness.multi_portal import sync_all  # noqa: E402
from harness.network_namespaces import TwoHosts  # noqa: E402
from harness.postgres_cluster import PostgresCluster  # noqa: E402
from invoicing_sandbox.config import SandboxConfig  # noqa: E402
from invoicing_sandbox.host import SandboxHost  # noqa: E402

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


@contextlib.contextmanager
def forwarder(netns: str, port: int, target: str):
    """harness/loopback_forwarder.py in `netns`: its 127.0.0.1:`port` leads to `target`:`port`."""
    process = subprocess.Popen(["ip", "netns", "exec", netns, sys.executable, "-m", "harness.loopback_forwarder",
                                str(port), target, str(port)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "listening"
        yield process
    finally:
        process.kill()
        process.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--portals", type=int, default=20)
    parser.add_argument("--scale", type=int, default=2000, help="about this many documents per portal")
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--budget", choices=("file", "postgres"), default="file",
                        help="share the budget through the machine's file (default) or a PostgreSQL database")
    parser.add_argument("--namespaces", type=int, choices=(1, 2), default=1,
                        help="2: the portals' processes in two network namespaces (two egress IPs; needs root)")
    parser.add_argument("--rate-limit-mode", choices=("fixed", "sliding"), default="fixed")
    args = parser.parse_args()
    if args.namespaces == 2 and args.budget != "postgres":
        parser.error("--namespaces 2 needs --budget postgres (processes in two namespaces share no budget file)")
    with contextlib.ExitStack() as stack:
        run(args, stack)


def run(args: argparse.Namespace, stack: contextlib.ExitStack) -> None:
    """One benchmark run; `stack` stops what it starts (the database, the namespaces, the sandbox)."""
    scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
    env_of, prefix_of, bind, egresses = None, None, "127.0.0.1", 1
    if args.budget == "postgres":
        cluster = stack.enter_context(PostgresCluster())
        cluster.create_database("rate_budget")
        # over the Unix socket: a process in another network namespace reaches it too (the same file system)
        url = f"postgresql://{cluster.user}@/rate_budget?host={cluster.root}&port={cluster.port}"

        def env_of(name: str) -> dict[str, str]:
            return {**own_folders(scratch / "own" / name), "INVOICING_RATE_BUDGET_URL": url}
    if args.namespaces == 2:
        hosts = stack.enter_context(TwoHosts())
        bind, egresses = hosts.server_address, 2
        half = (args.portals + 1) // 2

        def host_of(name: str) -> int:
            return 0 if int(name[1:]) <= half else 1

        def prefix_of(name: str) -> list[str]:
            return ["ip", "netns", "exec", hosts.names[host_of(name)]]

        def env_of(name: str) -> dict[str, str]:
            # A sync sends credentials over plain http:// only to loopback: each namespace reaches the sandbox
            # through a forwarder on its own 127.0.0.1, so the sandbox still sees the namespace's address; the
            # route towards 127.0.0.1 cannot tell the egress, so it is named, as an operator behind a NAT does.
            return {**own_folders(scratch / "own" / name), "INVOICING_RATE_BUDGET_URL": url,
                    "INVOICING_EGRESS_IP": hosts.addresses[host_of(name)],
                    "SOURCES__INVOICING__BASE_URL": host.portals[name].base_url.replace(bind, "127.0.0.1")}
    configs = {f"p{i}": SandboxConfig(seed=args.seed + i, scale=args.scale, latency_ms=args.latency_ms,
                                      client_id=f"client-p{i}", client_secret=f"secret-p{i}")
               for i in range(1, args.portals + 1)}
    print(f"=== {args.portals} portals x {args.scale} documents on one host, {RATE} requests/s per IP "
          f"({args.rate_limit_mode} windows), latency {args.latency_ms:.0f} ms, budget {args.budget}, "
          f"{egresses} egress IP(s)", flush=True)
    started = time.monotonic()
    with SandboxHost(configs=configs, rate_limit_per_s=RATE, rate_limit_mode=args.rate_limit_mode,
                     host=bind) as host:
        print(f"sandbox host generated and serving in {time.monotonic() - started:.0f} s", flush=True)
        if args.namespaces == 2:
            for netns in hosts.names:
                stack.enter_context(forwarder(netns, host.port, bind))
        minimum = {name: minimum_requests(server.portal) for name, server in host.portals.items()}
        began = time.monotonic()
        samples: list[tuple[float, int]] = []
        done = threading.Event()

        def sample() -> None:  # (seconds since the start, requests served so far), every 0.5 s
            while not done.wait(0.5):
                samples.append((time.monotonic() - began, host.requests()))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        runs = sync_all(host, scratch, scratch / "budget", timeout=7200, env_of=env_of, prefix_of=prefix_of)
        wall = time.monotonic() - began
        done.set()
        sampler.join(5)
        served, refused = host.requests(), host.rate_limited()
    failed = [name for name, run in runs.items() if run.returncode != 0]
    for name, run in runs.items():
        print(f"  {name:>4}: wall {run.seconds:6.1f} s, requests {run.requests}, minimum {minimum[name]}, "
              f"429s {run.throttled}, exit {run.returncode}")
    walls = [run.seconds for run in runs.values()]
    ideal = sum(minimum.values()) / (RATE * egresses)
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
