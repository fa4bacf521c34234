"""`invoicing-warehouse lake maintain [--older-than-days N] [--dry-run]`: the DuckLake's upkeep
(warehouse_engine/lake_maintenance.py): snapshots older than the horizon expire, except the last published one
and any a reader may be on; the files only they held are removed; small files are merged.

The lake is the one of the environment (INVOICING_WAREHOUSE_ENGINE=ducklake, warehouse_engine/target.py).
Exit codes: 0 done, 1 the lake cannot be reached or is busy past the lock's bound (nothing changed), 2 bad
usage (not a lake, a horizon that is not a number of days).
"""

from __future__ import annotations

import argparse
import sys

from warehouse_engine.connection import WarehouseUnavailable
from warehouse_engine.lake_maintenance import HORIZON_ENV, horizon_from_env, maintain, parse_horizon_days
from warehouse_engine.target import WarehouseConfigError, target_from_env


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `lake` group and its one command, `maintain`."""
    commands = parser.add_subparsers(dest="lake_command", required=True, metavar="ACTION")
    maintain_parser = commands.add_parser("maintain", help="expire old snapshots, remove old files, merge small ones")
    maintain_parser.add_argument("--older-than-days", default=None, metavar="DAYS",
                                 help=f"the horizon: younger snapshots stay for time travel (default "
                                      f"{HORIZON_ENV}, else 7)")
    maintain_parser.add_argument("--dry-run", action="store_true", help="say what would expire; change nothing")


def run(args: argparse.Namespace) -> int:
    """Runs `lake maintain`; prints one line of what it did."""
    try:
        horizon = (parse_horizon_days(args.older_than_days, "--older-than-days")
                   if args.older_than_days is not None else horizon_from_env())
        target = target_from_env()
        if not target.is_lake:
            raise ValueError("the warehouse is a DuckDB file: `lake maintain` is for the DuckLake engine "
                             "(INVOICING_WAREHOUSE_ENGINE=ducklake and its catalog, README)")
    except (ValueError, WarehouseConfigError) as error:
        print(f"lake maintain: {error}", file=sys.stderr)
        return 2
    try:
        report = maintain(target, horizon=horizon, dry_run=args.dry_run)
    except WarehouseUnavailable as error:  # messages are free of the catalog's password (connection.scrub)
        print(f"lake maintain: {error}", file=sys.stderr)
        return 1
    print(f"{target.describe()}: {report.line()}")
    return 0
