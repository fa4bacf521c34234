"""The long form of the reliability suite (issue 7): chaos runs over many seeds, SIGKILL crash runs,
and the bad-input table, printing the figures.

    .venv/bin/python bench/chaos.py --seeds 50                 # everything, 50 chaos seeds
    .venv/bin/python bench/chaos.py --seeds 3 --crash-seeds 1  # a quick look
    nohup .venv/bin/python bench/chaos.py --seeds 50 > bench/out/chaos.txt 2>&1 &

Prints: runs, records compared, mismatches (must be 0), availability (the runs that would exit 0 and
published through the gate, of all and of the seeds whose warehouse ended exact: the target is all of them),
faults injected by kind, 429s received;
kills and mismatches; the bad-input table. Exit code 0 only when every mismatch count is 0 and
every bad-input case passes (a benchmark prints figures; the exit code is for scripts).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # harness/ holds the scenarios shared with the test suite

from harness.bad_input_cases import BadInputSuite, format_table
from harness.chaos_run import ChaosSettings, format_outcomes, run_chaos_seed
from harness.crash_run import CrashSettings, format_crash_outcomes, run_crash_seed


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50, help="chaos seeds (default 50)")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--scale", type=int, default=300, help="sandbox scale (about this many documents)")
    parser.add_argument("--incremental-syncs", type=int, default=3, help="syncs while mutating, per seed")
    parser.add_argument("--mutations-per-s", type=float, default=10.0)
    parser.add_argument("--rate-limit", type=int, default=10,
                        help="the sandbox's requests/s and the syncs' pacing (default 10, the service's; 0: none)")
    parser.add_argument(
        "--revoke-after",
        type=int,
        default=40,
        help="each token is revoked after this many requests (default 40: a few per seed)",
    )
    parser.add_argument("--crash-seeds", type=int, default=5, help="seeds of SIGKILL runs (0: none)")
    parser.add_argument("--kills", type=int, default=6, help="SIGKILLs per crash seed")
    parser.add_argument("--no-bad-input", action="store_true", help="skip the bad-input table")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="a fresh folder for the warehouses is made in it (default: in the temp dir)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Runs the long form and prints its figures; exit 1 when anything mismatched or failed."""
    args = parse_args(argv)
    # Always a fresh folder: a warehouse left by an earlier run would start from its old state.
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="chaos-", dir=args.workdir))
    os.environ["DLT_DATA_DIR"] = str(workdir / "dlt")
    for name in (
        "SOURCES__INVOICING__BASE_URL",
        "SOURCES__INVOICING__CLIENT_ID",
        "SOURCES__INVOICING__CLIENT_SECRET",
    ):
        os.environ.pop(name, None)
    print(f"workdir {workdir}", flush=True)
    healthy = True

    settings = ChaosSettings(
        scale=args.scale,
        incremental_syncs=args.incremental_syncs,
        mutations_per_s=args.mutations_per_s,
        revoke_token_after_requests=args.revoke_after,
        rate_limit_per_s=args.rate_limit,
    )
    outcomes = []
    started = time.monotonic()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        outcome = run_chaos_seed(seed, workdir / f"chaos-{seed}", settings)
        outcomes.append(outcome)
        print(
            f"seed {seed}: {outcome.syncs} syncs, "
            f"{outcome.raw.records_compared + outcome.marts.records_compared}"
            f" records compared, {outcome.mismatches} mismatches, {len(outcome.failed_syncs)} failed syncs, "
            f"{outcome.published_runs}/{outcome.syncs} runs exited 0 and published, "
            f"faults {dict(outcome.faults)}, {outcome.seconds:.0f}s",
            flush=True,
        )
    if outcomes:
        print(
            f"\n== chaos ({time.monotonic() - started:.0f} s) ==\n{format_outcomes(outcomes)}\n", flush=True
        )
        healthy &= all(o.mismatches == 0 and not o.failed_syncs for o in outcomes)

    crash_outcomes = []
    started = time.monotonic()
    for seed in range(args.first_seed, args.first_seed + args.crash_seeds):
        crash_settings = CrashSettings(scale=args.scale, kills=args.kills, kills_per_trial=2)
        crash_outcomes.append(
            run_crash_seed(seed, workdir / f"crash-{seed}", crash_settings, random.Random(seed))
        )
        print(f"crash seed {seed}: {crash_outcomes[-1].mismatches} mismatches", flush=True)
    if crash_outcomes:
        print(
            f"\n== crash safety ({time.monotonic() - started:.0f} s) ==\n"
            f"{format_crash_outcomes(crash_outcomes)}\n",
            flush=True,
        )
        healthy &= all(o.mismatches == 0 for o in crash_outcomes)

    if not args.no_bad_input:
        from invoicing_sandbox.config import SandboxConfig
        from invoicing_sandbox.server import SandboxServer

        secret = "S3CRET-bench-badinput-91d2"
        with SandboxServer(SandboxConfig(seed=23, scale=60, rate_limit_per_s=0, client_secret=secret)) as sb:
            results = BadInputSuite(sb, workdir / "bad-input", secret).run_all()
        print(f"== bad input ==\n{format_table(results)}\n", flush=True)
        healthy &= all(r.passed for r in results)

    print("RESULT: " + ("all exact" if healthy else "FAILURES (see above)"), flush=True)
    return 0 if healthy else 1


if __name__ == "__main__":
    raise SystemExit(main())
