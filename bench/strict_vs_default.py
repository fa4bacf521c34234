"""Benchmark: a full sync of the same sandbox (same seed and scale) served under the default contract profile
and under the strict one (`invoicing_sandbox/contract.py`), at the real 10 requests/s limit.

For each profile it prints requests, wall time, tokens fetched and 429s, and the requests per endpoint: what a
server that keeps only the public contract (refused window parameters, pages of 50, 20-s tokens, shuffled
ties, hidden deleted customers...) costs the sync. Prints figures; not a test (the exactness on both
profiles is the test suite's). About 2 x 70 s at scale 2000.

    .venv/bin/python bench/strict_vs_default.py --scale 2000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.sync_throughput import start_sandbox
from pipelines.invoicing.load.sync import make_pipeline, run_sync

PROFILES = ("default", "strict")


def full_sync(contract: str, scale: int, latency_ms: float, seed: int):
    """One full sync of a fresh sandbox served under `contract`, into a fresh warehouse: its SyncReport."""
    process, base_url, client_id, client_secret = start_sandbox(scale, latency_ms, seed, contract)
    try:
        with tempfile.TemporaryDirectory() as directory:
            pipeline = make_pipeline(Path(directory) / "warehouse.duckdb")
            return run_sync(pipeline, base_url=base_url, client_id=client_id, client_secret=client_secret,
                            rate_limit_per_s=10)
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(f"=== full sync, scale {args.scale} documents, seed {args.seed}, latency {args.latency_ms:.0f} ms, "
          "limit 10 requests/s", flush=True)
    reports = {}
    for contract in PROFILES:
        started = time.monotonic()
        try:
            reports[contract] = report = full_sync(contract, args.scale, args.latency_ms, args.seed)
        except Exception as error:  # a profile the sync cannot read yet is a figure too  # noqa: BLE001
            print(f"--- {contract}: the sync failed: {type(error).__name__}: {str(error)[:300]}\n", flush=True)
            continue
        print(f"--- {contract} (sandbox start included: {time.monotonic() - started:.0f} s)")
        print("requests per endpoint: " + ", ".join(f"{k} {v}" for k, v in sorted(report.requests.items())))
        for note in report.notes:
            print(f"note: {note}")
        print(flush=True)
    print(f"{'profile':<8} {'requests':>9} {'wall s':>7} {'tokens':>7} {'429s':>5} {'retried':>8}")
    for contract, report in reports.items():
        print(f"{contract:<8} {report.total_requests:>9} {report.wall_s:>7.1f} {report.requests.get('token', 0):>7} "
              f"{report.throttled:>5} {report.retried:>8}")


if __name__ == "__main__":
    main()
