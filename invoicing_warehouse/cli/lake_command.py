"""`invoicing-warehouse lake maintain [--older-than-days N] [--keep-month-ends M] [--dry-run]`: the DuckLake's upkeep
(invoicing_warehouse/engine/lake_maintenance.py): snapshots older than the horizon expire, except the last published
one, any a reader may be on and the month-end ones; the files only they held are removed; small files are merged.

The lake is the one of the environment (INVOICING_WAREHOUSE_ENGINE=ducklake, invoicing_warehouse/engine/target.py).
Exit codes: 0 done, 1 the lake cannot be reached or is busy past the lock's bound (nothing changed), 2 bad
usage (not a lake, a horizon that is not a number of days).
"""

from __future__ import annotations

import argparse
import sys

from invoicing_warehouse.engine.connection import WarehouseUnavailable
from invoicing_warehouse.engine.lake_maintenance import (
    HORIZON_ENV,
    MONTH_ENDS_ENV,
    horizon_from_env,
    maintain,
    month_ends_from_env,
    parse_horizon_days,
)
from invoicing_warehouse.engine.target import WarehouseConfigError, target_from_env


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `lake` group and its one command, `maintain`."""
    commands = parser.add_subparsers(dest="lake_command", required=True, metavar="ACTION")
    maintain_parser = commands.add_parser("maintain", help="expire old snapshots, remove old files, merge small ones")
    maintain_parser.add_argument("--older-than-days", default=None, metavar="DAYS",
                                 help=f"the horizon: younger snapshots stay for time travel (default "
                                      f"{HORIZON_ENV}, else 7)")
    maintain_parser.add_argument("--keep-month-ends", default=None, metavar="MONTHS",
                                 help=f"keep the last published snapshot of each of the MONTHS months before this "
                                      f"one, for month-end reports (default {MONTH_ENDS_ENV}, else 12; 0: none)")
    maintain_parser.add_argument("--dry-run", action="store_true", help="say what would expire; change nothing")


def run(args: argparse.Namespace) -> int:
    """Runs `lake maintain`; prints one line of what it did."""
    try:
        horizon = (parse_horizon_days(args.older_than_days, "--older-than-days")
                   if args.older_than_days is not None else horizon_from_env())
        month_ends = (_months(args.keep_month_ends) if args.keep_month_ends is not None else month_ends_from_env())
        target = target_from_env()
        if not target.is_lake:
            raise ValueError("the warehouse is a DuckDB file: `lake maintain` is for the DuckLake engine "
                             "(INVOICING_WAREHOUSE_ENGINE=ducklake and its catalog, README)")
    except (ValueError, WarehouseConfigError) as error:
        print(f"lake maintain: {error}", file=sys.stderr)
        return 2
    try:
        report = maintain(target, horizon=horizon, dry_run=args.dry_run, month_ends=month_ends)
    except WarehouseUnavailable as error:  # messages are free of the catalog's password (connection.scrub)
        print(f"lake maintain: {error}", file=sys.stderr)
        return 1
    print(f"{target.describe()}: {report.line()}")
    return 0


def _months(raw: str) -> int:
    if not raw.strip().isdigit() or int(raw) > 1200:
        raise ValueError(f"--keep-month-ends must be a whole number of months >= 0, not {raw!r}")
    return int(raw)
