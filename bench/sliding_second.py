"""Benchmark: N processes sharing no file and one PostgreSQL rate budget, against a sandbox that counts per source
address in fixed windows or over any one-second span; prints the 429s and the tightest 11 arrivals.

Each process is a product `InvoicingClient` (harness/egress_race.py) GETting `/me` R times; the sandbox's limiter
records every arrival. "min 11-span" is the shortest time between an arrival and the 10th after it: below 1 s a
sliding-second server refuses the 11th. Prints figures; not a test.

    .venv/bin/python bench/sliding_second.py --processes 4 --requests 40 --mode sliding
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.egress_race import prepare, private_env, race, start, stop  # noqa: E402
from harness.postgres_cluster import PostgresCluster  # noqa: E402
from invoicing_sandbox.host import SandboxHost  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--requests", type=int, default=40, help="GET /me per process (its token request aside)")
    parser.add_argument("--mode", choices=("fixed", "sliding"), default="sliding")
    args = parser.parse_args()
    with PostgresCluster() as cluster, tempfile.TemporaryDirectory() as scratch:
        cluster.create_database("rate_budget")
        url = f"postgresql://{cluster.user}@127.0.0.1:{cluster.port}/rate_budget"
        with SandboxHost(portals=args.processes, scale=20, rate_limit_mode=args.mode) as host:
            arrivals: list[float] = []
            hit = host.limiter.hit

            def counted(client_ip: str):
                arrivals.append(time.monotonic())
                return hit(client_ip)

            host.limiter.hit = counted  # type: ignore[method-assign]
            racers = [start("race", private_env(Path(scratch) / name, url,
                                                INVOICING_RATE_BUDGET_PASSWORD=cluster.password))
                      for name in host.portals]
            try:
                for racer, portal in zip(racers, host.portals.values(), strict=True):
                    prepare(racer, portal.base_url, portal.client_id, portal.client_secret, args.requests)
                results = race(racers)
            finally:
                stop(racers)
            refused = host.rate_limited()
    span = arrivals[-1] - arrivals[0]
    tightest = min(arrivals[i + 10] - arrivals[i] for i in range(len(arrivals) - 10))
    print(f"{args.processes} processes x {args.requests} requests, {args.mode} windows: 429s answered {refused} "
          f"(per process {[r.throttled for r in results]}); {len(arrivals)} arrivals in {span:.2f} s = "
          f"{(len(arrivals) - 1) / span:.2f}/s; min 11-span {tightest:.3f} s")


if __name__ == "__main__":
    main()
