"""Small incremental syncs (issue 15, point 4): the fixed cost of a run, and 1 % changed against the generic source.

    .venv/bin/python bench/incremental_fixed_costs.py [--scale 10000] [--runs 5] [--latency-ms 100]
                                                     [--rate-limit 10] [--skip-compare] [--with-events]

Two parts, in one run:

1. **No-change process**: a sandbox (seed 1, `--scale` documents, `--latency-ms` on every answer,
   `--rate-limit` requests/s, 10 by default, the sync pacing itself at it), one full `invoicing-warehouse sync`
   process into a fresh warehouse, then `--runs` sync processes with nothing changed upstream, each timed from
   start to exit (harness/sync_process.py: the command as a user runs it, its own dlt data dir, bytecode cached
   as an installed package has it). Prints every run's wall time, the requests the server counted, and the
   median.
2. **1 % changed**: `bench/compare_generic.py --scenarios incremental --repeats 1` at the same scale and
   latency, both contenders on one sandbox (a full sync each, 1 % of the records changed, an incremental
   each), side by side. `--without-events` unless `--with-events` (one request per supplier document
   in each full sync, as in the issue's 100,000-document figure).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the project's packages must import
    sys.path.insert(0, str(ROOT))

from bench import compare_generic  # noqa: E402
from harness.sync_process import Workspace, run_sync_command  # noqa: E402
from invoicing_sandbox.config import SandboxConfig  # noqa: E402
from invoicing_sandbox.server import SandboxServer  # noqa: E402

FULL_SYNC_TIMEOUT_S = 3600  # 100,000 documents take about 4 minutes at 10 requests/s


def no_change_runs(args: argparse.Namespace) -> list[tuple[float, int, str]]:
    """(wall s, requests counted by the server, snapshot line) of each no-change sync process."""
    config = SandboxConfig(seed=args.seed, scale=args.scale, latency_ms=args.latency_ms,
                           rate_limit_per_s=args.rate_limit, max_page_size=100)
    # the command paces at the sandbox's limit, as it does at a portal's `rate_limit` (0: neither limits)
    pacing = ("--rate-limit", str(args.rate_limit))
    results = []
    with SandboxServer(config) as sb, tempfile.TemporaryDirectory(prefix="incremental-fixed-") as root:
        workspace = Workspace(Path(root))
        env = workspace.env(sb.base_url, sb.client_id, sb.client_secret, RUNTIME__LOG_LEVEL="ERROR")
        started = time.monotonic()
        full = run_sync_command(workspace, env, *pacing, timeout=FULL_SYNC_TIMEOUT_S)
        if full.returncode != 0:
            raise SystemExit(f"the full sync failed:\n{full.output}")
        print(f"# full sync process: {time.monotonic() - started:.1f} s, {sb.stats['requests']} requests", flush=True)
        for run in range(1, args.runs + 1):
            before = sb.stats["requests"]
            result = run_sync_command(workspace, env, *pacing, timeout=600)
            if result.returncode != 0:
                raise SystemExit(f"no-change run {run} failed:\n{result.output}")
            snapshot = next((line for line in result.stdout.splitlines() if line.startswith("readers'")), "")
            results.append((result.seconds, sb.stats["requests"] - before, snapshot))
            print(f"no-change process {run}: {result.seconds:.2f} s, {results[-1][1]} requests, {snapshot}",
                  flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    """Prints both parts; returns 0 (a benchmark reports, it does not judge)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=10_000, help="about this many documents")
    parser.add_argument("--runs", type=int, default=5, help="no-change sync processes timed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--rate-limit", type=int, default=10,
                        help="requests/s the sandbox allows and the sync paces at (0: no limit, for a smoke run)")
    parser.add_argument("--skip-compare", action="store_true", help="only the no-change process part")
    parser.add_argument("--with-events", action="store_true",
                        help="the comparison reads supplier_document_events too (long full syncs)")
    args = parser.parse_args(argv)
    print(f"# {compare_generic.machine()} | load {os.getloadavg()[0]:.2f} | scale {args.scale}, "
          f"latency {args.latency_ms:g} ms", flush=True)
    runs = no_change_runs(args)
    times = [seconds for seconds, _, _ in runs]
    print(f"no-change sync process: median {median(times):.2f} s over {len(times)} runs "
          f"(min {min(times):.2f}, max {max(times):.2f}), {median(r for _, r, _ in runs):.0f} requests each",
          flush=True)
    if not args.skip_compare:
        compare = ["--scale", str(args.scale), "--repeats", "1", "--scenarios", "incremental",
                   "--seed", str(args.seed), "--latency-ms", str(args.latency_ms),
                   "--rate-limit", str(args.rate_limit)]
        compare_generic.main(compare + ([] if args.with_events else ["--without-events"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
