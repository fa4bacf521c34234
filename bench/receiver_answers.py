"""Benchmark: how fast `invoicing-warehouse webhooks serve` answers 200 after its durable append.

Starts the receiver as a real process, POSTs N deliveries (distinct records) one at a time, then N more
from C threads at once, and prints the answer time p50/p95/max and deliveries/s of each phase, then checks
that the spool holds exactly one hint per record delivered (the figure is worthless if a hint was lost).
Prints figures; not a test. About 10 s with the defaults.

    .venv/bin/python bench/receiver_answers.py --deliveries 500 --threads 8
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx

from harness.receiver_process import ReceiverProcess
from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_path


def _envelope(n: int) -> dict:
    return {"id": f"delivery-{n:06d}", "portalId": "bench",
            "event": {"eventId": "document.updated", "data": {"id": f"doc-{n:06d}"}}}


def _post(client: httpx.Client, url: str, n: int) -> float:
    started = time.perf_counter()
    answer = client.post(url, json=_envelope(n))
    elapsed = time.perf_counter() - started
    if answer.status_code != 200:
        raise SystemExit(f"delivery {n}: HTTP {answer.status_code} {answer.text}")
    return elapsed


def _report(phase: str, times: list[float], wall_s: float) -> None:
    ordered = sorted(times)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    print(f"{phase:<22} {len(times):>5} deliveries  p50 {statistics.median(ordered) * 1000:6.1f} ms  "
          f"p95 {p95 * 1000:6.1f} ms  max {ordered[-1] * 1000:6.1f} ms  {len(times) / wall_s:7.1f}/s")


def main() -> int:
    """Runs both phases and prints their figures; exit 1 when the spool does not hold every hint."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=500, help="deliveries per phase (default 500)")
    parser.add_argument("--threads", type=int, default=8, help="senders of the concurrent phase (default 8)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        warehouse = Path(folder) / "warehouse.duckdb"
        with ReceiverProcess(warehouse, secrets.token_urlsafe(24)) as receiver:
            url = receiver.url()
            with httpx.Client(timeout=30.0, trust_env=False) as client:
                started = time.perf_counter()
                sequential = [_post(client, url, n) for n in range(args.deliveries)]
                _report("one at a time", sequential, time.perf_counter() - started)
            clients = [httpx.Client(timeout=30.0, trust_env=False) for _ in range(args.threads)]
            try:
                with ThreadPoolExecutor(args.threads) as pool:
                    started = time.perf_counter()
                    numbers = range(args.deliveries, 2 * args.deliveries)
                    concurrent = list(pool.map(lambda n: _post(clients[n % args.threads], url, n), numbers))
                    _report(f"{args.threads} senders at once", concurrent, time.perf_counter() - started)
            finally:
                for client in clients:
                    client.close()
        with HintSpool(spool_path(warehouse)) as spool:
            held = spool.pending_count()
    print(f"spool: {held} hints for {2 * args.deliveries} records delivered")
    return 0 if held == 2 * args.deliveries else 1


if __name__ == "__main__":
    raise SystemExit(main())
