"""The demo portal's headline figures per seed, as of a given sandbox "today" or over a year of todays.

Generates the sandbox's data in process (no server, no sync) and computes the figures from its records
(harness/demo_figures.py, the aging rules of sql/): overdue customers among those owing, share of the open
amount more than 90 days past due, supplier payables past due, and the payment behaviour behind them. The
calibration and the figures it gives: invoicing_sandbox/README.md, "Demo data calibration".

    .venv/bin/python bench/demo_figures.py [--seeds 1,2,3,7] [--scale 2000] [--today 2026-11-24]
    .venv/bin/python bench/demo_figures.py --seeds 1 --year-every 3   # a today every 3 days of 2026
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.demo_figures import DemoFigures, demo_figures  # noqa: E402
from invoicing_sandbox.clock import Clock  # noqa: E402
from invoicing_sandbox.config import SandboxConfig  # noqa: E402
from invoicing_sandbox.domain import Portal  # noqa: E402
from invoicing_sandbox.generator import generate  # noqa: E402


def figures(seed: int, scale: int, today: datetime) -> DemoFigures:
    """The figures of the portal generated with `seed` and `scale` up to `today` (midnight UTC)."""
    portal = Portal(Clock(fixed=today), SandboxConfig())
    generate(portal, seed=seed, scale=scale, end=today)
    return demo_figures(portal, today.date())


def in_targets(result: DemoFigures) -> bool:
    """Issue 17's ranges: 15-35 % overdue customers, <= 10 % of the open amount 90+, <= 25 % payables past due."""
    return (
        0.15 <= result.overdue_customer_share <= 0.35
        and result.over_90_share <= 0.10
        and result.payables_past_due_share <= 0.25
    )


def main() -> int:
    """Prints one line per seed (and per today with --year-every); exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3,7")
    parser.add_argument("--scale", type=int, default=2000)
    parser.add_argument("--today", default="2026-11-24", help="the sandbox's today (YYYY-MM-DD)")
    parser.add_argument("--year-every", type=int, default=0, help="N: every N-th day of --today's year")
    args = parser.parse_args()
    today = datetime.fromisoformat(args.today).replace(tzinfo=UTC)
    for seed in (int(seed) for seed in args.seeds.split(",")):
        if not args.year_every:
            result = figures(seed, args.scale, today)
            print(f"seed {seed} {today.date()}: {'in' if in_targets(result) else 'OUT of'} range; {result.summary()}")
            continue
        start = today.replace(month=1, day=1)
        days = [start + timedelta(days=k) for k in range(0, 365, args.year_every)]
        results = [(day, figures(seed, args.scale, day)) for day in days]
        for day, result in results:
            if not in_targets(result):
                print(f"  seed {seed} {day.date()}: OUT of range; {result.summary()}")
        shares = [result.overdue_customer_share for _, result in results]
        inside = sum(in_targets(result) for _, result in results)
        print(
            f"seed {seed}: {inside}/{len(results)} todays in range; overdue customers {min(shares):.1%}-"
            f"{max(shares):.1%} (mean {sum(shares) / len(shares):.1%}); 90+ at most "
            f"{max(r.over_90_share for _, r in results):.1%}; payables past due at most "
            f"{max(r.payables_past_due_share for _, r in results):.1%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
