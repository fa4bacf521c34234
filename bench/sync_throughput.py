"""Benchmark: a full sync and a quiet incremental sync of a large sandbox at the real 10 requests/s limit.

Starts `invoicing-warehouse sandbox` in a subprocess (so that the server and the client do not share one
interpreter), syncs it into a fresh DuckDB file with the real pacing, and prints: requests made versus
the minimum the data needs, requests/s over the whole run, 429s, wall time split into extract, normalize
and load, and the requests of an incremental run with nothing changed. Prints figures; not a test.

    .venv/bin/python bench/sync_throughput.py --scale 100000 --latency-ms 100 400
    .venv/bin/python bench/sync_throughput.py --scale 100000 --without-events   # 4 min per latency
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipelines.invoicing.load.sync import make_pipeline, run_sync  # noqa: E402
from pipelines.invoicing.settings import EVENTS, RESOURCE_NAMES  # noqa: E402

PAGE = 100
LISTS = ("customers", "items", "documents", "transactions", "transaction_usages", "suppliers", "supplier_documents")


def start_sandbox(
    scale: int, latency_ms: float, seed: int, contract: str = "default"
) -> tuple[subprocess.Popen, str, str, str]:
    """Runs the sandbox command (serving `contract`'s profile) until it prints its base URL and credentials."""
    command = [sys.executable, "-m", "invoicing_warehouse.cli", "sandbox", "--port", "0", "--seed", str(seed),
               "--scale", str(scale), "--rate-limit", "10", "--latency-ms", str(latency_ms),
               "--contract", contract]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    values: dict[str, str] = {}
    deadline = time.monotonic() + 1800
    while len(values) < 3 and time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("the sandbox ended before serving")
        key, _, value = line.partition(": ")
        if key in ("base_url", "client_id", "client_secret"):
            values[key] = value.strip()
    return process, values["base_url"], values["client_id"], values["client_secret"]


def minimum_requests(report, with_events: bool) -> int:
    """Token + /me + /portal + /webhooks + per list every full page and the short one that ends it,
    + one per supplier document for its status history (when read)."""
    pages = sum(report.records_read.get(name, 0) // PAGE + 1 for name in LISTS)
    return 4 + pages + (report.records_read.get("supplier_documents", 0) if with_events else 0)


def describe(title: str, report, minimum: int | None) -> None:
    total = report.total_requests
    print(f"--- {title}")
    if minimum is not None:
        print(f"requests made {total}, minimum the data needs {minimum} (+{100 * (total / minimum - 1):.1f}%)")
        print(f"ideal wall time at 10 req/s {minimum / 10:.1f} s; actual {report.wall_s:.1f} s "
              f"({100 * (report.wall_s / (minimum / 10) - 1):+.1f}%)")
    print(f"requests/s over the run {total / report.wall_s:.2f}; 429s {report.throttled}; retried {report.retried}")
    print("limiter: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.limiter.items()))
    print(f"wall {report.wall_s:.1f} s: extract {report.extract_s:.1f} s, normalize {report.normalize_s:.1f} s, "
          f"load {report.load_s:.1f} s, in {report.chunks} load(s)")
    print("requests per endpoint: " + ", ".join(f"{k} {v}" for k, v in sorted(report.requests.items())))
    print("rows loaded: " + ", ".join(f"{k} {v}" for k, v in sorted(report.rows.items())), flush=True)


class Ticker:
    """Prints the total requests and the rate every 30 s of a run (the progress callback is called every 2 s)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.last = 0.0

    def __call__(self, snapshot: dict) -> None:
        now = time.monotonic() - self.started
        if now - self.last >= 30:
            self.last = now
            total = sum(figures["requests"] for figures in snapshot.values())
            busy = ", ".join(name for name, figures in snapshot.items() if not figures["done"])
            print(f"  {now:6.0f} s: {total} requests ({total / now:.2f}/s) still reading: {busy}", flush=True)


def bench(scale: int, latency_ms: float, seed: int, with_events: bool) -> None:
    print(f"=== scale {scale} documents, latency {latency_ms:.0f} ms, limit 10 requests/s"
          f"{'' if with_events else ', without supplier_document_events'}", flush=True)
    resources = [name for name in RESOURCE_NAMES if with_events or name != EVENTS.name]
    started = time.monotonic()
    process, base_url, client_id, client_secret = start_sandbox(scale, latency_ms, seed)
    print(f"sandbox generated and serving in {time.monotonic() - started:.0f} s", flush=True)
    try:
        with tempfile.TemporaryDirectory() as directory:
            pipeline = make_pipeline(Path(directory) / "warehouse.duckdb")
            credentials = {"base_url": base_url, "client_id": client_id, "client_secret": client_secret}
            full = run_sync(pipeline, resources=resources, rate_limit_per_s=10, progress=Ticker(), **credentials)
            describe("full sync", full, minimum_requests(full, with_events))
            time.sleep(6)  # past the windows' lag: the next run sees a quiet service
            quiet = run_sync(pipeline, resources=resources, rate_limit_per_s=10, **credentials)
            describe("incremental sync, nothing changed", quiet, None)
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[100.0, 400.0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--without-events", action="store_true",
                        help="leave out the status histories (one request per supplier document)")
    args = parser.parse_args()
    for latency in args.latency_ms:
        bench(args.scale, latency, args.seed, not args.without_events)


if __name__ == "__main__":
    main()
